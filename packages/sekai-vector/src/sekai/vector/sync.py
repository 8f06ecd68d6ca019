"""SyncVecEnv: the sub-envs stepped one after another in this process."""

from __future__ import annotations

from typing import Any

from sekai.vector._in_process import _InProcessVecEnv
from sekai.vector.base import _stack_reset_results, _stack_step_results
from sekai.vector.results import VecResetResult, VecStepResult


class SyncVecEnv(_InProcessVecEnv):
    """Step ``len(env_fns)`` sub-envs in turn, in this process.

    ``env_fns`` are zero-argument callables that build the sub-envs. The cheapest backend per
    call, so the right one for fast envs without a native version, and for debugging.
    """

    def _reset_subenvs(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> VecResetResult:
        results = [
            env.reset(seed=seed, options=env_options)
            for env, seed, env_options in zip(self.envs, seeds, options, strict=True)
        ]
        return _stack_reset_results(self.observation_space, results)

    def _step_subenvs(self, actions: list[Any]) -> VecStepResult:
        results = [env.step(action) for env, action in zip(self.envs, actions, strict=True)]
        return _stack_step_results(self.observation_space, results)
