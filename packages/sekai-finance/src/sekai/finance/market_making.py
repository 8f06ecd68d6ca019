"""The MarketMaking-v0 market model (Avellaneda-Stoikov), over a leading env axis.

Avellaneda, M. and Stoikov, S. (2008), "High-frequency trading in a limit order book",
Quantitative Finance 8(3), 217-224. The mid-price follows an arithmetic Brownian motion,
``dS = sigma dW``. A dealer quotes a bid at ``S - bid_depth`` and an ask at ``S + ask_depth``;
market orders reach each side with intensity ``A exp(-k depth)``, so, as in the paper's
simulations, over a step of length ``dt`` a quote is filled (one unit) with probability
``A exp(-k depth) dt`` (capped at 1): one Bernoulli draw per side per step
(``fill_model="bernoulli"``). ``fill_model="poisson"`` uses ``1 - exp(-A exp(-k depth) dt)``
instead, the chance of at least one arrival of the Poisson process within the step, which stays
a probability however long the step. The inventory cap is the env's addition, not the paper's:
a fill that would take the inventory past ``max_inventory`` (long or short) does not happen, so
``|inventory| <= max_inventory`` always.

Within a step the quotes are set around the mid at its start (the dealer sees nothing of the
step's move), the mid moves, and each quote's fill is drawn with its depth measured from the mid
at the step's end, which is negative for a quote the price moved through. The orders of a step
arrive while the price moves, so a quote is more likely hit when the price moved through it and
less when it moved away: that adverse selection is the paper's (its Table 1 is reproduced;
drawn against the opening mid instead, the fills ignore it and the dealer earns about 2 more
than the paper's 62.94 at gamma 0.1).

The step's PnL is the change in the dealer's equity ``cash + inventory * mid`` (0 at the
start); the reward is that PnL less Cartea and Jaimungal's running inventory penalty
``phi * inventory**2 * dt`` (Cartea, Jaimungal and Penalva (2015), "Algorithmic and
High-Frequency Trading", ch. 10), zero with ``phi = 0``. An episode ends (terminated) after
``episode_length`` steps; the inventory left is valued at the mid. The episode figures treat
``capital = start_price * max_inventory``, the value of a full inventory, as the dealer's
capital: ``episode_return`` is the episode's PnL over it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from sekai.finance._actions import check_box_actions
from sekai.finance.accounting import RUIN
from sekai.finance.metrics import EpisodeMetrics

__all__ = ["FILL_MODELS", "MarketMakingModel", "MarketMakingStep", "fill_probability"]


FILL_MODELS = ("bernoulli", "poisson")
"""The fill models: ``"bernoulli"``, the paper's (intensity times ``dt``, at most 1), and
``"poisson"``, the chance of at least one arrival of the Poisson process within ``dt``."""


def fill_probability(
    depth: np.ndarray,
    arrival_rate: float,
    depth_decay: float,
    dt: float,
    fill_model: str = "bernoulli",
) -> np.ndarray:
    """Chance that a quote ``depth`` away from the mid is hit within a step of ``dt``, market
    orders arriving with intensity ``arrival_rate * exp(-depth_decay * depth)``.

    ``"bernoulli"`` (Avellaneda and Stoikov's simulation, and mbt_gym's): the intensity times
    ``dt``, capped at 1. ``"poisson"``: ``1 - exp(-intensity * dt)``, at least one arrival
    within the step, which is a probability for any ``dt``; it is smaller, by 28% at depth 0
    with the defaults."""
    # a depth below -700 / k is certain to fill: capping the exponent spares an overflow
    rate = arrival_rate * np.exp(np.minimum(-depth_decay * depth, 700.0)) * dt
    if fill_model == "poisson":
        return -np.expm1(-rate)
    return np.minimum(rate, 1.0)


class MarketMakingStep(NamedTuple):
    """What one step did, per env: quotes, fills (bools), PnL, inventory penalty, and the
    equity after the step."""

    bid: np.ndarray
    ask: np.ndarray
    bid_filled: np.ndarray
    ask_filled: np.ndarray
    pnl: np.ndarray
    penalty: np.ndarray
    equity: np.ndarray


class MarketMakingModel:
    """State of ``num_envs`` dealers; reads its parameters from ``params`` every step
    (``start_price``, ``sigma``, ``dt``, ``episode_length``, ``arrival_rate``, ``depth_decay``,
    ``max_inventory``, ``inventory_penalty``, ``max_depth``)."""

    def __init__(self, params: Any, num_envs: int) -> None:
        self.params = params
        self.price = np.zeros(num_envs)  # the mid
        self.cash = np.zeros(num_envs)
        self.position = np.zeros(num_envs)  # the inventory, in units
        self.steps = np.zeros(num_envs, dtype=np.int64)
        self.metrics = EpisodeMetrics(num_envs)

    @property
    def equity(self) -> np.ndarray:
        """Cash plus inventory at the mid: the PnL so far this episode."""
        return self.cash + self.position * self.price

    @property
    def time_remaining(self) -> np.ndarray:
        """Time units left in each env's episode."""
        return (self.params.episode_length - self.steps) * self.params.dt

    def reset(
        self,
        indices: np.ndarray,
        options: list[dict[str, Any] | None],
        rng: np.random.Generator,
    ) -> dict[str, Any]:
        if any(options):
            raise ValueError(f"MarketMaking-v0 takes no reset options, got {options!r}")
        self.price[indices] = self.params.start_price
        self.cash[indices] = 0.0
        self.position[indices] = 0.0
        self.steps[indices] = 0
        self.metrics.reset(indices)
        return {
            "price": self.price[indices],
            "position": self.position[indices],
            "cash": self.cash[indices],
            "equity": self.equity[indices],
            "time_remaining": self.time_remaining[indices],
        }

    def observe(self) -> np.ndarray:
        """``[inventory, time_remaining]`` of every env, float32."""
        observation = np.empty((len(self.position), 2), dtype=np.float32)  # no stacked copy
        observation[:, 0] = self.position
        observation[:, 1] = self.time_remaining
        return observation

    def step(
        self, actions: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        params = self.params
        n = len(self.price)
        depths = check_box_actions(
            actions, 0.0, params.max_depth, (n, 2), "[bid_depth, ask_depth] quotes"
        )
        done = self.advance(depths, rng.random((n, 2)), rng.standard_normal(n))
        capital = params.start_price * params.max_inventory
        after = np.maximum(capital + done.equity, RUIN)
        before = np.maximum(after - done.pnl, RUIN)
        traded_value = done.bid * done.bid_filled + done.ask * done.ask_filled
        self.metrics.update(np.log(after / before), traded_value / before)
        terminated = self.steps >= params.episode_length
        infos = {
            **done._asdict(),
            "price": self.price.copy(),  # copies: a reset changes the state in place
            "position": self.position.copy(),
            "cash": self.cash.copy(),
            "time_remaining": self.time_remaining,
        }
        infos.update(self.metrics.final_infos(terminated, 1.0 / params.dt))
        truncated = np.zeros(n, dtype=bool)
        return done.pnl - done.penalty, terminated, truncated, infos

    def advance(
        self, depths: np.ndarray, uniforms: np.ndarray, shocks: np.ndarray
    ) -> MarketMakingStep:
        """One step of every env with the given draws: ``depths`` (N, 2) bid and ask depths,
        ``uniforms`` (N, 2) for the bid and ask fills, ``shocks`` (N,) standard normals for
        the mid. The quotes are set around the mid before the move; the fills are drawn with
        the depths from the mid after it. Fills trade one unit at the quoted price: cash and
        inventory change by exactly the traded amounts."""
        params = self.params
        equity_before = self.equity
        bid = self.price - depths[:, 0]
        ask = self.price + depths[:, 1]
        self.price += params.sigma * np.sqrt(params.dt) * shocks
        depths_after_move = np.stack([self.price - bid, ask - self.price], axis=1)
        hit = uniforms < fill_probability(
            depths_after_move,
            params.arrival_rate,
            params.depth_decay,
            params.dt,
            params.fill_model,
        )
        bid_filled = hit[:, 0] & (self.position < params.max_inventory)
        ask_filled = hit[:, 1] & (self.position > -params.max_inventory)
        self.cash += np.where(ask_filled, ask, 0.0) - np.where(bid_filled, bid, 0.0)
        self.position += bid_filled.astype(np.float64) - ask_filled
        self.steps += 1
        equity = self.equity
        penalty = params.inventory_penalty * params.dt * self.position**2
        return MarketMakingStep(
            bid, ask, bid_filled, ask_filled, equity - equity_before, penalty, equity
        )
