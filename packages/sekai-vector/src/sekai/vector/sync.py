"""SyncVecEnv: the sub-envs stepped one after another in this process."""

from __future__ import annotations

from typing import Any

from sekai.vector._in_process import _InProcessVecEnv
from sekai.vector.backend import stack_reset_results, stack_step_results
from sekai.vector.results import VecResetResult, VecStepResult


class SyncVecEnv(_InProcessVecEnv):
    """Step ``len(env_fns)`` sub-envs in turn, in this process.

    ``env_fns`` are zero-argument callables that build the sub-envs. The cheapest backend per
    call, so the right one for fast envs without a native version, and for debugging.
    """

    def _reset_subenvs(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> VecResetResult:
        return stack_reset_results(self.observation_space, self._group.reset(seeds, options))

    def _step_subenvs(self, actions: list[Any]) -> VecStepResult:
        return stack_step_results(self.observation_space, self._group.step(actions))
