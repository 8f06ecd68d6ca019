"""Episode samplers: where in a price history each episode starts.

An env with a history asks its sampler for the first *decision bar* of each episode: an index
``t`` in ``[first, last]``, where ``first`` is the earliest bar with a full lookback window behind
it and ``last`` the latest bar with a whole episode ahead of it. ``reset(options={"start": t})``
overrides the sampler for one episode.

Vector envs give every sub-env ``sampler.spawn()``: a sampler without per-env state returns
itself (one shared object, so a later change such as a curriculum widening the range reaches every
sub-env); one with per-env state (``SequentialStart``) returns a fresh copy.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

__all__ = ["DateRange", "EpisodeSampler", "RandomStart", "SequentialStart", "resolve_sampler"]


class EpisodeSampler:
    """Base class: chooses the first decision bar of each episode.

    Subclasses implement ``sample``. Override ``spawn`` to return a fresh copy when the
    sampler keeps per-env state.
    """

    def sample(
        self, rng: np.random.Generator, first: int, last: int, episode_length: int, size: int
    ) -> np.ndarray:
        """Return ``size`` decision bars, each in ``[first, last]``, as an int64 array."""
        raise NotImplementedError

    def spawn(self) -> EpisodeSampler:
        """The sampler one sub-env uses: this one, shared, unless it keeps per-env state."""
        return self

    def for_history(self, dates: np.ndarray | None, length: int) -> EpisodeSampler:
        """The sampler an env of ``length`` bars (dated ``dates``, or None) uses: this one,
        unless it needs the history (``DateRange`` takes its dates from it)."""
        return self


class RandomStart(EpisodeSampler):
    """Every valid start equally likely, drawn from the env's generator (the default)."""

    def sample(
        self, rng: np.random.Generator, first: int, last: int, episode_length: int, size: int
    ) -> np.ndarray:
        return rng.integers(first, last + 1, size=size, dtype=np.int64)

    def __repr__(self) -> str:
        return "RandomStart()"


class SequentialStart(EpisodeSampler):
    """Consecutive windows: episode k starts ``start + k * stride`` bars after the first valid
    decision bar, wrapping round to the beginning past the last one.

    ``stride`` defaults to the episode length, so consecutive episodes tile the history.
    ``spawn()`` returns a fresh copy, so sub-envs never advance each other (or the instance
    passed in).
    """

    def __init__(self, start: int = 0, stride: int | None = None) -> None:
        if not _is_int(start) or start < 0:
            raise ValueError(f"start must be a non-negative int, got {start!r}")
        if stride is not None and (not _is_int(stride) or stride < 1):
            raise ValueError(f"stride must be a positive int or None, got {stride!r}")
        self.start = int(start)
        self.stride = None if stride is None else int(stride)
        self.episodes = 0

    def sample(
        self, rng: np.random.Generator, first: int, last: int, episode_length: int, size: int
    ) -> np.ndarray:
        stride = episode_length if self.stride is None else self.stride
        k = self.episodes + np.arange(size, dtype=np.int64)
        self.episodes += size
        return first + (self.start + k * stride) % (last - first + 1)

    def spawn(self) -> SequentialStart:
        return copy.copy(self)

    def __repr__(self) -> str:
        return f"SequentialStart(start={self.start}, stride={self.stride})"


class DateRange(EpisodeSampler):
    """Only episodes lying wholly in ``[start, end)``: a train/test split by date.

    The dates are the env's own, from its ``data=`` (``DateRange(start="2016-01-01")``), or
    ``dates``, one timestamp per bar of ``prices`` (e.g. ``Bars.dates``), strictly increasing;
    the env checks they are as many as its bars. ``start``/``end`` are anything
    ``numpy.datetime64`` accepts (``"2015-01-01"``), None for open-ended. Every bar an episode
    trades on falls in the range; its lookback window may reach earlier (past prices only).
    ``inner`` picks among the allowed starts (default ``RandomStart``)::

        train = DateRange(end="2016-01-01")
        test = DateRange(start="2016-01-01", inner=SequentialStart())
    """

    def __init__(
        self,
        dates: Any = None,
        start: Any = None,
        end: Any = None,
        inner: EpisodeSampler | None = None,
    ) -> None:
        self.dates = None if dates is None else _check_dates(dates)
        self.start = None if start is None else np.datetime64(start, "ns")
        self.end = None if end is None else np.datetime64(end, "ns")
        self.inner = RandomStart() if inner is None else inner
        if not isinstance(self.inner, EpisodeSampler):
            raise TypeError(f"inner must be an EpisodeSampler, got {inner!r}")

    def for_history(self, dates: np.ndarray | None, length: int) -> DateRange:
        if self.dates is None:
            if dates is None:
                raise ValueError(
                    "DateRange() without dates takes them from the env's data, but this env "
                    "has no dates: pass data= with a date column, or DateRange(dates, ...)"
                )
            bound = copy.copy(self)
            bound.dates = dates
            return bound
        if len(self.dates) != length:
            raise ValueError(
                f"DateRange has {len(self.dates)} dates, but the env's history has {length} "
                "bars: give one date per bar (or none, with data= that has dates)"
            )
        return self

    def sample(
        self, rng: np.random.Generator, first: int, last: int, episode_length: int, size: int
    ) -> np.ndarray:
        if self.dates is None:
            raise ValueError("this DateRange has no dates yet: give it to an env, or dates=")
        low, high = first, last
        if self.start is not None:
            low = max(low, int(np.searchsorted(self.dates, self.start, side="left")))
        if self.end is not None:  # the episode's last bar, t + episode_length, is before end
            high = min(high, int(np.searchsorted(self.dates, self.end, side="left")) - 1)
            high -= episode_length
        if low > high:
            raise ValueError(
                f"no episode of {episode_length} steps fits between {self.start} and "
                f"{self.end} in this history (decision bars {first}..{last})"
            )
        return self.inner.sample(rng, low, high, episode_length, size)

    def spawn(self) -> DateRange:
        inner = self.inner.spawn()
        if inner is self.inner:
            return self
        spawned = copy.copy(self)
        spawned.inner = inner
        return spawned

    def __repr__(self) -> str:
        return f"DateRange(start={self.start}, end={self.end}, inner={self.inner!r})"


def resolve_sampler(sampler: EpisodeSampler | str | None) -> EpisodeSampler:
    """The sampler an env uses for ``sampler=``: None or ``"random"`` -> ``RandomStart``,
    ``"sequential"`` -> a new ``SequentialStart``, or an ``EpisodeSampler``."""
    if sampler is None or sampler == "random":
        return RandomStart()
    if sampler == "sequential":
        return SequentialStart()
    if isinstance(sampler, EpisodeSampler):
        return sampler
    raise ValueError(
        f'sampler must be None, "random", "sequential" or an EpisodeSampler, got {sampler!r}'
    )


def _check_dates(dates: Any) -> np.ndarray:
    """``dates`` as a read-only datetime64[ns] array, at least 2, strictly increasing."""
    try:
        array = np.array(dates, dtype="datetime64[ns]")
    except (TypeError, ValueError):
        raise ValueError(f"dates must be a 1-D sequence of timestamps, got {dates!r}") from None
    if array.ndim != 1 or len(array) < 2:
        raise ValueError(f"dates must be a 1-D sequence of at least 2 timestamps, got {dates!r}")
    bad = np.flatnonzero(~(np.diff(array) > np.timedelta64(0, "ns")))
    if len(bad):
        raise ValueError(
            f"dates must be strictly increasing, but date {bad[0] + 1} ({array[bad[0] + 1]}) "
            f"does not come after date {bad[0]} ({array[bad[0]]})"
        )
    array.flags.writeable = False
    return array


def _is_int(value: object) -> bool:
    return isinstance(value, int | np.integer) and not isinstance(value, bool)
