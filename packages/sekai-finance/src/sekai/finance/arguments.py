"""Checks of the numeric arguments that the market models and their envs share: each returns
the value normalised (an int, a float) or raises a ValueError that names the argument."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def check_int(name: str, value: Any, minimum: int) -> int:
    """``value`` as an int if it is an integer of at least ``minimum``, else a ValueError."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an int of at least {minimum}, got {value!r}")
    return int(value)


def check_float(name: str, value: Any, minimum: float = -math.inf) -> float:
    """``value`` as a float if it is a finite number of at least ``minimum``, else ValueError."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number < minimum:
        raise ValueError(f"{name} must be a finite number of at least {minimum}, got {value!r}")
    return number


def check_positive(name: str, value: Any) -> float:
    """``value`` as a float if it is a finite number > 0, else a ValueError naming it."""
    number = check_float(name, value, 0.0)
    if number == 0.0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return number


def check_box_actions(
    actions: Any, low: float, high: float, shape: tuple[int, ...], what: str
) -> np.ndarray:
    """``actions`` as a float64 array of ``shape`` within ``[low, high]``, else a ValueError
    naming the first bad value and where it is (NaN included): clipping would hide a policy's
    bug."""
    array = np.asarray(actions, dtype=np.float64)
    if array.shape != shape:
        raise ValueError(f"expected {what} of shape {shape}, got shape {array.shape}")
    if array.min() >= low and array.max() <= high:  # a NaN is the min and max: fails both
        return array
    inside = (array >= low) & (array <= high)
    if not inside.all():
        row = int(np.argwhere(~inside)[0][0])
        bad = array[row][~inside[row]][0] if array.ndim > 1 else array[row]
        raise ValueError(
            f"action {float(bad)!r} (env {row}) is outside [{low}, {high}]: {what} must lie "
            "in the action space"
        )
    return array
