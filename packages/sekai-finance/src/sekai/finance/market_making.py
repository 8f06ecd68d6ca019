"""The Avellaneda-Stoikov market-making model, as array functions over a leading env axis.

Avellaneda, M. and Stoikov, S. (2008), "High-frequency trading in a limit order book",
Quantitative Finance 8(3), 217-224. The mid-price follows an arithmetic Brownian motion,
``dS = sigma dW``. A dealer quotes a bid at ``S - bid_depth`` and an ask at ``S + ask_depth``;
market orders hit each side as a Poisson process of intensity ``A exp(-k depth)``, so over a step
of length ``dt`` a quote is filled (one unit) with probability ``1 - exp(-A exp(-k depth) dt)``.
The dealer stops quoting the bid at ``+max_inventory`` and the ask at ``-max_inventory``.

The step's PnL is the change in the dealer's value ``cash + inventory * mid``; the reward is that
PnL less Cartea and Jaimungal's running inventory penalty ``phi * inventory**2 * dt`` (Cartea,
Jaimungal and Penalva (2015), "Algorithmic and High-Frequency Trading", ch. 10), which is zero
with the default ``phi = 0``.

The single env (one row) and the native vector env (``num_envs`` rows) both step through
:func:`step_market_making`, so the two cannot drift apart.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class MarketMakingState:
    """Every dealer's state, one row per env: mid-price, cash, inventory and steps taken."""

    def __init__(self, num_envs: int) -> None:
        self.mid = np.zeros(num_envs)
        self.cash = np.zeros(num_envs)
        self.inventory = np.zeros(num_envs)
        self.steps = np.zeros(num_envs, dtype=np.int64)

    def reset(self, indices: np.ndarray | slice, mid: float) -> None:
        """Start the rows ``indices`` flat, with no cash, at the mid-price ``mid``."""
        self.mid[indices] = mid
        self.cash[indices] = 0.0
        self.inventory[indices] = 0.0
        self.steps[indices] = 0

    def value(self) -> np.ndarray:
        """Mark-to-market value: cash plus inventory at the mid-price."""
        return self.cash + self.inventory * self.mid


class MarketMakingStep(NamedTuple):
    """What one step did, per row (price units; fills as 0/1)."""

    reward: np.ndarray
    pnl: np.ndarray
    penalty: np.ndarray
    bid: np.ndarray
    ask: np.ndarray
    bid_filled: np.ndarray
    ask_filled: np.ndarray


def fill_probability(
    depth: np.ndarray, arrival_rate: float, depth_decay: float, dt: float
) -> np.ndarray:
    """Chance that a quote ``depth`` away from the mid is hit within ``dt``: at least one
    arrival of a Poisson process of intensity ``arrival_rate * exp(-depth_decay * depth)``."""
    return -np.expm1(-arrival_rate * np.exp(-depth_decay * depth) * dt)


def step_market_making(
    state: MarketMakingState,
    bid_depth: np.ndarray,
    ask_depth: np.ndarray,
    uniforms: np.ndarray,
    shocks: np.ndarray,
    *,
    sigma: float,
    dt: float,
    arrival_rate: float,
    depth_decay: float,
    max_inventory: float,
    inventory_penalty: float,
) -> MarketMakingStep:
    """Advance every row by one step of length ``dt``, in place.

    The quotes are set around the current mid; each side fills when its uniform draw
    (``uniforms[:, 0]`` bid, ``uniforms[:, 1]`` ask) falls below its fill probability and the
    inventory limit allows it; then the mid moves by ``sigma * sqrt(dt) * shocks``. Fills trade
    one unit at the quoted price, so cash and inventory change by exactly the traded amounts.
    """
    value_before = state.value()
    bid = state.mid - bid_depth
    ask = state.mid + ask_depth
    bid_filled = (uniforms[:, 0] < fill_probability(bid_depth, arrival_rate, depth_decay, dt)) & (
        state.inventory < max_inventory
    )
    ask_filled = (uniforms[:, 1] < fill_probability(ask_depth, arrival_rate, depth_decay, dt)) & (
        state.inventory > -max_inventory
    )
    state.cash += np.where(ask_filled, ask, 0.0) - np.where(bid_filled, bid, 0.0)
    state.inventory += bid_filled.astype(np.float64) - ask_filled
    state.mid += sigma * np.sqrt(dt) * shocks
    state.steps += 1
    pnl = state.value() - value_before
    penalty = inventory_penalty * dt * state.inventory**2
    return MarketMakingStep(pnl - penalty, pnl, penalty, bid, ask, bid_filled, ask_filled)
