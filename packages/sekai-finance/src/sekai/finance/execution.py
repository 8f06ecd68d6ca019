"""The Almgren-Chriss optimal-execution model, as array functions over a leading env axis.

Almgren, R. and Chriss, N. (2000), "Optimal execution of portfolio transactions", Journal of Risk
3(2), 5-39. A trader must sell (``side=+1``) or buy (``side=-1``) a block of shares over
``episode_length`` steps of length ``tau``. Trading ``n`` shares in a step fills at

    S - side * (epsilon + eta * n / tau)        (temporary impact: this trade only)

and then moves the price for good,

    S <- S + sigma * sqrt(tau) * shock - side * gamma * n       (permanent impact).

The step's PnL is the change in ``cash + side * remaining * S`` (the block still held, or still
owed, marked at the price), so the PnL of an episode sums to minus the implementation shortfall
``side * (X * S0 - sum(n * fill price))``. The reward subtracts Almgren and Chriss's risk term
``lambda * sigma**2 * tau * remaining**2``, the variance the unexecuted shares carry over the
next step (zero with the default ``lambda = 0``). The last step trades whatever remains.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class ExecutionState:
    """Every trader's state, one row per env: price, cash, shares left to trade, steps taken."""

    def __init__(self, num_envs: int) -> None:
        self.price = np.zeros(num_envs)
        self.cash = np.zeros(num_envs)
        self.remaining = np.zeros(num_envs)
        self.steps = np.zeros(num_envs, dtype=np.int64)

    def reset(self, indices: np.ndarray | slice, price: float, shares: float) -> None:
        """Start the rows ``indices`` with ``shares`` to trade at ``price`` and no cash."""
        self.price[indices] = price
        self.cash[indices] = 0.0
        self.remaining[indices] = shares
        self.steps[indices] = 0

    def value(self, side: int) -> np.ndarray:
        """Cash plus the position (``side * remaining`` shares) marked at the price."""
        return self.cash + side * self.remaining * self.price


class ExecutionStep(NamedTuple):
    """What one step did, per row: shares traded, their fill price, impact cost, PnL, reward."""

    reward: np.ndarray
    pnl: np.ndarray
    risk: np.ndarray
    traded: np.ndarray
    fill_price: np.ndarray
    cost: np.ndarray


def step_execution(
    state: ExecutionState,
    fraction: np.ndarray,
    shocks: np.ndarray,
    *,
    side: int,
    episode_length: int,
    tau: float,
    sigma: float,
    temporary_impact: float,
    permanent_impact: float,
    half_spread: float,
    risk_aversion: float,
) -> ExecutionStep:
    """Trade ``fraction`` (in [0, 1]) of each row's remaining shares, in place.

    A row on its last step trades all it has left, whatever its fraction. ``cost`` is what the
    trade paid against the pre-trade price, ``traded * (half_spread + temporary_impact * rate)``:
    never negative.
    """
    value_before = state.value(side)
    last = state.steps + 1 >= episode_length
    traded = np.where(last, state.remaining, fraction * state.remaining)
    slippage = np.where(traded > 0, half_spread, 0.0) + temporary_impact * traded / tau
    fill_price = state.price - side * slippage
    state.cash += side * traded * fill_price
    state.remaining -= traded  # exactly zero after the last step: x - x == 0
    state.price += sigma * np.sqrt(tau) * shocks - side * permanent_impact * traded
    state.steps += 1
    pnl = state.value(side) - value_before
    risk = risk_aversion * sigma**2 * tau * state.remaining**2
    return ExecutionStep(pnl - risk, pnl, risk, traded, fill_price, traded * slippage)
