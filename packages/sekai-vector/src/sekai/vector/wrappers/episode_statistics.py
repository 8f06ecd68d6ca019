"""VecRecordEpisodeStatistics: episode return, length and time of every sub-env."""

from __future__ import annotations

import time

import numpy as np

from sekai.vector.base import OptionsArg, SeedArg, VecEnv
from sekai.vector.results import VecResetResult, VecStepResult
from sekai.vector.wrappers.base import VecWrapper, _finished_infos, _replace_infos
from sekai.wrappers import EpisodeStats, EpisodeTracker, make_tracker


class VecRecordEpisodeStatistics(VecWrapper):
    """Put ``infos[i]["episode"]``, an ``EpisodeStats`` with
    ``extra={"env_index": i}``, on the step where sub-env i finishes an episode.

    Every finished episode also goes to ``tracker`` (a new ``EpisodeTracker``
    keeping ``deque_size`` episodes unless one is passed in, e.g. shared with other wrappers).
    Wrap it innermost, below normalisation wrappers, so it records the raw rewards.
    """

    def __init__(
        self, venv: VecEnv, tracker: EpisodeTracker | None = None, deque_size: int = 100
    ) -> None:
        super().__init__(venv)
        self.tracker = make_tracker(tracker, deque_size)
        n = self.num_envs
        self.episode_returns = np.zeros(n, dtype=np.float64)
        self.episode_lengths = np.zeros(n, dtype=np.int64)
        self._episode_starts = np.full(n, time.perf_counter())
        # autoreset="next_step": sub-envs whose next step is the reset, not part of an episode
        self._resetting = np.zeros(n, dtype=bool)

    def before_reset(self, seed: SeedArg, options: OptionsArg) -> None:
        self.episode_returns[:] = 0.0
        self.episode_lengths[:] = 0
        self._resetting[:] = False

    def after_reset(self, result: VecResetResult) -> VecResetResult:
        self._episode_starts[:] = time.perf_counter()
        return result

    def after_step(self, result: VecStepResult) -> VecStepResult:
        now = time.perf_counter()
        if self._resetting.any():
            stepping = ~self._resetting
            self.episode_returns += np.where(stepping, result.rewards, 0.0)
            self.episode_lengths += stepping
            self._episode_starts[self._resetting] = now
        else:
            self.episode_returns += result.rewards
            self.episode_lengths += 1
        finished = _finished_infos(result)
        replaced = {}
        for i, info in finished:
            stats = EpisodeStats(
                float(self.episode_returns[i]),
                int(self.episode_lengths[i]),
                now - float(self._episode_starts[i]),
                {"env_index": i},
            )
            self.tracker.add(stats)
            replaced[i] = {**info, "episode": stats}
        if finished:
            dones = result.dones
            self.episode_returns[dones] = 0.0
            self.episode_lengths[dones] = 0
            self._episode_starts[dones] = now
        if self.autoreset == "next_step":
            self._resetting = result.dones
        return result._replace(infos=_replace_infos(result.infos, replaced))
