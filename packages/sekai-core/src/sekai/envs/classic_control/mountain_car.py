"""MountainCar: drive an underpowered car up a hill by rocking it back and forth."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.core import StepResult
from sekai.envs.classic_control._common import discrete_action
from sekai.envs.classic_control._hill import Hill
from sekai.spaces import Discrete


class MountainCarEnv(Hill[int | np.integer[Any]]):
    """The mountain-car task of Moore (1990), as gymnasium's ``MountainCar-v0``.

    Observation: position and velocity (float32). Action: 0 accelerates left, 1 does nothing,
    2 accelerates right. Reward: -1 per step. The episode terminates when the car reaches
    position 0.5 with velocity at least ``goal_velocity``. Start states: see ``Hill``.
    """

    goal_position = 0.5
    force = 0.001

    def __init__(self, goal_velocity: float = 0.0, render_mode: str | None = None) -> None:
        super().__init__(goal_velocity, render_mode)
        self.action_space = Discrete(3)

    def step(self, action: int | np.integer[Any]) -> StepResult:
        push = discrete_action(action, 3, "MountainCar actions are 0, 1 and 2") - 1
        observation, terminated = self._drive(push * self.force)
        return StepResult(observation, -1.0, terminated, False, {})
