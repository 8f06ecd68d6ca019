"""The Portfolio-v0 market model: n assets and cash, rebalanced to target weights every step.

Prices are either a shared ``(T, n_assets)`` history or correlated geometric Brownian motions
simulated step by step from the parameters ``mu`` and ``sigma`` (a year, per asset), the
``correlation`` of the Brownian motions and the step ``dt`` (in years):
``log(S[t+1] / S[t]) = (mu - sigma**2 / 2) dt + sigma sqrt(dt) Z``, ``Z ~ N(0, correlation)``
(Black and Scholes 1973; Merton, "Lifetime portfolio selection under uncertainty", 1969).

At decision bar ``t`` an env observes the last ``lookback`` log returns of every asset (ending at
bar ``t``) and its current weights (drifted with the prices since its last trade), then chooses
target weights (``PortfolioWeights``). The account trades to them at the bar's closes
(``execution="close"``, the default) or at the next bar's opens, which the env never observes
before it trades (``execution="next_open"``, histories with opens only), sized on wealth marked
at those prices net of the trade's cost. Then the period's financing accrues
(``sekai.finance.accounting``): ``cash_rate`` on cash, which is negative when leverage borrows
it (the margin used), and ``borrow_rate`` on the value of short positions, yearly rates over
``periods_per_year``. The reward is ``log(wealth[t+1] / wealth[t])``, net of costs and
financing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.finance.accounting import Account, settle
from sekai.finance.history import EpisodeStarts, check_options, dated, info_dates
from sekai.finance.metrics import EpisodeMetrics
from sekai.finance.weights import check_weights

__all__ = ["PortfolioModel"]


class PortfolioModel:
    """State of ``num_envs`` Portfolio-v0 envs; reads its parameters from ``params`` every
    step. A history is shared, never copied; simulated returns live in a ring buffer of
    ``lookback`` bars per env: the state is O(num_envs x lookback x n_assets)."""

    def __init__(self, params: Any, num_envs: int) -> None:
        self.params = params
        n_assets, lookback = params.n_assets, params.lookback
        self.history: np.ndarray | None = params.prices
        self.returns: np.ndarray | None = params._returns
        self.rows = _window_rows(params)
        self.dates = info_dates(params)
        self.opens: np.ndarray | None = params._opens if params.execution == "next_open" else None
        self.account = Account(num_envs, n_assets)
        self.metrics = EpisodeMetrics(num_envs)
        self.starts = EpisodeStarts(params, num_envs)
        self.timestamp = np.zeros(num_envs, dtype=np.int64)
        self.end = np.zeros(num_envs, dtype=np.int64)
        self.wealth = np.ones(num_envs)
        self.weights = np.zeros((num_envs, n_assets + 1))
        self.price = np.ones((num_envs, n_assets))
        self.window = np.arange(1 - lookback, 1)
        # simulated returns as observed (float32), oldest at head
        self.ring = np.zeros((num_envs, lookback, n_assets), dtype=np.float32)
        self.head = 0
        self._correlation: Any = None
        self._cholesky = np.eye(n_assets)

    def reset(
        self,
        indices: np.ndarray,
        options: list[dict[str, Any] | None],
        rng: np.random.Generator,
    ) -> dict[str, Any]:
        lookback, length = self.params.lookback, self.params.episode_length
        if self.history is None:
            for option in options:
                if option:
                    check_options(option, lookback, lookback)  # only start=lookback is valid
            starts = np.full(len(indices), lookback, dtype=np.int64)
            order = (self.head + np.arange(lookback)) % lookback
            warmup = self._draw_returns(rng, (len(indices), lookback))
            self.ring[indices[:, None], order] = warmup
            self.price[indices] = 1.0
        else:
            last = len(self.history) - 1 - length
            starts = self.starts.draw(indices, options, rng, lookback, last, length)
            self.price[indices] = self.history[starts]
        self.timestamp[indices] = starts
        self.end[indices] = starts + length
        self.wealth[indices] = 1.0
        self.weights[indices] = 0.0
        self.weights[indices, -1] = 1.0
        self.account.reset(indices)
        self.metrics.reset(indices)
        return dated(
            self.dates,
            {
                "timestamp": starts,
                "wealth": self.wealth[indices],
                "weights": self.weights[indices],
                "cost": np.zeros(len(indices)),
                "financing": np.zeros(len(indices)),
            },
        )

    def observe(self) -> np.ndarray:
        """Every env's window: each bar's log returns (then every asset's features, when the
        data has them; row ``t`` is what was known at the close of bar ``t``), then the
        weights."""
        num_envs, n_assets = self.price.shape
        lookback = len(self.window)
        if self.rows is not None:
            width = lookback * self.rows.shape[1]
            observation = np.empty((num_envs, width + n_assets + 1), dtype=np.float32)
            bars = self.timestamp[:, None] + self.window
            observation[:, :width] = self.rows[bars].reshape(num_envs, width)
            observation[:, width:] = self.weights
            return observation
        observation = np.empty((num_envs, (lookback + 1) * n_assets + 1), dtype=np.float32)
        returns = observation[:, : lookback * n_assets].reshape(num_envs, lookback, n_assets)
        if self.returns is None:
            order = (self.head + np.arange(lookback)) % lookback
            np.take(self.ring, order, axis=1, out=returns, mode="wrap")
        else:
            returns[:] = self.returns[self.timestamp[:, None] + self.window]
        observation[:, lookback * n_assets :] = self.weights
        return observation

    def step(
        self, actions: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        params = self.params
        n_assets = self.price.shape[1]
        max_leverage = params.max_leverage if params.allow_short else None
        targets = check_weights(actions, n_assets, max_leverage)
        if self.opens is None:
            prices, wealth = self.price, self.wealth
        else:  # the next bar's opens, marked before the trade
            prices = self.opens[self.timestamp + 1]
            wealth = self.account.equity(prices)
        cost, traded = self.account.trade_to(
            prices, wealth, targets[:, :n_assets], params.cost_model
        )
        per_year = params.periods_per_year
        financing = self.account.accrue(
            prices, params.cash_rate / per_year, params.borrow_rate / per_year
        )
        self.timestamp += 1
        if self.history is None:
            returns = self._draw_returns(rng, (len(self.wealth),))
            self.ring[:, self.head] = returns
            self.head = (self.head + 1) % len(self.window)
            self.price = self.price * np.exp(returns)
        else:
            self.price = self.history[self.timestamp]
        holdings = self.account.shares * self.price
        wealth = self.account.cash + holdings.sum(axis=1)
        rewards, terminated = settle(self.wealth, wealth)
        self.metrics.update(rewards, traded / self.wealth)
        self.wealth = wealth
        weights = np.empty_like(self.weights)
        np.divide(holdings, wealth[:, None], out=weights[:, :n_assets])
        np.divide(self.account.cash, wealth, out=weights[:, n_assets])
        self.weights = weights
        truncated = self.timestamp >= self.end
        infos = dated(
            self.dates,
            {
                "timestamp": self.timestamp.copy(),  # copies: a reset changes the state in place
                "wealth": wealth.copy(),
                "weights": weights.copy(),
                "cost": cost,
                "financing": financing,
            },
        )
        infos.update(self.metrics.final_infos(terminated | truncated, params.periods_per_year))
        return rewards, terminated, truncated, infos

    def _draw_returns(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        """Log returns of the simulated assets, shape ``size + (n_assets,)``."""
        params = self.params
        if params.correlation is not self._correlation:
            self._correlation = params.correlation
            self._cholesky = np.linalg.cholesky(params._correlation_matrix)
        dt = params.dt
        sigma = params.sigma
        shocks = rng.standard_normal((*size, self.price.shape[1])) @ self._cholesky.T
        return (params.mu - 0.5 * sigma * sigma) * dt + (sigma * np.sqrt(dt)) * shocks


def _window_rows(params: Any) -> np.ndarray | None:
    """Each bar's log returns of every asset, then every asset's features (asset-major),
    ``(T, n_assets * (1 + n_features))``; None without features."""
    features = params._feature_values
    if features is None:
        return None
    return np.concatenate([params._returns, features.reshape(len(features), -1)], axis=1)
