"""AutoReset: same-step autoreset, the convention every sekai vector env follows."""

from __future__ import annotations

from sekai.core import ActType, ObsType, ResetResult, StepResult
from sekai.wrappers.base import EnvCall, Plan, Wrapper, async_run_plan, run_plan


def autoreset_result(step: StepResult, reset: ResetResult) -> StepResult:
    """Merge the step that ended an episode with the reset that starts the next one.

    The observation is the new episode's first; reward and flags are the finished episode's; the
    info is the step's info plus ``final_observation``, ``final_info`` and ``reset_info``.
    """
    info = {
        **step.info,
        "final_observation": step.observation,
        "final_info": step.info,
        "reset_info": reset.info,
    }
    return StepResult(reset.observation, step.reward, step.terminated, step.truncated, info)


class AutoReset(Wrapper[ObsType, ActType]):
    """Reset the env inside the step that ends an episode (see :func:`autoreset_result`).

    Every ``step`` is then a real transition with no dummy step in between; the last observation
    of the finished episode is ``info["final_observation"]``. Put AutoReset outside observation
    wrappers, so both observations come out in the same representation.
    """

    def step(self, action: ActType) -> StepResult:
        return run_plan(self.env, self._step_plan(action))

    async def async_step(self, action: ActType) -> StepResult:
        return await async_run_plan(self.env, self._step_plan(action))

    def _step_plan(self, action: ActType) -> Plan[StepResult]:
        result: StepResult = yield EnvCall.step(action)
        if not result.done:
            return result
        reset: ResetResult = yield EnvCall.reset()
        return autoreset_result(result, reset)
