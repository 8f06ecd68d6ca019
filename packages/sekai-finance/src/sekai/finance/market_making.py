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
High-Frequency Trading", ch. 10), zero with ``phi = 0``, and, on the episode's last step, their
terminal penalty ``alpha * inventory**2`` (the cost of liquidating what is left, zero with
``alpha = 0``). An episode ends (terminated) after ``episode_length`` steps; the inventory left
is valued at the mid. The episode figures treat
``capital = start_price * max_inventory``, the value of a full inventory, as the dealer's
capital: ``episode_return`` is the episode's PnL over it.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from sekai.core import StepResult
from sekai.finance._scalar import step_result
from sekai.finance.accounting import RUIN
from sekai.finance.arguments import check_box_actions
from sekai.finance.metrics import EpisodeMetrics, ScalarEpisodeMetrics

__all__ = [
    "FILL_MODELS",
    "MarketMakingModel",
    "MarketMakingModelOne",
    "MarketMakingStep",
    "fill_probability",
]


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
    ``max_inventory``, ``inventory_penalty``, ``terminal_penalty``, ``max_depth``)."""

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
        running = params.inventory_penalty * params.dt
        terminal = np.where(self.steps >= params.episode_length, params.terminal_penalty, 0.0)
        penalty = (running + terminal) * self.position**2
        return MarketMakingStep(
            bid, ask, bid_filled, ask_filled, equity - equity_before, penalty, equity
        )


class MarketMakingModelOne:
    """``MarketMakingModel`` for one env in Python floats: the single env's fast path. A step
    draws the same random numbers and does the operations of ``step`` and ``advance`` in the
    same order (a test proves the two agree exactly). State attributes are Python scalars."""

    def __init__(self, params: Any) -> None:
        self.params = params
        # read-only parameters: read once
        self.dt: float = params.dt
        self.episode_length: int = params.episode_length
        self.max_inventory: int = params.max_inventory
        self.price = self.cash = self.position = 0.0
        self.steps = 0
        self.metrics = ScalarEpisodeMetrics()

    @property
    def equity(self) -> float:
        """Cash plus inventory at the mid: the PnL so far this episode."""
        return self.cash + self.position * self.price

    @property
    def time_remaining(self) -> float:
        """Time units left in the episode."""
        return (self.episode_length - self.steps) * self.dt

    def reset(
        self,
        indices: np.ndarray,
        options: list[dict[str, Any] | None],
        rng: np.random.Generator,
    ) -> dict[str, Any]:
        if any(options):
            raise ValueError(f"MarketMaking-v0 takes no reset options, got {options!r}")
        self.price = float(self.params.start_price)
        self.cash = self.position = 0.0
        self.steps = 0
        self.metrics.reset()
        info = {
            "price": self.price,
            "position": 0.0,
            "cash": 0.0,
            "equity": self.equity,
            "time_remaining": self.time_remaining,
        }
        return {key: np.array([value]) for key, value in info.items()}

    def observe(self) -> np.ndarray:
        return np.array([[self.position, self.time_remaining]], dtype=np.float32)

    def step_one(self, depths: list[float], rng: np.random.Generator) -> StepResult:
        """One step of the env with checked ``[bid_depth, ask_depth]``."""
        params = self.params
        dt = self.dt
        bid_uniform, ask_uniform = rng.random(2).tolist()
        shock = rng.standard_normal()
        price, position, cash = self.price, self.position, self.cash
        equity_before = cash + position * price
        bid = price - depths[0]
        ask = price + depths[1]
        price += params.sigma * math.sqrt(dt) * shock
        arrival_rate, depth_decay = params.arrival_rate, params.depth_decay
        poisson = params.fill_model == "poisson"
        bid_hit = bid_uniform < _fill_one(price - bid, arrival_rate, depth_decay, dt, poisson)
        ask_hit = ask_uniform < _fill_one(ask - price, arrival_rate, depth_decay, dt, poisson)
        bid_filled = bid_hit and position < self.max_inventory
        ask_filled = ask_hit and position > -self.max_inventory
        cash += (ask if ask_filled else 0.0) - (bid if bid_filled else 0.0)
        position += float(bid_filled) - ask_filled
        self.steps += 1
        self.price, self.position, self.cash = price, position, cash
        equity = cash + position * price
        running = params.inventory_penalty * dt
        terminal = params.terminal_penalty if self.steps >= self.episode_length else 0.0
        penalty = (running + terminal) * (position * position)
        pnl = equity - equity_before
        # the episode figures, as step(): np.maximum and np.log on floats
        capital = params.start_price * self.max_inventory
        after = capital + equity
        after = RUIN if after < RUIN else after
        before = after - pnl
        before = RUIN if before < RUIN else before
        traded_value = bid * float(bid_filled) + ask * float(ask_filled)
        self.metrics.update(float(np.log(after / before)), traded_value / before)
        terminated = self.steps >= self.episode_length
        info: dict[str, Any] = {
            "bid": bid,
            "ask": ask,
            "bid_filled": bid_filled,
            "ask_filled": ask_filled,
            "pnl": pnl,
            "penalty": penalty,
            "equity": equity,
            "price": price,
            "position": position,
            "cash": cash,
            "time_remaining": (self.episode_length - self.steps) * dt,
        }
        if terminated:
            info.update(self.metrics.summary(1.0 / dt))
        observation = np.array([position, info["time_remaining"]], dtype=np.float32)
        return step_result((observation, pnl - penalty, terminated, False, info))


def _fill_one(
    depth: float, arrival_rate: float, depth_decay: float, dt: float, poisson: bool
) -> float:
    """``fill_probability`` of one quote, with the same operations on Python floats."""
    exponent = -depth_decay * depth
    rate = arrival_rate * float(np.exp(700.0 if exponent > 700.0 else exponent)) * dt
    if poisson:
        return -float(np.expm1(-rate))
    return 1.0 if rate > 1.0 else rate
