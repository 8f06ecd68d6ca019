"""MountainCarContinuous: the mountain car with a continuous throttle and an energy cost."""

from __future__ import annotations

import numpy as np

from sekai.core import StepResult
from sekai.envs.classic_control._common import continuous_action
from sekai.envs.classic_control._hill import Hill
from sekai.spaces import Box


class MountainCarContinuousEnv(Hill[np.ndarray]):
    """The continuous mountain car, as gymnasium's ``MountainCarContinuous-v0``.

    Observation: position and velocity (float32). Action: the throttle, shape (1,), clipped to
    [-1, 1]. Reward: 100 on reaching position 0.45 with velocity at least ``goal_velocity``
    (which terminates the episode), minus 0.1 * action^2 every step. Start states: see
    ``Hill``.

    gymnasium keeps this env's state in float32; sekai computes in float64, so long trajectories
    agree to float32 precision rather than bit for bit.
    """

    min_action = -1.0
    max_action = 1.0
    goal_position = 0.45
    power = 0.0015

    def __init__(self, goal_velocity: float = 0.0, render_mode: str | None = None) -> None:
        super().__init__(goal_velocity, render_mode)
        self.action_space = Box(self.min_action, self.max_action, shape=(1,), dtype=np.float32)

    def step(self, action: np.ndarray) -> StepResult:
        throttle = continuous_action(action, "MountainCarContinuous")
        force = min(max(throttle, self.min_action), self.max_action)
        observation, terminated = self._drive(force * self.power)
        reward = (100.0 if terminated else 0.0) - 0.1 * throttle**2  # the unclipped throttle
        return StepResult(observation, reward, terminated, False, {})
