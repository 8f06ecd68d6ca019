"""The check of continuous actions that the market models share."""

from __future__ import annotations

from typing import Any

import numpy as np


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
