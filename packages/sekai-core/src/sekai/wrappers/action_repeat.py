"""Action wrappers that repeat actions: sticky actions (randomly) and action repeat (always)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.checks import is_whole_number
from sekai.core import ActType, Env, ObsType, ResetResult, StepResult
from sekai.wrappers.base import EnvCall, Plan, Wrapper, async_run_plan, run_plan


class StickyAction(Wrapper[ObsType, ActType]):
    """With probability ``repeat_action_probability``, ignore the action and repeat the last one.

    The draws come from the wrapper's own generator, seeded from ``reset(seed=...)``, so the
    env's own random stream is the same as without the wrapper.
    """

    def __init__(self, env: Env[ObsType, ActType], repeat_action_probability: float) -> None:
        if not 0.0 <= repeat_action_probability < 1.0:
            raise ValueError(
                f"repeat_action_probability must be in [0, 1), got {repeat_action_probability}"
            )
        super().__init__(env)
        self.repeat_action_probability = repeat_action_probability
        self._sticky_rng = np.random.default_rng()
        self._last_action: Any = None

    def before_reset(self, seed: int | None, options: dict[str, Any] | None) -> None:
        if seed is not None:  # a child of the seed, independent of the env's own stream
            self._sticky_rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])

    def after_reset(self, result: ResetResult) -> ResetResult:
        self._last_action = None
        return result

    def before_step(self, action: Any) -> Any:
        if (
            self._last_action is not None
            and self._sticky_rng.random() < self.repeat_action_probability
        ):
            action = self._last_action
        self._last_action = action
        return action


class RepeatAction(Wrapper[ObsType, ActType]):
    """Apply each action ``num_repeats`` times (or until the episode ends), summing the rewards.

    The observation, flags and info are those of the last inner step.
    """

    def __init__(self, env: Env[ObsType, ActType], num_repeats: int) -> None:
        if not is_whole_number(num_repeats) or num_repeats < 1:
            raise ValueError(f"num_repeats must be an int of at least 1, got {num_repeats!r}")
        super().__init__(env)
        self.num_repeats = int(num_repeats)

    def step(self, action: ActType) -> StepResult:
        return run_plan(self.env, self._step_plan(action))

    async def async_step(self, action: ActType) -> StepResult:
        return await async_run_plan(self.env, self._step_plan(action))

    def _step_plan(self, action: ActType) -> Plan[StepResult]:
        total = 0.0
        for _ in range(self.num_repeats):
            result: StepResult = yield EnvCall.step(action)
            total += float(result.reward)
            if result.done:
                break
        return result._replace(reward=total)
