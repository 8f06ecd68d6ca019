"""MountainCar: drive an underpowered car up a hill by rocking it back and forth."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sekai.core import Env, ResetResult, StepResult
from sekai.envs.classic_control._common import FloatState, uniform_bounds
from sekai.spaces import Box, Discrete


class MountainCarEnv(Env[np.ndarray, int | np.integer[Any]]):
    """The mountain-car task of Moore (1990), as gymnasium's ``MountainCar-v0``.

    Observation: position and velocity (float32). Action: 0 accelerates left, 1 does nothing,
    2 accelerates right. Reward: -1 per step. The episode terminates when the car reaches
    position 0.5 with velocity at least ``goal_velocity``. The position starts uniform in
    ``(low, high)``, by default ``(-0.6, -0.4)``, at rest; pass ``options={"low": ..., "high":
    ...}`` to ``reset`` to change it.
    """

    min_position = -1.2
    max_position = 0.6
    max_speed = 0.07
    goal_position = 0.5
    force = 0.001
    gravity = 0.0025

    state = FloatState("position", "velocity")

    def __init__(self, goal_velocity: float = 0.0) -> None:
        self.goal_velocity = goal_velocity
        self.observation_space = Box(
            np.array([self.min_position, -self.max_speed], np.float32),
            np.array([self.max_position, self.max_speed], np.float32),
            dtype=np.float32,
        )
        self.action_space = Discrete(3)
        self._state: tuple[float, float] | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        self._set_rng(seed)
        low, high = uniform_bounds(options, -0.6, -0.4)
        self._state = (float(self.rng.uniform(low, high)), 0.0)
        return ResetResult(np.array(self._state, np.float32), {})

    def step(self, action: int | np.integer[Any]) -> StepResult:
        if self._state is None:
            raise RuntimeError("MountainCarEnv.step() called before reset()")
        if action not in (0, 1, 2):
            raise ValueError(f"MountainCar actions are 0, 1 and 2, got {action!r}")
        position, velocity = self._state
        velocity += (int(action) - 1) * self.force + math.cos(3 * position) * -self.gravity
        velocity = min(max(velocity, -self.max_speed), self.max_speed)
        position = min(max(position + velocity, self.min_position), self.max_position)
        if position == self.min_position and velocity < 0:
            velocity = 0.0  # an inelastic collision with the left wall
        self._state = (position, velocity)
        terminated = position >= self.goal_position and velocity >= self.goal_velocity
        return StepResult(np.array(self._state, np.float32), -1.0, terminated, False, {})
