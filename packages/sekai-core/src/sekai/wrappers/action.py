"""Stateless action wrappers for Box action spaces: clip or rescale the agent's actions."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.core import Env, ObsType
from sekai.spaces import Box
from sekai.wrappers._parts import require_box
from sekai.wrappers.base import ActionWrapper


class ClipAction(ActionWrapper[ObsType, np.ndarray]):
    """Clip actions into the Box action space, so the agent may act anywhere in R^n."""

    def __init__(self, env: Env[ObsType, Any]) -> None:
        super().__init__(env)
        self._box = require_box(env.action_space, "ClipAction", "action")
        self.action_space = Box(-np.inf, np.inf, shape=self._box.shape, dtype=self._box.dtype)

    def action(self, action: Any) -> np.ndarray:
        return np.clip(action, self._box.low, self._box.high).astype(self._box.dtype)


class RescaleAction(ActionWrapper[ObsType, np.ndarray]):
    """Let the agent act in ``[min_action, max_action]``, mapped affinely onto the env's Box."""

    def __init__(self, env: Env[ObsType, Any], min_action: Any, max_action: Any) -> None:
        super().__init__(env)
        box = require_box(env.action_space, "RescaleAction", "action")
        if not np.issubdtype(box.dtype, np.floating):
            raise TypeError(f"RescaleAction needs a floating-point Box action space, got {box}")
        if not np.all(np.isfinite(box.low)) or not np.all(np.isfinite(box.high)):
            raise ValueError(f"RescaleAction needs finite action bounds, got {box}")
        self.min_action = np.broadcast_to(np.asarray(min_action, box.dtype), box.shape)
        self.max_action = np.broadcast_to(np.asarray(max_action, box.dtype), box.shape)
        if not np.all(self.min_action < self.max_action):
            raise ValueError(
                f"min_action must be below max_action, got {min_action} and {max_action}"
            )
        self._box = box
        self.action_space = Box(self.min_action, self.max_action, dtype=box.dtype)

    def action(self, action: Any) -> np.ndarray:
        low, high = self._box.low.astype(np.float64), self._box.high.astype(np.float64)
        fraction = (np.asarray(action, np.float64) - self.min_action) / (
            self.max_action - self.min_action
        )
        return np.clip(low + fraction * (high - low), low, high).astype(self._box.dtype)
