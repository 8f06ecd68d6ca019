"""gymnasium's next-step autoreset convention for one sub-env, used by ``autoreset="next_step"``."""

from __future__ import annotations

from typing import Any

from sekai.core import Env, ResetResult, StepResult
from sekai.wrappers import EnvCall, Plan, Wrapper, async_run_plan, run_plan


class _NextStepAutoReset(Wrapper[Any, Any]):
    """After an episode ends, the next step() resets instead of stepping.

    That step ignores its action and returns the new episode's first observation, reward 0,
    terminated and truncated False, and the reset info: what libraries written for gymnasium's
    vector envs expect.
    """

    def __init__(self, env: Env[Any, Any]) -> None:
        super().__init__(env)
        self._needs_reset = False

    def before_reset(self, seed: int | None, options: dict[str, Any] | None) -> None:
        self._needs_reset = False

    def step(self, action: Any) -> StepResult:
        return run_plan(self.env, self._step_plan(action))

    async def async_step(self, action: Any) -> StepResult:
        return await async_run_plan(self.env, self._step_plan(action))

    def _step_plan(self, action: Any) -> Plan[StepResult]:
        if self._needs_reset:
            self._needs_reset = False
            reset: ResetResult = yield EnvCall.reset()
            return StepResult(reset.observation, 0.0, False, False, reset.info)
        result: StepResult = yield EnvCall.step(action)
        self._needs_reset = result.done
        return result
