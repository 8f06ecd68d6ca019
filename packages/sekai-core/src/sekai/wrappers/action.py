"""Stateless action wrappers that clip or rescale the Box parts of the agent's actions.

Both act on a plain Box action space and on every Box part of a (nested) Dict/Tuple one, such
as ``Dict(weights=Box, side=Discrete)`` for a portfolio; other parts pass through unchanged. A
MaskedBox is one part: its occupied values are clipped or rescaled, its empty slots are set to
the env's ``fill_value`` and its mask passes through. A Sequence is not entered (its elements
have no fixed path), so it passes through like any other non-Box part; an action space without
a Box part (a Discrete, or a Sequence of Boxes alone) is refused with a TypeError.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from sekai.core import Env, ObsType
from sekai.spaces import Box, MaskedBox, Space
from sekai.wrappers._parts import (
    Part,
    Path,
    fill_empty_slots,
    find_parts,
    map_part_spaces,
    map_parts,
    require_box_parts,
)
from sekai.wrappers.base import ActionWrapper


class ClipAction(ActionWrapper[ObsType, Any]):
    """Clip every Box part of the action into the env's bounds, so the agent may act anywhere.

    The agent's action space is the env's with every Box part unbounded (same shape and dtype).
    """

    def __init__(self, env: Env[ObsType, Any]) -> None:
        super().__init__(env)
        space = env.action_space
        require_box_parts(space, "ClipAction")
        self._inner_space = space
        self.action_space = map_part_spaces(space, _unbounded)
        if isinstance(space, Box):  # a plain Box skips the walk: one np.clip per step
            self.action = partial(_clip, space)  # type: ignore[method-assign]

    def action(self, action: Any) -> Any:
        return map_parts(self._inner_space, action, _clip_part)


class RescaleAction(ActionWrapper[ObsType, Any]):
    """Let the agent act in ``[min_action, max_action]``, mapped affinely onto the env's bounds.

    ``min_action`` and ``max_action`` broadcast to the shape of every Box part (a MaskedBox's
    element shape); each part must be floating-point with finite bounds. The agent's action space
    is the env's with every Box part replaced by its rescaled Box.
    """

    def __init__(self, env: Env[ObsType, Any], min_action: Any, max_action: Any) -> None:
        super().__init__(env)
        space = env.action_space
        require_box_parts(space, "RescaleAction")
        self.min_action, self.max_action = min_action, max_action
        self._inner_space = space
        self.action_space = map_part_spaces(space, self._rescaled_space)
        self._outer_parts = dict(find_parts(self.action_space))
        if isinstance(space, Box):  # a plain Box skips the walk
            self.action = partial(_rescale, space, self.action_space)  # type: ignore[method-assign]

    def action(self, action: Any) -> Any:
        return map_parts(self._inner_space, action, self._rescale_part)

    def _rescale_part(self, path: Path, space: Part, part: Any) -> Any:
        outer = self._outer_parts[path]
        if isinstance(space, MaskedBox):
            mask = np.array(part["mask"])
            values = _rescale(space.element_space, outer.element_space, part["values"])
            return {"values": fill_empty_slots(space, values, mask), "mask": mask}
        return _rescale(space, outer, part)

    def _rescaled_space(self, part: Part) -> Space[Any]:
        box = part.element_space if isinstance(part, MaskedBox) else part
        if not np.issubdtype(box.dtype, np.floating):
            raise TypeError(f"RescaleAction needs floating-point Box parts, got {part}")
        if not np.all(np.isfinite(box.low)) or not np.all(np.isfinite(box.high)):
            raise ValueError(f"RescaleAction needs finite action bounds, got {part}")
        try:
            low = np.broadcast_to(np.asarray(self.min_action, box.dtype), box.shape)
            high = np.broadcast_to(np.asarray(self.max_action, box.dtype), box.shape)
        except ValueError:
            raise ValueError(
                f"min_action and max_action must broadcast to the shape {box.shape} of {part}, "
                f"got {self.min_action} and {self.max_action}"
            ) from None
        if not np.all(low < high):
            raise ValueError(
                f"min_action must be below max_action, got {self.min_action} and {self.max_action}"
            )
        if isinstance(part, MaskedBox):
            return MaskedBox(low, high, max_size=part.max_size, dtype=box.dtype)
        return Box(low, high, dtype=box.dtype)


def _unbounded(part: Part) -> Space[Any]:
    if isinstance(part, MaskedBox):
        element = part.element_space
        return MaskedBox(
            -np.inf,
            np.inf,
            shape=element.shape,
            max_size=part.max_size,
            dtype=element.dtype,
            fill_value=part.fill_value,
        )
    return Box(-np.inf, np.inf, shape=part.shape, dtype=part.dtype)


def _clip(box: Box, action: Any) -> np.ndarray:
    return np.clip(action, box.low, box.high).astype(box.dtype)


def _clip_part(path: Path, space: Part, part: Any) -> Any:
    if isinstance(space, MaskedBox):
        mask = np.array(part["mask"])
        values = _clip(space.element_space, part["values"])
        return {"values": fill_empty_slots(space, values, mask), "mask": mask}
    return _clip(space, part)


def _rescale(inner: Box, outer: Box, action: Any) -> np.ndarray:
    """``action`` mapped affinely from ``outer``'s bounds onto ``inner``'s, clipped into them."""
    low, high = inner.low.astype(np.float64), inner.high.astype(np.float64)
    fraction = (np.asarray(action, np.float64) - outer.low) / (outer.high - outer.low)
    return np.clip(low + fraction * (high - low), low, high).astype(inner.dtype)
