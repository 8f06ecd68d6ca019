"""AutoReset: same-step autoreset, the convention every sekai vector env follows."""

from __future__ import annotations

from sekai.core import ActType, ObsType, ResetResult, StepResult
from sekai.wrappers.base import Wrapper


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
    """Reset the env inside the step that ends an episode (see ``autoreset_result``).

    Every ``step`` is then a real transition with no dummy step in between; the last observation
    of the finished episode is ``info["final_observation"]``. Put AutoReset outside observation
    wrappers, so both observations come out in the same representation.
    """

    # Written out for both call styles rather than as a plan: this is the hot path of every
    # vector env (a plan costs a generator per step), and the shared part is autoreset_result.
    def step(self, action: ActType) -> StepResult:
        result = self.env.step(action)
        if not (result.terminated or result.truncated):
            return result
        return autoreset_result(result, self.env.reset())

    async def async_step(self, action: ActType) -> StepResult:
        result = await self.env.async_step(action)
        if not (result.terminated or result.truncated):
            return result
        return autoreset_result(result, await self.env.async_reset())
