"""Cash-and-shares accounting shared by the trading envs, over a leading env axis.

An account holds ``cash`` (N,) and ``shares`` (N, A). Trading to target weights of equity is
sized on equity *net of the trade's own cost*, so a fully invested long-only account never
borrows to pay its costs (the FinRL #481 bug); every fill conserves value: cash changes by
exactly minus the traded value minus the cost.

Financing accrues once a period, after the period's trade and before its price move, on what
the account holds over the period (valued at the trade prices): ``cash_rate`` per period on
cash (earned when positive, paid when borrowed) less ``borrow_rate`` per period on the value of
short positions. It changes cash by exactly the amount ``financing`` returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from sekai.finance._rows import row_sums
from sekai.finance._scalar import sequential_sum
from sekai.finance.costs import LINEAR_COST_MODELS, SCALAR_COST_MODELS

__all__ = [
    "RUIN",
    "Account",
    "check_costs",
    "financing",
    "settle",
    "size_one",
    "size_one_linear",
    "size_weights",
    "size_weights_linear",
]

RUIN = 1e-9
"""Equity at or below this (starting equity is 1.0) ends the episode: the account is ruined."""

_TOLERANCE = 1e-13  # of equity: how exactly a trade is sized net of its own cost
_MAX_ROUNDS = 50
_NOT_CONVERGED = (
    "sizing a trade net of its cost did not converge: the cost model's marginal rate must "
    "stay below 1 (a trade must not cost more than its value)"
)


class Account:
    """Cash and share holdings of ``num_envs`` accounts in ``n_assets`` assets."""

    def __init__(self, num_envs: int, n_assets: int) -> None:
        self.cash = np.ones(num_envs)
        self.shares = np.zeros((num_envs, n_assets))
        self._sums = _sums if n_assets > 1 else _the_column

    def reset(self, indices: np.ndarray) -> None:
        """All cash, equity 1.0, for the accounts in ``indices``."""
        self.cash[indices] = 1.0
        self.shares[indices] = 0.0

    def equity(self, prices: np.ndarray) -> np.ndarray:
        """Cash plus holdings marked at ``prices`` (N, A)."""
        return self.cash + self._sums(self.shares * prices)[:, 0]

    def accrue(self, prices: np.ndarray, cash_rate: float, borrow_rate: float) -> np.ndarray:
        """Credit a period's ``financing`` (rates per period) to cash, on the holdings valued
        at ``prices`` (N, A); returns it, shape (N,)."""
        short_value: Any = 0.0  # at a zero rate the fee is 0.0 whatever the (finite) value
        if borrow_rate != 0.0:
            short_value = self._sums(np.maximum(-(self.shares * prices), 0.0))[:, 0]
        amount: np.ndarray = financing(self.cash, short_value, cash_rate, borrow_rate)
        self.cash += amount
        return amount

    def trade_to(
        self,
        prices: np.ndarray,
        equity: np.ndarray,
        weights: np.ndarray,
        cost_model: Callable[[np.ndarray], np.ndarray],
        keep: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Trade every account to hold ``weights`` (N, A) of its net-of-cost equity in each
        asset (rows where ``keep`` is True do not trade). Returns ``(cost, traded_value)``,
        shapes (N,) and (N,); cost is never negative.

        Net equity ``x`` solves ``x + cost(|weights * x - holdings|) = equity``, by secant
        steps from ``x = equity``: exact after one step for proportional costs whose trade
        directions do not change, and to 1e-13 of equity for any cost model whose marginal
        rate is below 1. So a fully invested account's cash is never below -1e-13 * equity.
        One asset with a linear cost has a closed form, used instead (``_linear_one_asset``).
        """
        holdings = self.shares * prices
        kept = None if keep is None else keep[:, None]
        # a kept row sized as weight 0 from holdings 0: its target 0.0 trades |0.0 - 0.0|,
        # the |h - h| = 0.0 of holding on, target - holdings is 0.0 as h - h, and its shares
        # stay (below); so one np.where here instead of one per round
        sized_weights = weights if kept is None else np.where(kept, 0.0, weights)
        sized_holdings = holdings if kept is None else np.where(kept, 0.0, holdings)
        sums = self._sums
        # a linear model's cost, rate * row sum, computed here: the same operations, and over
        # one asset without a reduction
        linear = type(cost_model) in LINEAR_COST_MODELS
        rate = cost_model.linear_rate() if linear else None  # type: ignore[attr-defined]
        trusted = type(cost_model) in SCALAR_COST_MODELS  # sekai's own: right by construction

        if rate is not None and weights.shape[1] == 1:
            cost, target, traded = _linear_one_asset(
                equity[:, None], sized_holdings, sized_weights, rate
            )
            return self._settle_trade(prices, target, sized_holdings, kept, cost, traded)

        # the secant runs on (N, 1) columns, which broadcast against the (N, A) rows
        def residual(net: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            target = sized_weights * net
            traded = np.abs(target - sized_holdings)
            if rate is not None:
                return rate * sums(traded), target, traded
            cost = np.asarray(cost_model(traded), dtype=np.float64)
            if not trusted:
                check_costs(cost, len(net))
            return cost[:, None], target, traded

        equity = equity[:, None]
        tolerance = _TOLERANCE * equity
        previous_net = equity
        previous_f, target, traded = residual(previous_net)  # the residual at equity: the cost
        net = equity - previous_f
        for _ in range(_MAX_ROUNDS):
            cost, target, traded = residual(net)
            f = net + cost - equity
            # count_nonzero: a C call, where .all() and np.ones_like go through Python (1 us)
            if np.count_nonzero(np.abs(f) <= tolerance) == len(f):  # a NaN is not converged
                break
            step = net - previous_net
            ones = np.empty_like(f)
            ones.fill(1.0)
            slope = np.divide(f - previous_f, step, out=ones, where=step != 0.0)
            previous_net, previous_f = net, f
            net = net - f / slope
        else:
            raise ValueError(_NOT_CONVERGED)
        return self._settle_trade(prices, target, sized_holdings, kept, cost, traded)

    def _settle_trade(
        self,
        prices: np.ndarray,
        target: np.ndarray,
        holdings: np.ndarray,
        kept: np.ndarray | None,
        cost: np.ndarray,
        traded: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Pay for the trade to ``target`` (the cost a column): cash and shares change."""
        sums = self._sums
        self.cash -= (sums(target - holdings) + cost)[:, 0]
        shares = target / prices
        self.shares = shares if kept is None else np.where(kept, self.shares, shares)
        return cost[:, 0], sums(traded)[:, 0]


def _linear_one_asset(
    equity: np.ndarray, holdings: np.ndarray, weights: np.ndarray, rate: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(cost, target, traded)`` of ``trade_to`` in one asset with a linear cost: net equity
    solves ``x + rate * |w x - h| = equity`` in closed form, as a purchase (``w x >= h``: ``x =
    (equity + rate h) / (1 + rate w)``) or else a sale (``x = (equity - rate h) / (1 - rate
    w)``); ``size_one_linear`` does the same operations on floats. Columns ``(N, 1)``. A
    marginal rate ``rate |w|`` of 1 or more is refused, as the secant refuses it."""
    marginal = rate * weights
    if np.count_nonzero(np.abs(marginal) >= 1.0):
        raise ValueError(_NOT_CONVERGED)
    rate_holdings = rate * holdings
    buying = (equity + rate_holdings) / (1.0 + marginal)
    selling = (equity - rate_holdings) / (1.0 - marginal)
    net = np.where(weights * buying - holdings >= 0.0, buying, selling)
    target = weights * net
    traded = np.abs(target - holdings)
    return rate * traded, target, traded


def _sums(values: np.ndarray) -> np.ndarray:
    """Each row's sum, as a column ``(N, 1)``."""
    return row_sums(values)[:, None]


def _the_column(values: np.ndarray) -> np.ndarray:
    """Each row's sum of one column, ``(N, 1)``: the array itself (but for a zero's sign)."""
    return values


def financing(cash: Any, short_value: Any, cash_rate: float, borrow_rate: float) -> Any:
    """A period's financing, credited to cash: interest ``cash_rate`` on ``cash`` (negative when
    cash is borrowed) less the fee ``borrow_rate`` on ``short_value``, the value of the short
    positions; rates per period. Floats or arrays, by the same operations (the single envs'
    fast path and the array models agree exactly)."""
    return cash * cash_rate - borrow_rate * short_value


def settle(before: np.ndarray, after: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A step's rewards ``log(after / before)`` of equity, net of costs, with ``after`` floored
    at ``RUIN``, and which accounts are ruined (their episode terminates)."""
    return np.log(np.maximum(after, RUIN) / before), after <= RUIN


def size_one(
    equity: float, holdings: float, weight: float, cost_of: Callable[[float], float]
) -> tuple[float, float, float]:
    """``Account.trade_to`` for one account in one asset, with Python floats and the same
    operations in the same order (the single envs' fast path; a test proves they agree).
    Returns ``(target holding, cost, traded value)``."""
    tolerance = _TOLERANCE * equity
    previous_net = equity
    previous_f = cost_of(abs(weight * previous_net - holdings))
    net = equity - previous_f
    for _ in range(_MAX_ROUNDS):
        target = weight * net
        traded = abs(target - holdings)
        cost = cost_of(traded)
        f = net + cost - equity
        if abs(f) <= tolerance:
            return target, cost, traded
        step = net - previous_net
        slope = (f - previous_f) / step if step != 0.0 else 1.0
        previous_net, previous_f = net, f
        net = net - f / slope
    raise ValueError(_NOT_CONVERGED)


def size_one_linear(
    equity: float, holdings: float, weight: float, rate: float
) -> tuple[float, float, float]:
    """``size_one`` for a cost of ``rate * traded``: the closed form of ``Account.trade_to``
    for one asset and a linear cost, with the same operations on floats. Returns ``(target
    holding, cost, traded value)``."""
    marginal = rate * weight
    if abs(marginal) >= 1.0:
        raise ValueError(_NOT_CONVERGED)
    rate_holdings = rate * holdings
    net = (equity + rate_holdings) / (1.0 + marginal)  # a purchase
    if not weight * net - holdings >= 0.0:
        net = (equity - rate_holdings) / (1.0 - marginal)  # a sale
    target = weight * net
    traded = abs(target - holdings)
    return target, rate * traded, traded


def size_weights(
    equity: float,
    holdings: list[float],
    weights: list[float],
    cost_of: Callable[[list[float]], float],
) -> tuple[list[float], float, float]:
    """``Account.trade_to`` for one account in several assets (at most ``EXACT_SUM_LENGTH``),
    with Python floats and the same operations in the same order (the single envs' fast path;
    a test proves they agree). ``cost_of`` is a cost model's ``cost_of_values``. Returns
    ``(target holdings, cost, total traded value)``."""
    tolerance = _TOLERANCE * equity
    pairs = list(zip(weights, holdings, strict=True))
    previous_net = equity
    previous_f = cost_of([abs(weight * previous_net - held) for weight, held in pairs])
    net = equity - previous_f
    for _ in range(_MAX_ROUNDS):
        traded = [abs(weight * net - held) for weight, held in pairs]  # |target - holdings|
        cost = cost_of(traded)
        f = net + cost - equity
        if abs(f) <= tolerance:
            if not 0.0 <= cost < math.inf:
                check_costs(np.array([cost]), 1)
            return [weight * net for weight in weights], cost, sequential_sum(traded)
        step = net - previous_net
        slope = (f - previous_f) / step if step != 0.0 else 1.0
        previous_net, previous_f = net, f
        net = net - f / slope
    raise ValueError(_NOT_CONVERGED)


def size_weights_linear(
    equity: float, holdings: list[float], weights: list[float], rate: float
) -> tuple[list[float], float, float]:
    """``size_weights`` for a cost model whose cost is ``rate * sum(traded)`` (its
    ``linear_rate``), with the same operations, each round's sum added up in a loop
    rather than through lists (most steps of Portfolio-v0's single env pay this); one asset
    in the closed form of ``size_one_linear``, as ``Account.trade_to``."""
    if len(weights) == 1:
        target, cost, traded = size_one_linear(equity, holdings[0], weights[0], rate)
        return [target], cost, traded
    tolerance = _TOLERANCE * equity
    pairs = list(zip(weights, holdings, strict=True))
    total = 0.0  # 0.0 + the first |value| is that value: the sum is numpy's, exactly
    for weight, held in pairs:
        total += abs(weight * equity - held)
    previous_net, previous_f = equity, rate * total
    net = equity - previous_f
    for _ in range(_MAX_ROUNDS):
        total = 0.0
        for weight, held in pairs:
            total += abs(weight * net - held)
        cost = rate * total
        f = net + cost - equity
        if abs(f) <= tolerance:
            if not 0.0 <= cost < math.inf:
                check_costs(np.array([cost]), 1)
            return [weight * net for weight in weights], cost, total
        step = net - previous_net
        slope = (f - previous_f) / step if step != 0.0 else 1.0
        previous_net, previous_f = net, f
        net = net - f / slope
    raise ValueError(_NOT_CONVERGED)


def check_costs(cost: np.ndarray, num_envs: int) -> None:
    """A cost model's result must be ``num_envs`` finite, non-negative costs."""
    if cost.shape != (num_envs,) or not (np.isfinite(cost) & (cost >= 0.0)).all():
        raise ValueError(
            f"a cost model must return {num_envs} finite non-negative costs, got {cost!r}"
        )
