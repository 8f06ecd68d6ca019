"""The hill both mountain-car tasks drive on: its bounds, start states and physics."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from sekai.core import ActType, Env, ResetResult
from sekai.envs.classic_control._common import FloatState, uniform_bounds
from sekai.envs.classic_control._drawing import draw_mountain_car
from sekai.spaces import Box


class Hill(Env[np.ndarray, ActType]):
    """A car on the hill ``sin(3 * position)``, under gravity, with a wall on the left.

    Subclasses set the action space, ``goal_position`` and the engine's push per step, and call
    ``_drive``. The position starts uniform in ``(low, high)``, by default ``(-0.6, -0.4)``,
    at rest; pass ``options={"low": ..., "high": ...}`` to ``reset`` to change it.
    """

    min_position = -1.2
    max_position = 0.6
    max_speed = 0.07
    gravity = 0.0025
    goal_position: float

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human", "rgb_array"], "render_fps": 30}
    state = FloatState("position", "velocity")

    def __init__(self, goal_velocity: float, render_mode: str | None = None) -> None:
        self._set_render_mode(render_mode)
        self.goal_velocity = goal_velocity
        self.observation_space = Box(
            np.array([self.min_position, -self.max_speed], np.float32),
            np.array([self.max_position, self.max_speed], np.float32),
            dtype=np.float32,
        )
        self._state: tuple[float, float] | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        self._set_rng(seed)
        low, high = uniform_bounds(options, -0.6, -0.4)
        self._state = (float(self.rng.uniform(low, high)), 0.0)
        self._show_frame()
        return ResetResult(np.array(self._state, np.float32), {})

    def render(self) -> np.ndarray | None:
        """With ``render_mode="rgb_array"``, the car on the hill as a (400, 600, 3) uint8 image,
        drawn as gymnasium draws it (None before the first reset); with ``"human"`` the same
        picture in a window, and None; None without a render mode."""
        return self._render_frame()

    def _frame(self) -> np.ndarray | None:
        if self._state is None:
            return None
        return draw_mountain_car(
            self._state[0], self.min_position, self.max_position, self.goal_position, _height
        )

    def _drive(self, push: float) -> tuple[np.ndarray, bool]:
        """Advance one step with the engine adding ``push`` to the velocity; return the new
        observation and whether the car reached the goal."""
        if self._state is None:
            raise RuntimeError(f"{type(self).__name__}.step() called before reset()")
        position, velocity = self._state
        velocity += push - self.gravity * math.cos(3 * position)
        velocity = min(max(velocity, -self.max_speed), self.max_speed)
        position = min(max(position + velocity, self.min_position), self.max_position)
        if position == self.min_position and velocity < 0:
            velocity = 0.0  # an inelastic collision with the left wall
        self._state = (position, velocity)
        reached = position >= self.goal_position and velocity >= self.goal_velocity
        self._show_frame()
        return np.array(self._state, np.float32), reached


def _height(position: np.ndarray) -> np.ndarray:
    """The hill's height at ``position``, as drawn (the physics uses its slope, cos(3 x))."""
    return np.sin(3 * position) * 0.45 + 0.55
