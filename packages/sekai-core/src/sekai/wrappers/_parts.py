"""Walk the parts of a nested observation, for wrappers that act on every Box in it.

A *part* is a space of the given kinds reached through Dict and Tuple spaces: by default a Box or
a MaskedBox (one part: its values and mask belong together). Paths are tuples of Dict keys and
Tuple indices. The same walk serves single observations and batches with a leading axis, since
both nest as dicts and tuples in the same way.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from sekai.spaces import Box, Dict, MaskedBox, Space, Tuple

Path = tuple[Any, ...]
Part = Box | MaskedBox
BOX_PARTS: tuple[type, ...] = (Box, MaskedBox)


def find_parts(
    space: Space[Any], kinds: tuple[type, ...] = BOX_PARTS, path: Path = ()
) -> list[tuple[Path, Any]]:
    """Every part of ``space`` of the given kinds with its path, in key/index order."""
    if isinstance(space, kinds):
        return [(path, space)]
    if isinstance(space, Dict):
        return [p for key, sub in space.items() for p in find_parts(sub, kinds, (*path, key))]
    if isinstance(space, Tuple):
        return [p for i in range(len(space)) for p in find_parts(space[i], kinds, (*path, i))]
    return []


def map_part_spaces(
    space: Space[Any], fn: Callable[[Any], Space[Any]], kinds: tuple[type, ...] = BOX_PARTS
) -> Space[Any]:
    """``space`` with every part of the given kinds replaced by ``fn(part)``."""
    if isinstance(space, kinds):
        return fn(space)
    if isinstance(space, Dict):
        return Dict({key: map_part_spaces(sub, fn, kinds) for key, sub in space.items()})
    if isinstance(space, Tuple):
        return Tuple([map_part_spaces(space[i], fn, kinds) for i in range(len(space))])
    return space


def map_parts(
    space: Space[Any],
    value: Any,
    fn: Callable[[Path, Any, Any], Any],
    kinds: tuple[type, ...] = BOX_PARTS,
    path: Path = (),
) -> Any:
    """``value`` rebuilt with ``fn(path, part_space, part_value)`` on every part of the kinds.

    Other parts are copied, so the result never shares memory with ``value`` by accident.
    """
    if isinstance(space, kinds):
        return fn(path, space, value)
    if isinstance(space, Dict):
        return {
            key: map_parts(sub, value[key], fn, kinds, (*path, key)) for key, sub in space.items()
        }
    if isinstance(space, Tuple):
        return tuple(
            map_parts(space[i], value[i], fn, kinds, (*path, i)) for i in range(len(space))
        )
    return copy.deepcopy(value)


def fill_empty_slots(space: MaskedBox, values: Any, mask: Any) -> Any:
    """``values`` with the slots that ``mask`` marks empty set to ``space.fill_value``."""
    mask = np.asarray(mask)
    occupied = mask.astype(bool).reshape(mask.shape + (1,) * len(space.element_shape))
    return np.where(occupied, values, space.fill_value)


def require_box_parts(space: Space[Any], wrapper: str) -> list[tuple[Path, Part]]:
    """The Box parts of ``space``, or a TypeError naming the wrapper when it has none."""
    parts = find_parts(space)
    if not parts:
        raise TypeError(
            f"{wrapper} acts on Box parts (a Box, MaskedBox, or Dict/Tuple holding them), "
            f"and {space} has none"
        )
    return parts


def require_box(space: Space[Any], wrapper: str, role: str = "observation") -> Box:
    """``space`` if it is a Box, else a TypeError naming the wrapper and the space."""
    if not isinstance(space, Box):
        raise TypeError(f"{wrapper} needs a Box {role} space, got {space}")
    return space
