"""Episode returns and lengths: ``EpisodeStats``, an ``EpisodeTracker`` to aggregate them,
and the ``RecordEpisodeStatistics`` wrapper that reports them.

The tracker knows nothing about envs (``add(stats)`` is all it needs), so one tracker can be
shared by several wrappers and by the vector version, ``VecRecordEpisodeStatistics``.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from typing import Any

import numpy as np

from sekai.core import ActType, Env, ObsType, ResetResult, StepResult
from sekai.wrappers.base import Wrapper


@dataclasses.dataclass(frozen=True)
class EpisodeStats:
    """One finished episode: undiscounted return, number of steps, wall-clock seconds.

    ``extra`` carries context added by whoever recorded it (e.g. ``{"env_index": 3}``).
    ``stats["r"]``, ``stats["l"]`` and ``stats["t"]`` read the same values under the keys of
    gymnasium's and SB3's ``info["episode"]`` dict, so code written for them keeps working.
    """

    return_: float
    length: int
    time: float
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __getitem__(self, key: str) -> float:
        if key == "r":
            return self.return_
        if key == "l":
            return self.length
        if key == "t":
            return self.time
        raise KeyError(
            f"EpisodeStats has no key {key!r}: it answers gymnasium's keys 'r', 'l' and 't'; "
            "otherwise read its attributes (stats.return_, stats.length, stats.time, stats.extra)"
        )


class EpisodeTracker:
    """Collects ``EpisodeStats`` and summarises the last ``deque_size`` of them."""

    def __init__(self, deque_size: int = 100) -> None:
        if deque_size < 1:
            raise ValueError(f"deque_size must be at least 1, got {deque_size}")
        self.episodes: deque[EpisodeStats] = deque(maxlen=deque_size)
        self.num_episodes = 0

    def add(self, stats: EpisodeStats) -> None:
        """Record one finished episode."""
        self.episodes.append(stats)
        self.num_episodes += 1

    def summary(self) -> dict[str, float]:
        """``num_episodes`` (all recorded), and mean/std/min/max of return and length over the
        last ``deque_size`` episodes (NaN before the first episode)."""
        summary: dict[str, float] = {"num_episodes": self.num_episodes}
        for name, values in (
            ("return", [e.return_ for e in self.episodes]),
            ("length", [e.length for e in self.episodes]),
        ):
            array = np.asarray(values, np.float64)
            empty = array.size == 0
            summary[f"{name}_mean"] = np.nan if empty else float(array.mean())
            summary[f"{name}_std"] = np.nan if empty else float(array.std())
            summary[f"{name}_min"] = np.nan if empty else float(array.min())
            summary[f"{name}_max"] = np.nan if empty else float(array.max())
        return summary

    def __repr__(self) -> str:
        return f"EpisodeTracker(num_episodes={self.num_episodes})"


def make_tracker(tracker: EpisodeTracker | None, deque_size: int) -> EpisodeTracker:
    """``tracker``, or a new one keeping ``deque_size`` episodes; TypeError for anything else
    (which would otherwise fail only when the first episode ends)."""
    if tracker is None:
        return EpisodeTracker(deque_size)
    if not isinstance(tracker, EpisodeTracker):
        raise TypeError(f"tracker must be an EpisodeTracker or None, got {type(tracker).__name__}")
    return tracker


class RecordEpisodeStatistics(Wrapper[ObsType, ActType]):
    """Put ``info["episode"]``, an ``EpisodeStats``, on the step that ends an episode.

    Every finished episode also goes to ``tracker`` (a new ``EpisodeTracker`` keeping
    ``deque_size`` episodes unless one is passed in, e.g. to share it between envs).
    """

    def __init__(
        self,
        env: Env[ObsType, ActType],
        tracker: EpisodeTracker | None = None,
        deque_size: int = 100,
    ) -> None:
        super().__init__(env)
        self.tracker = make_tracker(tracker, deque_size)
        self._start_episode()

    def _start_episode(self) -> None:
        self.episode_return = 0.0
        self.episode_length = 0
        self._episode_start = time.perf_counter()

    def after_reset(self, result: ResetResult) -> ResetResult:
        self._start_episode()
        return result

    def after_step(self, result: StepResult) -> StepResult:
        self.episode_return += float(result.reward)
        self.episode_length += 1
        if not result.done:
            return result
        stats = EpisodeStats(
            self.episode_return, self.episode_length, time.perf_counter() - self._episode_start
        )
        self.tracker.add(stats)
        self._start_episode()  # an AutoReset below may have started the next episode already
        return result._replace(info={**result.info, "episode": stats})
