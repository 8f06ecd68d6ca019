"""MountainCarContinuous: the mountain car with a continuous throttle and an energy cost."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sekai.core import Env, ResetResult, StepResult
from sekai.envs.classic_control._common import FloatState, continuous_action, uniform_bounds
from sekai.spaces import Box


class MountainCarContinuousEnv(Env[np.ndarray, np.ndarray]):
    """The continuous mountain car, as gymnasium's ``MountainCarContinuous-v0``.

    Observation: position and velocity (float32). Action: the throttle, shape (1,), clipped to
    [-1, 1]. Reward: 100 on reaching position 0.45 with velocity at least ``goal_velocity``
    (which terminates the episode), minus 0.1 * action^2 every step. The position starts uniform
    in ``(low, high)``, by default ``(-0.6, -0.4)``, at rest; pass ``options={"low": ..., "high":
    ...}`` to ``reset`` to change it.

    gymnasium keeps this env's state in float32; sekai computes in float64, so long trajectories
    agree to float32 precision rather than bit for bit.
    """

    min_action = -1.0
    max_action = 1.0
    min_position = -1.2
    max_position = 0.6
    max_speed = 0.07
    goal_position = 0.45
    power = 0.0015

    state = FloatState("position", "velocity")

    def __init__(self, goal_velocity: float = 0.0) -> None:
        self.goal_velocity = goal_velocity
        self.observation_space = Box(
            np.array([self.min_position, -self.max_speed], np.float32),
            np.array([self.max_position, self.max_speed], np.float32),
            dtype=np.float32,
        )
        self.action_space = Box(self.min_action, self.max_action, shape=(1,), dtype=np.float32)
        self._state: tuple[float, float] | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        self._set_rng(seed)
        low, high = uniform_bounds(options, -0.6, -0.4)
        self._state = (float(self.rng.uniform(low, high)), 0.0)
        return ResetResult(np.array(self._state, np.float32), {})

    def step(self, action: np.ndarray) -> StepResult:
        if self._state is None:
            raise RuntimeError("MountainCarContinuousEnv.step() called before reset()")
        throttle = continuous_action(action, "MountainCarContinuous")
        force = min(max(throttle, self.min_action), self.max_action)
        position, velocity = self._state
        velocity += force * self.power - 0.0025 * math.cos(3 * position)
        velocity = min(max(velocity, -self.max_speed), self.max_speed)
        position = min(max(position + velocity, self.min_position), self.max_position)
        if position == self.min_position and velocity < 0:
            velocity = 0.0  # an inelastic collision with the left wall
        self._state = (position, velocity)
        terminated = position >= self.goal_position and velocity >= self.goal_velocity
        reward = (100.0 if terminated else 0.0) - 0.1 * throttle**2  # the unclipped throttle
        return StepResult(np.array(self._state, np.float32), reward, terminated, False, {})
