"""What the classic-control envs share: their ``state`` attribute, their reset options and the
check of continuous actions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, overload

import numpy as np


class FloatState:
    """An env's ``state``: a tuple of floats named by ``names``; None before the first reset.

    It reads and writes the env's ``_state``, which ``step`` uses directly, so the hot path pays
    nothing for the descriptor. Assigning accepts any sequence of numbers of the right length.
    """

    def __init__(self, *names: str) -> None:
        self.names = names
        self.__doc__ = f"({', '.join(names)}) as floats; None before the first reset."

    @overload
    def __get__(self, env: None, owner: type) -> FloatState: ...
    @overload
    def __get__(self, env: object, owner: type | None = None) -> tuple[float, ...] | None: ...
    def __get__(self, env: Any, owner: type | None = None) -> Any:
        return self if env is None else env._state

    def __set__(self, env: Any, value: Sequence[float]) -> None:
        state = tuple(map(float, value))
        if len(state) != len(self.names):
            raise ValueError(
                f"state must be {len(self.names)} numbers ({', '.join(self.names)}), "
                f"got {len(state)}"
            )
        env._state = state


def reset_options(options: dict[str, Any] | None, **defaults: float) -> dict[str, float]:
    """The options ``reset`` accepts, as floats, with ``defaults`` for those not given."""
    if options is None:
        return defaults
    if not isinstance(options, dict):
        raise TypeError(
            f"options must be a dict or None, got {type(options).__name__} {options!r}; "
            f"this env accepts {sorted(defaults)}"
        )
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise ValueError(f"unknown reset options {unknown}; this env accepts {sorted(defaults)}")
    values = {**defaults, **options}
    try:
        return {name: float(value) for name, value in values.items()}
    except (TypeError, ValueError):
        raise ValueError(f"reset options must be numbers, got {options!r}") from None


def uniform_bounds(options: dict[str, Any] | None, low: float, high: float) -> tuple[float, float]:
    """The ``low``/``high`` reset options (defaults ``low`` and ``high``), checked for order."""
    bounds = reset_options(options, low=low, high=high)
    if bounds["low"] > bounds["high"]:
        raise ValueError(f"reset option low={bounds['low']} must not exceed high={bounds['high']}")
    return bounds["low"], bounds["high"]


def discrete_action(action: Any, n: int, allowed: str) -> int:
    """``action`` as an int in ``range(n)``; ValueError, starting with ``allowed``, for anything
    that is not a member of ``Discrete(n)``.

    ``==`` would let True, 1.0 or ``np.array([1])`` through as 1; gymnasium's envs refuse them.
    """
    if (
        type(action) is int
        or isinstance(action, np.integer)
        or (isinstance(action, np.ndarray) and action.shape == () and action.dtype.kind in "iu")
    ) and 0 <= action < n:
        return int(action)
    raise ValueError(f"{allowed}, got {action!r}")


def continuous_action(action: Any, env: str) -> float:
    """The number in a continuous action of shape (1,); ValueError for another shape or NaN.

    Values outside the bounds are clipped by the env, as in gymnasium; a wrong shape or a NaN
    would otherwise be used silently (only the first entry read, or a NaN state for good).
    """
    if np.shape(action) != (1,):
        raise ValueError(f"{env} actions are arrays of shape (1,), got {action!r}")
    value = float(action[0])
    if math.isnan(value):
        raise ValueError(f"{env} actions must not be NaN, got {action!r}")
    return value
