"""Argument checks shared by sekai-core's modules."""

from __future__ import annotations

from numbers import Integral
from typing import TypeGuard


def is_whole_number(value: object) -> TypeGuard[int]:
    """True for a Python or NumPy integer (counts often come from NumPy configs); False for bool."""
    return isinstance(value, Integral) and not isinstance(value, bool)
