"""Checks of the finance envs' constructor arguments: a ValueError naming the bad value."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def positive(name: str, value: float) -> float:
    """``value`` as a float if it is finite and > 0, else a ValueError naming it."""
    if not _is_real(value) or not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def non_negative(name: str, value: float) -> float:
    """``value`` as a float if it is finite and >= 0, else a ValueError naming it."""
    if not _is_real(value) or not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def steps(name: str, value: int) -> int:
    """``value`` if it is an int >= 1, else a TypeError or ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value!r}")
    return int(value)


def render_mode(value: str | None, allowed: list[str]) -> str | None:
    """``value`` if it is None or one of ``allowed``, else a ValueError naming it."""
    if value is not None and value not in allowed:
        raise ValueError(f"render_mode must be None or one of {allowed}, got {value!r}")
    return value


def _is_real(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


def box_actions(
    actions: Any, low: float, high: float, shape: tuple[int, ...], env: str
) -> np.ndarray:
    """``actions`` as a float64 array of ``shape`` within ``[low, high]``; else a ValueError
    naming the bad value (NaN included), since clipping would hide a policy's bug."""
    array = np.asarray(actions, dtype=np.float64)
    if array.shape != shape:
        raise ValueError(f"{env} actions must have shape {shape}, got {actions!r}")
    inside = (array >= low) & (array <= high)  # NaN fails both comparisons
    if not inside.all():
        index = tuple(int(i) for i in np.argwhere(~inside)[0])
        raise ValueError(
            f"{env} actions must lie in [{low}, {high}], got {float(array[index])!r} at index "
            f"{index[0] if len(index) == 1 else index}"
        )
    return array
