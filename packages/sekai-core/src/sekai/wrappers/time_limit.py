"""TimeLimit: truncate an episode after a fixed number of steps."""

from __future__ import annotations

from sekai._checks import is_whole_number
from sekai.core import ActType, Env, ObsType, ResetResult, StepResult
from sekai.wrappers.base import Wrapper


class TimeLimit(Wrapper[ObsType, ActType]):
    """Truncate the episode after ``max_episode_steps`` steps.

    Every step's info carries ``"elapsed_steps"``, the number of steps since the last reset, so
    code downstream (vector envs, ``stack_infos``, value bootstrapping) can read the episode clock.
    """

    def __init__(self, env: Env[ObsType, ActType], max_episode_steps: int) -> None:
        if not is_whole_number(max_episode_steps):
            raise TypeError(
                f"max_episode_steps must be an int, got {type(max_episode_steps).__name__}"
            )
        if max_episode_steps < 1:
            raise ValueError(f"max_episode_steps must be at least 1, got {max_episode_steps}")
        super().__init__(env)
        self.max_episode_steps = int(max_episode_steps)
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
