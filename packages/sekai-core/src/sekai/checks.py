"""Argument checks that every sekai distribution shares, so a count or a seed means the same
everywhere (sekai-vector, sekai-finance and third-party envs use them too)."""

from __future__ import annotations

from numbers import Integral
from typing import TypeGuard

__all__ = ["check_positive_int", "check_seed", "is_whole_number"]


def is_whole_number(value: object) -> TypeGuard[int]:
    """True for a Python or NumPy integer (counts often come from NumPy configs); False for bool."""
    return isinstance(value, Integral) and not isinstance(value, bool)


def check_seed(seed: object) -> int | None:
    """``seed`` as a Python int, or None: the one rule for every seed sekai takes.

    TypeError for anything but a Python or NumPy integer or None (True, 1.5 and "3" are not
    seeds); ValueError for a negative int, which NumPy's generators refuse.
    """
    if seed is None:
        return None
    if not is_whole_number(seed):
        raise TypeError(f"seed must be an int or None, got {type(seed).__name__} {seed!r}")
    if seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed}")
    return int(seed)


def check_positive_int(value: object, name: str) -> int:
    """``value`` as a Python int >= 1 (a count such as num_envs or max_episode_steps).

    TypeError for anything but a Python or NumPy integer; ValueError below 1.
    """
    if not is_whole_number(value):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    return int(value)
