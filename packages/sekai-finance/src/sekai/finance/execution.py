"""The OptimalExecution-v0 market model (Almgren-Chriss), over a leading env axis.

Almgren, R. and Chriss, N. (2000), "Optimal execution of portfolio transactions", Journal of Risk
3(2), 5-39. A trader must sell (``side=+1``) or buy (``side=-1``) a block of ``shares`` over
``episode_length`` steps of length ``tau`` (``dt``). Trading ``n`` shares in a step fills at

    S - side * (epsilon + eta * n / tau)        (temporary impact: this trade only)

and then moves the price for good,

    S <- S + sigma * sqrt(tau) * shock - side * gamma * n       (permanent impact),

so a step's fill never depends on its own price move. The step's PnL is the change in the
equity ``cash + side * remaining * S`` (the block still held, or still owed, marked at the
price); an episode's PnL sums to minus the implementation shortfall
``side * (shares * S0 - sum(n * fill price))``. The reward subtracts Almgren and Chriss's risk
term ``lambda * sigma**2 * tau * remaining**2``, the variance the unexecuted shares carry over
the next step (zero with ``lambda = 0``). The last step trades whatever remains, with its impact
cost, whatever the action. The episode figures measure PnL against the block's arrival value
``shares * S0``: ``episode_return`` is minus the shortfall as a fraction of it.
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

__all__ = ["SIDES", "ExecutionModel", "ExecutionModelOne", "ExecutionStep"]

SIDES = {"sell": 1, "buy": -1}


class ExecutionStep(NamedTuple):
    """What one step did, per env: shares traded, their fill price, the impact cost (what the
    trade paid against the pre-trade price, never negative), PnL, risk term, and the equity
    after the step."""

    traded: np.ndarray
    fill_price: np.ndarray
    cost: np.ndarray
    pnl: np.ndarray
    risk: np.ndarray
    equity: np.ndarray


class ExecutionModel:
    """State of ``num_envs`` traders; reads its parameters from ``params`` every step
    (``shares``, ``side``, ``start_price``, ``sigma``, ``dt``, ``episode_length``,
    ``temporary_impact``, ``permanent_impact``, ``half_spread``, ``risk_aversion``)."""

    def __init__(self, params: Any, num_envs: int) -> None:
        self.params = params
        self.side = SIDES[params.side]
        self.price = np.zeros(num_envs)
        self.arrival_price = np.zeros(num_envs)
        self.cash = np.zeros(num_envs)
        self.remaining = np.zeros(num_envs)
        self.steps = np.zeros(num_envs, dtype=np.int64)
        self.metrics = EpisodeMetrics(num_envs)

    @property
    def position(self) -> np.ndarray:
        """Shares held: ``remaining`` when selling, ``-remaining`` (still owed) when buying."""
        return self.side * self.remaining

    @property
    def equity(self) -> np.ndarray:
        """Cash plus the position at the price."""
        return self.cash + self.side * self.remaining * self.price

    @property
    def time_remaining(self) -> np.ndarray:
        """Days (time units of ``dt``) left in each env's episode."""
        return (self.params.episode_length - self.steps) * self.params.dt

    def reset(
        self,
        indices: np.ndarray,
        options: list[dict[str, Any] | None],
        rng: np.random.Generator,
    ) -> dict[str, Any]:
        if any(options):
            raise ValueError(f"OptimalExecution-v0 takes no reset options, got {options!r}")
        # the last step's infos hold these arrays themselves: write to copies
        self.price, self.cash = self.price.copy(), self.cash.copy()
        self.remaining = self.remaining.copy()
        self.price[indices] = self.params.start_price
        self.arrival_price[indices] = self.params.start_price
        self.cash[indices] = 0.0
        self.remaining[indices] = self.params.shares
        self.steps[indices] = 0
        self.metrics.reset(indices)
        return {
            "price": self.price[indices],
            "remaining": self.remaining[indices],
            "position": self.position[indices],
            "cash": self.cash[indices],
            "equity": self.equity[indices],
            "time_remaining": self.time_remaining[indices],
        }

    def observe(self) -> np.ndarray:
        """``[remaining / shares, time_remaining, price / arrival price - 1]``, float32 (each
        column computed in float64 and cast as it is written)."""
        observation = np.empty((len(self.price), 3), dtype=np.float32)
        np.divide(self.remaining, self.params.shares, out=observation[:, 0])
        observation[:, 1] = self.time_remaining
        np.subtract(self.price / self.arrival_price, 1.0, out=observation[:, 2])
        return observation

    def step(
        self, actions: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        params = self.params
        n = len(self.price)
        fraction = check_box_actions(actions, 0.0, 1.0, (n, 1), "fractions of the remaining shares")
        done = self.advance(fraction[:, 0], rng.standard_normal(n))
        # the figures' wealth: the block's arrival value plus the PnL so far
        notional = params.shares * self.arrival_price
        after = np.maximum(done.equity + (1 - self.side) * notional, RUIN)
        before = np.maximum(after - done.pnl, RUIN)
        self.metrics.update(np.log(after / before), done.traded * done.fill_price / before)
        terminated = self.steps >= params.episode_length
        infos = {
            **done._asdict(),
            "price": self.price,
            "remaining": self.remaining,
            "position": self.position,
            "cash": self.cash,
            "time_remaining": self.time_remaining,
        }
        infos.update(self.metrics.final_infos(terminated, 252.0 / params.dt))
        truncated = np.zeros(n, dtype=bool)
        return done.pnl - done.risk, terminated, truncated, infos

    def advance(self, fraction: np.ndarray, shocks: np.ndarray) -> ExecutionStep:
        """One step of every env with the given draws: trade ``fraction`` (N,) of the remaining
        shares (all of them on the last step), then move the price by ``shocks`` (N,) standard
        normals and the permanent impact."""
        params = self.params
        side, tau = self.side, params.dt
        equity_before = self.equity
        last = self.steps + 1 >= params.episode_length
        traded = np.where(last, self.remaining, fraction * self.remaining)
        slippage = np.where(traded > 0, params.half_spread, 0.0)
        slippage += params.temporary_impact * traded / tau
        fill_price = self.price - side * slippage
        # new arrays, not in place: the step's infos keep them
        self.cash = self.cash + side * traded * fill_price
        self.remaining = self.remaining - traded  # exactly zero after the last step: x - x == 0
        self.price = self.price + (
            params.sigma * math.sqrt(tau) * shocks - side * params.permanent_impact * traded
        )
        self.steps += 1
        equity = self.equity
        risk = params.risk_aversion * params.sigma**2 * tau * self.remaining**2
        return ExecutionStep(
            traded, fill_price, traded * slippage, equity - equity_before, risk, equity
        )


class ExecutionModelOne:
    """``ExecutionModel`` for one env in Python floats: the single env's fast path. A step
    draws the same random number and does the operations of ``step`` and ``advance`` in the
    same order (a test proves the two agree exactly). State attributes are Python scalars."""

    def __init__(self, params: Any) -> None:
        self.params = params
        # read-only parameters: read once
        self.side: int = SIDES[params.side]
        self.shares: float = params.shares
        self.dt: float = params.dt
        self.episode_length: int = params.episode_length
        self.price = self.arrival_price = self.cash = self.remaining = 0.0
        self.steps = 0
        self.metrics = ScalarEpisodeMetrics()

    @property
    def position(self) -> float:
        """Shares held: ``remaining`` when selling, ``-remaining`` (still owed) when buying."""
        return self.side * self.remaining

    @property
    def equity(self) -> float:
        """Cash plus the position at the price."""
        return self.cash + self.side * self.remaining * self.price

    @property
    def time_remaining(self) -> float:
        """Days (time units of ``dt``) left in the episode."""
        return (self.episode_length - self.steps) * self.dt

    def reset(
        self,
        indices: np.ndarray,
        options: list[dict[str, Any] | None],
        rng: np.random.Generator,
    ) -> dict[str, Any]:
        if any(options):
            raise ValueError(f"OptimalExecution-v0 takes no reset options, got {options!r}")
        self.price = self.arrival_price = float(self.params.start_price)
        self.cash = 0.0
        self.remaining = float(self.shares)
        self.steps = 0
        self.metrics.reset()
        info = {
            "price": self.price,
            "remaining": self.remaining,
            "position": self.position,
            "cash": self.cash,
            "equity": self.equity,
            "time_remaining": self.time_remaining,
        }
        return {key: np.array([value]) for key, value in info.items()}

    def observe(self) -> np.ndarray:
        return self._observation()[None]

    def _observation(self) -> np.ndarray:
        return np.array(
            [
                self.remaining / self.shares,
                self.time_remaining,
                self.price / self.arrival_price - 1.0,
            ],
            dtype=np.float32,
        )

    def step_one(self, fraction: float, rng: np.random.Generator) -> StepResult:
        """One step of the env with a checked ``fraction`` of the remaining shares."""
        params = self.params
        shock = rng.standard_normal()
        side, tau = self.side, self.dt
        price, cash, remaining = self.price, self.cash, self.remaining
        equity_before = cash + side * remaining * price
        traded = remaining if self.steps + 1 >= self.episode_length else fraction * remaining
        slippage = params.half_spread if traded > 0 else 0.0
        slippage += params.temporary_impact * traded / tau
        fill_price = price - side * slippage
        cash += side * traded * fill_price
        remaining -= traded
        sigma = params.sigma
        price += sigma * math.sqrt(tau) * shock - side * params.permanent_impact * traded
        self.steps += 1
        self.price, self.cash, self.remaining = price, cash, remaining
        equity = cash + side * remaining * price
        risk = params.risk_aversion * sigma**2 * tau * (remaining * remaining)
        pnl = equity - equity_before
        # the episode figures, as step(): np.maximum and np.log on floats
        notional = self.shares * self.arrival_price
        after = equity + (1 - side) * notional
        after = RUIN if after < RUIN else after
        before = after - pnl
        before = RUIN if before < RUIN else before
        self.metrics.update(float(np.log(after / before)), traded * fill_price / before)
        terminated = self.steps >= self.episode_length
        info: dict[str, Any] = {
            "traded": traded,
            "fill_price": fill_price,
            "cost": traded * slippage,
            "pnl": pnl,
            "risk": risk,
            "equity": equity,
            "price": price,
            "remaining": remaining,
            "position": side * remaining,
            "cash": cash,
            "time_remaining": self.time_remaining,
        }
        if terminated:
            info.update(self.metrics.summary(252.0 / tau))
        return step_result((self._observation(), pnl - risk, terminated, False, info))
