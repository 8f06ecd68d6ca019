"""Env parameters: read-only or checked on every change, with the checks the envs share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sekai.finance.costs import CostModel


class ReadOnly:
    """A parameter fixed at construction (it fixes array shapes, or is data): reading returns
    ``obj._<name>``; setting raises AttributeError, on the single env and its native version
    alike. With ``value`` it is a class-wide constant (``metadata``)."""

    def __init__(self, reason: str, value: Any = None) -> None:
        self.reason = reason
        self.value = value
        self.name = self.key = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.key = name, "_" + name

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if self.value is not None:
            return self.value
        if obj is None:
            return self
        return obj.__dict__[self.key]

    def __set__(self, obj: object, value: Any) -> None:
        raise AttributeError(
            f"{self.name} is read-only: {self.reason}; build a new env with the value you want"
        )


class Parameter:
    """A parameter that may change between steps (``env.sigma = 0.0``, ``vec.set_attr``):
    ``check`` validates and normalises every new value, raising ValueError naming it. The value
    lives in the instance's ``__dict__`` under the parameter's name, and the descriptor has no
    ``__get__``, so reading it (every step) is a plain attribute lookup."""

    def __init__(self, check: Callable[[Any], Any]) -> None:
        self.check = check
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __set__(self, obj: object, value: Any) -> None:
        obj.__dict__[self.name] = self.check(value)


def check_cost_model(value: Any) -> CostModel:
    """A cost model is any callable (see ``sekai.finance.costs``)."""
    if not callable(value):
        raise ValueError(
            "cost_model must be a callable mapping traded values (num_envs, n_assets) to costs "
            f"(num_envs,), such as sekai.finance.ProportionalCost(0.001); got {value!r}"
        )
    return value  # type: ignore[no-any-return]


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)
