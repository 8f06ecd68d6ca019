"""Transaction cost models, vectorised over a leading env axis.

A cost model is any callable taking the absolute traded value per asset, an array of shape
``(num_envs, n_assets)`` in units of money (the envs' equity starts at 1.0), and returning the
cost of each env's trades, shape ``(num_envs,)``, never negative. Every buy and every sell is
charged (both legs of a round trip). ``cost_model=`` of the finance envs takes these classes or
your own callable of the same form; ``transaction_cost=c`` means ``ProportionalCost(c)``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from sekai.finance._scalar import sequential_sum

__all__ = [
    "DEFAULT_TRANSACTION_COST",
    "CostModel",
    "HalfSpreadCost",
    "ProportionalCost",
    "SquareRootImpact",
    "check_cost",
    "resolve_costs",
]


class CostModel(Protocol):
    """What ``cost_model=`` accepts: absolute traded values ``(N, A)`` -> costs ``(N,)``."""

    def __call__(self, traded_value: np.ndarray) -> np.ndarray: ...


class ProportionalCost:
    """A fraction ``rate`` of every traded value (commission and fees): ``rate * sum |v|``."""

    def __init__(self, rate: float) -> None:
        self.rate = check_cost("rate", rate)

    def __call__(self, traded_value: np.ndarray) -> np.ndarray:
        return self.rate * traded_value.sum(axis=-1)

    def cost_of_one(self, value: float) -> float:
        """The cost of one trade of ``value``, with the operations of ``__call__``: the
        single envs' scalar fast path uses it."""
        return self.rate * value

    def cost_of_values(self, values: list[float]) -> float:
        """The cost of one env's trades (at most ``EXACT_SUM_LENGTH`` values), with the
        operations of ``__call__``."""
        return self.rate * sequential_sum(values)

    def linear_rate(self) -> float:
        """``r`` such that the cost is ``r * sum(traded)``, computed that way, exactly."""
        return self.rate

    def __repr__(self) -> str:
        return f"ProportionalCost({self.rate})"


class HalfSpreadCost:
    """Crossing the bid-ask spread: half of ``spread`` (relative to the mid price) per trade."""

    def __init__(self, spread: float) -> None:
        self.spread = check_cost("spread", spread)

    def __call__(self, traded_value: np.ndarray) -> np.ndarray:
        return 0.5 * self.spread * traded_value.sum(axis=-1)

    def cost_of_one(self, value: float) -> float:
        """The cost of one trade of ``value``, with the operations of ``__call__``."""
        return 0.5 * self.spread * value

    def cost_of_values(self, values: list[float]) -> float:
        """The cost of one env's trades, with the operations of ``__call__``."""
        return 0.5 * self.spread * sequential_sum(values)

    def linear_rate(self) -> float:
        """``r`` such that the cost is ``r * sum(traded)``, computed that way, exactly
        (``__call__`` multiplies ``0.5 * spread`` first)."""
        return 0.5 * self.spread

    def __repr__(self) -> str:
        return f"HalfSpreadCost({self.spread})"


class SquareRootImpact:
    """Market impact by the square-root law: a trade of value ``v`` costs
    ``coefficient * volatility * v * sqrt(v / daily_volume)``.

    ``volatility`` is the asset's daily return volatility and ``daily_volume`` its daily traded
    value in the envs' money units (equity starts at 1.0). The law and typical coefficients
    (about 0.5 to 1) are from Almgren, Thum, Hauptmann and Li, "Direct estimation of equity
    market impact" (Risk, 2005) and Bouchaud et al., "Trades, Quotes and Prices" (2018), ch. 12.
    """

    def __init__(
        self, coefficient: float = 0.7, volatility: float = 0.02, daily_volume: float = 100.0
    ) -> None:
        self.coefficient = check_cost("coefficient", coefficient)
        self.volatility = check_cost("volatility", volatility)
        self.daily_volume = check_cost("daily_volume", daily_volume)
        if self.daily_volume == 0.0:
            raise ValueError("daily_volume must be positive, got 0.0")

    def __call__(self, traded_value: np.ndarray) -> np.ndarray:
        scale = self.coefficient * self.volatility / math.sqrt(self.daily_volume)
        return scale * (traded_value * np.sqrt(traded_value)).sum(axis=-1)

    def cost_of_one(self, value: float) -> float:
        """The cost of one trade of ``value``, with the operations of ``__call__``."""
        scale = self.coefficient * self.volatility / math.sqrt(self.daily_volume)
        return scale * (value * math.sqrt(value))

    def cost_of_values(self, values: list[float]) -> float:
        """The cost of one env's trades, with the operations of ``__call__``."""
        scale = self.coefficient * self.volatility / math.sqrt(self.daily_volume)
        return scale * sequential_sum([value * math.sqrt(value) for value in values])

    def __repr__(self) -> str:
        return (
            f"SquareRootImpact(coefficient={self.coefficient}, volatility={self.volatility}, "
            f"daily_volume={self.daily_volume})"
        )


def check_cost(name: str, value: object) -> float:
    """``value`` as a float if it is a finite non-negative number, else a ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number < 0.0:
        raise ValueError(f"{name} must be a finite non-negative number, got {value!r}")
    return number


SCALAR_COST_MODELS = (ProportionalCost, HalfSpreadCost, SquareRootImpact)
"""The cost models with the scalar forms ``cost_of_one`` and ``cost_of_values`` (exact types:
a subclass may change ``__call__``); their costs of finite trades are finite and non-negative
by construction, so ``Account.trade_to`` checks only other models' costs."""


def scalar_cost_of(
    cost_model: Any, form: str, through_array: Callable[..., float]
) -> Callable[..., float]:
    """The single envs' fast cost function: the model's own scalar ``form`` (``"cost_of_one"``
    or ``"cost_of_values"``) where it has one, else ``through_array`` bound to the model (which
    calls it on arrays, as the array model does)."""
    if type(cost_model) in SCALAR_COST_MODELS:
        return getattr(cost_model, form)  # type: ignore[no-any-return]
    return functools.partial(through_array, cost_model)


LINEAR_COST_MODELS = (ProportionalCost, HalfSpreadCost)
"""The cost models whose cost is ``linear_rate() * sum(traded)`` (exact types)."""


DEFAULT_TRANSACTION_COST = 0.001
"""10 basis points of every traded value: the envs' default ``transaction_cost``."""


def resolve_costs(
    cost_model: CostModel | None, transaction_cost: float | None
) -> tuple[CostModel, float | None]:
    """An env's ``(cost_model, transaction_cost)`` from its arguments: ``transaction_cost=c``
    means ``ProportionalCost(c)`` (0.001 when neither is given); giving both is a ValueError."""
    if cost_model is not None and transaction_cost is not None:
        raise ValueError(
            f"give cost_model ({cost_model!r}) or transaction_cost ({transaction_cost!r}), "
            "not both: transaction_cost=c means cost_model=ProportionalCost(c)"
        )
    if cost_model is not None:
        return cost_model, None
    rate = check_cost(
        "transaction_cost",
        DEFAULT_TRANSACTION_COST if transaction_cost is None else transaction_cost,
    )
    if rate >= 1.0:
        raise ValueError(
            f"transaction_cost must be below 1 (a fraction of the traded value), got {rate!r}"
        )
    model = ProportionalCost(rate)
    return model, model.rate
