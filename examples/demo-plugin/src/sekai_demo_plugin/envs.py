"""RandomWalkEnv: hold a short, flat or long position in an asset whose price is a random walk."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.core import Env, ResetResult, StepResult
from sekai.spaces import Box, Discrete


class RandomWalkEnv(Env[np.ndarray, int | np.integer[Any]]):
    """Trade one asset whose log price moves by ``normal(drift, sigma)`` each step.

    The action is the position to hold for the next step: -1 short, 0 flat, 1 long. The reward is
    the position times the step's log return, minus ``cost`` per unit the position changed. The
    observation is ``[last log return, current position]``. The episode never ends on its own;
    the registry's ``max_episode_steps`` truncates it.
    """

    def __init__(self, *, sigma: float = 0.01, drift: float = 0.0, cost: float = 0.0) -> None:
        if not (sigma >= 0 and cost >= 0):  # written so that NaN fails too
            raise ValueError(f"sigma and cost must be >= 0, got sigma={sigma}, cost={cost}")
        self.sigma = sigma
        self.drift = drift
        self.cost = cost
        self.observation_space = Box(-np.inf, np.inf, shape=(2,))
        self.action_space = Discrete(3, start=-1)
        self.log_price = 0.0
        self.position = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        self._set_rng(seed)
        self.log_price = 0.0
        self.position = 0
        return ResetResult(self._observe(0.0), {"price": 1.0})

    def step(self, action: int | np.integer[Any]) -> StepResult:
        if action not in self.action_space:
            raise ValueError(f"action must be -1, 0 or 1, got {action!r}")
        traded = abs(int(action) - self.position)
        self.position = int(action)
        log_return = float(self.rng.normal(self.drift, self.sigma))
        self.log_price += log_return
        reward = self.position * log_return - self.cost * traded
        info = {"price": float(np.exp(self.log_price))}
        return StepResult(self._observe(log_return), reward, False, False, info)

    def _observe(self, log_return: float) -> np.ndarray:
        return np.array([log_return, self.position], dtype=np.float32)
