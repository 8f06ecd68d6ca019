"""Pendulum: swing a frictionless pendulum up and hold it upright with a limited torque."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from sekai.core import Env, ResetResult, StepResult
from sekai.envs.classic_control._common import FloatState, continuous_action, reset_options
from sekai.envs.classic_control._drawing import draw_pendulum
from sekai.spaces import Box


class PendulumEnv(Env[np.ndarray, np.ndarray]):
    """The inverted-pendulum swing-up task, as gymnasium's ``Pendulum-v1``.

    Observation: cos(theta), sin(theta), angular velocity (float32), theta = 0 upright.
    Action: the torque, shape (1,), clipped to [-2, 2]. Reward: -(theta^2 + 0.1 theta_dot^2 +
    0.001 torque^2) with theta normalised to [-pi, pi); the episode never terminates. theta starts
    uniform in [-x_init, x_init] and theta_dot in [-y_init, y_init], by default pi and 1; pass
    ``options={"x_init": ..., "y_init": ...}`` to ``reset`` to change them.
    """

    max_speed = 8.0
    max_torque = 2.0
    dt = 0.05
    m = 1.0
    l = 1.0  # noqa: E741 - the pendulum's length, named as in the physics

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human", "rgb_array"], "render_fps": 30}
    state = FloatState("theta", "theta_dot")

    def __init__(self, g: float = 10.0, render_mode: str | None = None) -> None:
        self._set_render_mode(render_mode)
        self.g = g
        self.last_torque: float | None = None  # drawn as an arrow by render()
        high = np.array([1.0, 1.0, self.max_speed], np.float32)
        self.observation_space = Box(-high, high, dtype=np.float32)
        self.action_space = Box(-self.max_torque, self.max_torque, shape=(1,), dtype=np.float32)
        self._state: tuple[float, float] | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        self._set_rng(seed)
        bounds = reset_options(options, x_init=math.pi, y_init=1.0)
        high = np.array([bounds["x_init"], bounds["y_init"]])
        self.state = self.rng.uniform(-high, high).tolist()
        self.last_torque = None
        self._show_frame()
        return ResetResult(self._observation(), {})

    def step(self, action: np.ndarray) -> StepResult:
        if self._state is None:
            raise RuntimeError("PendulumEnv.step() called before reset()")
        theta, theta_dot = self._state
        torque = continuous_action(action, "Pendulum")
        torque = min(max(torque, -self.max_torque), self.max_torque)
        self.last_torque = torque
        upright_angle = (theta + math.pi) % (2 * math.pi) - math.pi
        cost = upright_angle**2 + 0.1 * theta_dot**2 + 0.001 * torque**2

        g, m, length, dt = self.g, self.m, self.l, self.dt
        theta_acc = 3 * g / (2 * length) * math.sin(theta) + 3.0 / (m * length**2) * torque
        theta_dot = min(max(theta_dot + theta_acc * dt, -self.max_speed), self.max_speed)
        self._state = (theta + theta_dot * dt, theta_dot)
        self._show_frame()
        return StepResult(self._observation(), -cost, False, False, {})

    def render(self) -> np.ndarray | None:
        """With ``render_mode="rgb_array"``, the pendulum as a (500, 500, 3) uint8 image, drawn
        as gymnasium draws it, the last torque as an arrow (None before the first reset); with
        ``"human"`` the same picture in a window, and None; None without a render mode."""
        return self._render_frame()

    def _frame(self) -> np.ndarray | None:
        if self._state is None:
            return None
        return draw_pendulum(self._state[0], self.last_torque)

    def _observation(self) -> np.ndarray:
        theta, theta_dot = self._state  # type: ignore[misc]
        return np.array([math.cos(theta), math.sin(theta), theta_dot], np.float32)
