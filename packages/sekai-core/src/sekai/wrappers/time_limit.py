"""TimeLimit: truncate an episode after a fixed number of steps."""

from __future__ import annotations

from sekai.checks import check_positive_int
from sekai.core import ActType, Env, ObsType, ResetResult, StepResult, _step_result
from sekai.wrappers.base import Wrapper, _inline_step_hooks


class TimeLimit(Wrapper[ObsType, ActType]):
    """Truncate the episode after ``max_episode_steps`` steps.

    Every step's info carries ``"elapsed_steps"``, the number of steps since the last reset, so
    code downstream (vector envs, ``stack_infos``, value bootstrapping) can read the episode clock.
    """

    def __init__(self, env: Env[ObsType, ActType], max_episode_steps: int) -> None:
        max_episode_steps = check_positive_int(max_episode_steps, "max_episode_steps")
        super().__init__(env)
        self.max_episode_steps = max_episode_steps
        self.elapsed_steps = 0

    def after_reset(self, result: ResetResult) -> ResetResult:
        self.elapsed_steps = 0
        return result

    def after_step(self, result: StepResult) -> StepResult:
        self.elapsed_steps += 1
        observation, reward, terminated, truncated, info = result
        info = {**info, "elapsed_steps": self.elapsed_steps}
        truncated = bool(truncated) or self.elapsed_steps >= self.max_episode_steps
        return StepResult(observation, reward, terminated, truncated, info)

    @_inline_step_hooks  # make() puts this wrapper around most envs: every step pays it
    def step(self, action: ActType) -> StepResult:
        observation, reward, terminated, truncated, info = self.env.step(action)
        elapsed = self.elapsed_steps = self.elapsed_steps + 1
        truncated = bool(truncated) or elapsed >= self.max_episode_steps
        info = {**info, "elapsed_steps": elapsed}
        return _step_result((observation, reward, terminated, truncated, info))
