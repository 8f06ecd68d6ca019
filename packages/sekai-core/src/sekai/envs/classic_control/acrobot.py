"""Acrobot: swing the tip of a two-link pendulum above a line by torquing the middle joint."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from sekai.core import Env, ResetResult, StepResult
from sekai.envs.classic_control._common import FloatState, discrete_action, uniform_bounds
from sekai.envs.classic_control._drawing import draw_acrobot
from sekai.spaces import Box, Discrete

_State = tuple[float, float, float, float]


class AcrobotEnv(Env[np.ndarray, int | np.integer[Any]]):
    """The acrobot swing-up task of Sutton (1996), as gymnasium's ``Acrobot-v1``.

    Observation: cos and sin of both joint angles, then both angular velocities (float32).
    Action: torque -1 (0), 0 (1) or +1 (2) on the joint between the links. Reward: -1 per step,
    0 on the step that terminates, which is when the free end rises more than one link length
    above the fixed joint. The dynamics are the book version, integrated with one fourth-order
    Runge-Kutta step of ``dt`` seconds. Every state variable starts uniform in ``(low, high)``
    (rounded to float32, as in gymnasium), by default ``(-0.1, 0.1)``; pass ``options={"low":
    ..., "high": ...}`` to ``reset`` to change it.
    """

    dt = 0.2
    link_length_1 = 1.0
    link_length_2 = 1.0  # drawn only: the dynamics use the centre of mass of link 2
    link_mass_1 = 1.0
    link_mass_2 = 1.0
    link_com_pos_1 = 0.5  # distance from a link's joint to its centre of mass
    link_com_pos_2 = 0.5
    link_moi = 1.0  # moment of inertia of either link
    max_vel_1 = 4 * math.pi
    max_vel_2 = 9 * math.pi
    torques = (-1.0, 0.0, 1.0)

    state = FloatState("theta1", "theta2", "theta1_dot", "theta2_dot")

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human", "rgb_array"], "render_fps": 15}

    def __init__(self, render_mode: str | None = None) -> None:
        self._set_render_mode(render_mode)
        high = np.array([1.0, 1.0, 1.0, 1.0, self.max_vel_1, self.max_vel_2], np.float32)
        self.observation_space = Box(-high, high, dtype=np.float32)
        self.action_space = Discrete(3)
        self._state: _State | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        self._set_rng(seed)
        low, high = uniform_bounds(options, -0.1, 0.1)
        self.state = self.rng.uniform(low, high, size=4).astype(np.float32).tolist()
        self._show_frame()
        return ResetResult(self._observation(), {})

    def step(self, action: int | np.integer[Any]) -> StepResult:
        if self._state is None:
            raise RuntimeError("AcrobotEnv.step() called before reset()")
        torque = self.torques[discrete_action(action, 3, "Acrobot actions are 0, 1 and 2")]
        theta1, theta2, theta1_dot, theta2_dot = self._rk4_step(torque)
        self._state = (
            _wrap_angle(theta1),
            _wrap_angle(theta2),
            min(max(theta1_dot, -self.max_vel_1), self.max_vel_1),
            min(max(theta2_dot, -self.max_vel_2), self.max_vel_2),
        )
        theta1, theta2 = self._state[0], self._state[1]
        terminated = -math.cos(theta1) - math.cos(theta2 + theta1) > 1.0
        reward = 0.0 if terminated else -1.0
        self._show_frame()
        return StepResult(self._observation(), reward, terminated, False, {})

    def render(self) -> np.ndarray | None:
        """With ``render_mode="rgb_array"``, the two links as a (500, 500, 3) uint8 image, drawn
        as gymnasium draws them (None before the first reset); with ``"human"`` the same
        picture in a window, and None; None without a render mode."""
        return self._render_frame()

    def _frame(self) -> np.ndarray | None:
        if self._state is None:
            return None
        theta1, theta2 = self._state[0], self._state[1]
        return draw_acrobot(theta1, theta2, self.link_length_1, self.link_length_2)

    def _rk4_step(self, torque: float) -> _State:
        """The state ``dt`` seconds on, by one classic Runge-Kutta step."""
        s = self._state
        assert s is not None
        half = self.dt / 2.0
        k1 = self._derivatives(s, torque)
        k2 = self._derivatives(_along(s, k1, half), torque)
        k3 = self._derivatives(_along(s, k2, half), torque)
        k4 = self._derivatives(_along(s, k3, self.dt), torque)
        sixth = self.dt / 6.0
        return (
            s[0] + sixth * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0]),
            s[1] + sixth * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1]),
            s[2] + sixth * (k1[2] + 2 * k2[2] + 2 * k3[2] + k4[2]),
            s[3] + sixth * (k1[3] + 2 * k2[3] + 2 * k3[3] + k4[3]),
        )

    def _derivatives(self, s: _State, torque: float) -> _State:
        """d/dt of the state under ``torque`` (the equations of motion of the book version)."""
        theta1, theta2, theta1_dot, theta2_dot = s
        m1, m2 = self.link_mass_1, self.link_mass_2
        l1, lc1, lc2 = self.link_length_1, self.link_com_pos_1, self.link_com_pos_2
        i1 = i2 = self.link_moi
        g = 9.8
        d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * math.cos(theta2)) + i1 + i2
        d2 = m2 * (lc2**2 + l1 * lc2 * math.cos(theta2)) + i2
        phi2 = m2 * lc2 * g * math.cos(theta1 + theta2 - math.pi / 2.0)
        phi1 = (
            -m2 * l1 * lc2 * theta2_dot**2 * math.sin(theta2)
            - 2 * m2 * l1 * lc2 * theta2_dot * theta1_dot * math.sin(theta2)
            + (m1 * lc1 + m2 * l1) * g * math.cos(theta1 - math.pi / 2)
            + phi2
        )
        theta2_acc = (
            torque + d2 / d1 * phi1 - m2 * l1 * lc2 * theta1_dot**2 * math.sin(theta2) - phi2
        ) / (m2 * lc2**2 + i2 - d2**2 / d1)
        theta1_acc = -(d2 * theta2_acc + phi1) / d1
        return theta1_dot, theta2_dot, theta1_acc, theta2_acc

    def _observation(self) -> np.ndarray:
        theta1, theta2, theta1_dot, theta2_dot = self._state  # type: ignore[misc]
        return np.array(
            [
                math.cos(theta1),
                math.sin(theta1),
                math.cos(theta2),
                math.sin(theta2),
                theta1_dot,
                theta2_dot,
            ],
            np.float32,
        )


def _along(s: _State, slope: _State, h: float) -> _State:
    """``s + h * slope``, element by element."""
    return (s[0] + h * slope[0], s[1] + h * slope[1], s[2] + h * slope[2], s[3] + h * slope[3])


def _wrap_angle(theta: float) -> float:
    """``theta`` shifted by whole turns into [-pi, pi]."""
    while theta > math.pi:
        theta -= 2 * math.pi
    while theta < -math.pi:
        theta += 2 * math.pi
    return theta
