"""CartPole: keep a pole upright on a cart by pushing the cart left or right."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from sekai.core import Env, ResetResult, StepResult, _step_result
from sekai.envs.classic_control._common import FloatState, discrete_action, uniform_bounds
from sekai.envs.classic_control._drawing import draw_cartpole
from sekai.spaces import Box, Discrete


class CartPoleEnv(Env[np.ndarray, int | np.integer[Any]]):
    """The cart-pole task of Barto, Sutton and Anderson (1983), as gymnasium's ``CartPole-v1``.

    Observation: cart position, cart velocity, pole angle, pole angular velocity (float32).
    Action: 0 pushes the cart left, 1 right. Reward: +1 for every step, the terminating one
    included. The episode terminates when the pole leans more than 12 degrees or the cart leaves
    ``[-x_threshold, x_threshold]``. Every state variable starts uniform in ``(low, high)``,
    by default ``(-0.05, 0.05)``; pass ``options={"low": ..., "high": ...}`` to ``reset`` to
    change it.
    """

    gravity = 9.8
    masscart = 1.0
    masspole = 0.1
    length = 0.5  # half the pole's length
    force_mag = 10.0
    tau = 0.02  # seconds per step (explicit Euler)

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human", "rgb_array"], "render_fps": 50}
    state = FloatState("x", "x_dot", "theta", "theta_dot")

    def __init__(self, render_mode: str | None = None) -> None:
        self._set_render_mode(render_mode)
        self.total_mass = self.masspole + self.masscart
        self.polemass_length = self.masspole * self.length
        self.theta_threshold_radians = 12 * 2 * math.pi / 360
        self.x_threshold = 2.4
        # Twice the termination thresholds, so the terminating observation is still in bounds.
        high = np.array(
            [2 * self.x_threshold, np.inf, 2 * self.theta_threshold_radians, np.inf], np.float32
        )
        self.observation_space = Box(-high, high, dtype=np.float32)
        self.action_space = Discrete(2)
        self._state: tuple[float, float, float, float] | None = None
        self._terminated = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        self._set_rng(seed)
        low, high = uniform_bounds(options, -0.05, 0.05)
        self.state = self.rng.uniform(low, high, size=4).tolist()
        self._terminated = False
        self._show_frame()
        return ResetResult(np.array(self._state, np.float32), {})

    def step(self, action: int | np.integer[Any]) -> StepResult:
        if self._state is None:
            raise RuntimeError("CartPoleEnv.step() called before reset()")
        x, x_dot, theta, theta_dot = self._state
        if type(action) is not int or not 0 <= action < 2:  # a vector env's actions are ints
            action = discrete_action(action, 2, "CartPole actions are 0 (left) and 1 (right)")
        force = self.force_mag if action == 1 else -self.force_mag
        cos_theta = math.cos(theta)
        sin_theta = math.sin(theta)
        total_mass = self.total_mass
        polemass_length = self.polemass_length
        temp = (force + polemass_length * theta_dot * theta_dot * sin_theta) / total_mass
        theta_acc = (self.gravity * sin_theta - cos_theta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * cos_theta * cos_theta / total_mass)
        )
        x_acc = temp - polemass_length * theta_acc * cos_theta / total_mass
        tau = self.tau
        x = x + tau * x_dot
        x_dot = x_dot + tau * x_acc
        theta = theta + tau * theta_dot
        theta_dot = theta_dot + tau * theta_acc
        self._state = (x, x_dot, theta, theta_dot)

        x_threshold = self.x_threshold
        theta_threshold = self.theta_threshold_radians
        terminated = (
            x < -x_threshold
            or x > x_threshold
            or theta < -theta_threshold
            or theta > theta_threshold
        )
        reward = 1.0
        if terminated:
            reward = self._terminal_reward()
        if self._window is not None:
            self._show_frame()
        return _step_result((np.array(self._state, np.float32), reward, terminated, False, {}))

    def render(self) -> np.ndarray | None:
        """With ``render_mode="rgb_array"``, the cart and pole as a (400, 600, 3) uint8 image,
        drawn as gymnasium draws them (None before the first reset); with ``"human"`` the same
        picture in a window, and None; None without a render mode."""
        return self._render_frame()

    def _frame(self) -> np.ndarray | None:
        if self._state is None:
            return None
        x, _, theta, _ = self._state
        return draw_cartpole(x, theta, self.x_threshold, self.length)

    def _terminal_reward(self) -> float:
        """1.0 on the step that terminates; 0.0 on steps after it (make()'s OrderEnforcing
        warns about those steps)."""
        if self._terminated:
            return 0.0
        self._terminated = True
        return 1.0
