"""Price histories: checked once, shared read-only by every env (never copied per sub-env)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.finance.samplers import EpisodeSampler

__all__ = ["EpisodeStarts", "dated", "info_dates", "log_returns", "price_history"]


def price_history(prices: Any, *, ndim: int, min_length: int, name: str = "prices") -> np.ndarray:
    """``prices`` (an array, list or pandas Series/DataFrame) as a read-only float64 array of
    ``ndim`` dimensions with at least ``min_length`` bars, every price finite and positive."""
    array = np.array(prices, dtype=np.float64)  # a copy: the caller may change theirs later
    if array.ndim != ndim:
        shape = "(T,)" if ndim == 1 else "(T, n_assets)"
        raise ValueError(f"{name} must be an array of shape {shape}, got shape {array.shape}")
    if array.size == 0:
        raise ValueError(
            f"{name} is empty: lookback + episode_length + 1 = {min_length} bars are needed"
        )
    bad = np.flatnonzero(~(np.isfinite(array) & (array > 0)).reshape(len(array), -1).all(axis=1))
    if len(bad):
        raise ValueError(
            f"{name} must be finite and positive, but bar {bad[0]} is {array[bad[0]].tolist()!r}"
        )
    if len(array) < min_length:
        raise ValueError(
            f"{name} has {len(array)} bars, too short: lookback + episode_length + 1 = "
            f"{min_length} bars are needed"
        )
    array.flags.writeable = False
    return array


def log_returns(history: np.ndarray) -> np.ndarray:
    """Read-only ``r[t] = log(p[t] / p[t-1])``, with ``r[0] = 0``, same shape as ``history``."""
    returns = np.zeros_like(history)
    returns[1:] = np.diff(np.log(history), axis=0)
    returns.flags.writeable = False
    return returns


def info_dates(params: Any) -> np.ndarray | None:
    """The history's dates as datetime64[us], whose items are ``datetime.datetime``."""
    return None if params._dates is None else params._dates.astype("datetime64[us]")


def dated(dates: np.ndarray | None, infos: dict[str, Any]) -> dict[str, Any]:
    """``infos`` with ``date`` after ``timestamp`` when the history has dates."""
    if dates is None:
        return infos
    timestamp = infos.pop("timestamp")
    return {"timestamp": timestamp, "date": dates[timestamp], **infos}


class EpisodeStarts:
    """The first decision bar of each env's next episode: ``options["start"]`` when given, else
    the env's sampler, which is ``params.sampler.spawn()`` per env (re-spawned when the
    ``sampler`` parameter is replaced). One batched draw when the sampler is shared."""

    def __init__(self, params: Any, num_envs: int) -> None:
        self.params = params
        self.num_envs = num_envs
        self._source: EpisodeSampler | None = None
        self._samplers: list[EpisodeSampler] = []
        self._shared = True

    def draw(
        self,
        indices: np.ndarray,
        options: list[dict[str, Any] | None],
        rng: np.random.Generator,
        first: int,
        last: int,
        episode_length: int,
    ) -> np.ndarray:
        sampler = self.params.sampler
        if sampler is not self._source:
            self._source = sampler
            self._samplers = [sampler.spawn() for _ in range(self.num_envs)]
            self._shared = all(spawned is sampler for spawned in self._samplers)
        if self._shared:
            starts = sampler.sample(rng, first, last, episode_length, len(indices))
        else:
            starts = np.concatenate(
                [self._samplers[i].sample(rng, first, last, episode_length, 1) for i in indices]
            )
        starts = np.asarray(starts, dtype=np.int64)
        if starts.shape != (len(indices),) or ((starts < first) | (starts > last)).any():
            raise ValueError(
                f"sampler {sampler!r} returned {starts!r}; expected {len(indices)} decision "
                f"bars in [{first}, {last}]"
            )
        for position, option in enumerate(options):
            if option is not None:
                start = check_options(option, first, last)
                if start is not None:
                    starts[position] = start
        return starts


def check_options(option: dict[str, Any], first: int, last: int) -> int | None:
    """The ``start`` of one reset's options (None if absent); ValueError for anything else."""
    unknown = set(option) - {"start"}
    if unknown:
        raise ValueError(f"unknown reset options {sorted(unknown)}; the only option is 'start'")
    if "start" not in option:
        return None
    start = option["start"]
    if isinstance(start, bool) or not isinstance(start, int | np.integer):
        raise ValueError(f"options['start'] must be an int bar index, got {start!r}")
    if not first <= start <= last:
        raise ValueError(
            f"options['start'] = {start} is outside [{first}, {last}]: the first decision bar "
            "needs a full lookback window before it and a whole episode after it"
        )
    return int(start)
