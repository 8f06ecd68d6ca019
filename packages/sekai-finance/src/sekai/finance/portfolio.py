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

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from sekai.core import StepResult
from sekai.finance._rows import row_sums
from sekai.finance._scalar import sequential_sum, step_result
from sekai.finance.accounting import (
    RUIN,
    Account,
    check_costs,
    financing,
    settle,
    size_weights,
    size_weights_linear,
)
from sekai.finance.costs import LINEAR_COST_MODELS, scalar_cost_of
from sekai.finance.history import EpisodeStarts, check_options, dated, info_dates
from sekai.finance.metrics import EpisodeMetrics, ScalarEpisodeMetrics
from sekai.finance.weights import SUM_TOLERANCE, check_weights

__all__ = ["PortfolioModel", "PortfolioModelOne"]

_mul, _sub, _truediv = operator.mul, operator.sub, operator.truediv


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
        # simulated returns as observed (float32), oldest at head, twice over: every env's
        # window is the slice head:head + lookback, copied without an index array
        self.ring = np.zeros((num_envs, 2 * lookback, n_assets), dtype=np.float32)
        self.head = 0
        self._returns_of = _SimulatedReturns(params)

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
            self.ring[indices[:, None], order + lookback] = warmup
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
            returns[:] = self.ring[:, self.head : self.head + lookback]
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
            self.ring[:, self.head :: len(self.window)] = returns[:, None]  # both copies
            self.head = (self.head + 1) % len(self.window)
            self.price = self.price * np.exp(returns)
        else:
            self.price = self.history[self.timestamp]
        holdings = self.account.shares * self.price
        wealth = self.account.cash + row_sums(holdings)
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
        return self._returns_of.draw(rng, size)


def _window_rows(params: Any) -> np.ndarray | None:
    """Each bar's log returns of every asset, then every asset's features (asset-major),
    ``(T, n_assets * (1 + n_features))``; None without features."""
    features = params._feature_values
    if features is None:
        return None
    return np.concatenate([params._returns, features.reshape(len(features), -1)], axis=1)


class _SimulatedReturns:
    """Draws of the simulated assets' log returns, ``drift + Z @ factor`` with ``Z`` standard
    normal, from the parameters read at each draw: ``drift = (mu - sigma**2 / 2) dt`` and
    ``factor`` the transposed Cholesky factor of ``correlation`` times ``sigma sqrt(dt)`` per
    asset (column), recomputed only when one of them is replaced. Folding the scale into the
    factor saves a pass over the draws (and a numpy call per single-env step)."""

    def __init__(self, params: Any) -> None:
        self.params = params
        self.n_assets: int = params.n_assets
        self._terms: tuple[Any, ...] = ()  # the (correlation, mu, sigma, dt) objects used
        self._drift: Any = 0.0
        self._factor = np.eye(self.n_assets)
        self._normal = np.empty((1, self.n_assets))
        self._one = np.empty((1, self.n_assets))

    def draw(self, rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        """Log returns, shape ``size + (n_assets,)``."""
        self._refresh()
        return self._drift + rng.standard_normal((*size, self.n_assets)) @ self._factor

    def draw_one(self, rng: np.random.Generator) -> np.ndarray:
        """``draw(rng, (1,))`` into a ``(1, n_assets)`` array this object reuses (overwritten
        by the next call): the same random numbers and operations, no allocation."""
        params, terms = self.params, self._terms
        if (  # _refresh's test, inlined: every single-env step pays it
            not terms
            or terms[0] is not params._correlation
            or terms[1] is not params._mu
            or terms[2] is not params._sigma
            or terms[3] is not params.dt
        ):
            self._refresh()
        normal, one = self._normal, self._one
        rng.standard_normal(out=normal)
        np.matmul(normal, self._factor, out=one)
        return np.add(self._drift, one, out=one)  # type: ignore[no-any-return]

    def _refresh(self) -> None:
        """Recompute drift and factor if one of their parameters was replaced (the stored
        values are read: the parameters' properties cost a call each)."""
        params = self.params
        correlation, mu, sigma, dt = params._correlation, params._mu, params._sigma, params.dt
        terms = self._terms
        if (
            not terms
            or terms[0] is not correlation
            or terms[1] is not mu
            or terms[2] is not sigma
            or terms[3] is not dt
        ):
            self._terms = (correlation, mu, sigma, dt)
            # one row of n_assets: draw_one adds it to a row without broadcasting (0.5 us less)
            drift = (mu - 0.5 * sigma * sigma) * dt
            self._drift = np.broadcast_to(drift, (1, self.n_assets)).copy()
            cholesky = np.linalg.cholesky(params._correlation_matrix).T
            self._factor = cholesky * (sigma * np.sqrt(dt))


class PortfolioModelOne:
    """``PortfolioModel`` for one env in Python floats: the single env's fast path, for up to
    ``EXACT_SUM_LENGTH - 1`` assets (numpy's sums of that many values are sequential, so they
    can be matched exactly). A step draws the same random numbers and does the operations of
    ``PortfolioModel.step`` in the same order (a test proves the two agree exactly); the draws
    and exponentials stay numpy calls of the same shapes. State attributes are Python scalars,
    and ``(1, n)`` arrays built on access for ``price`` and ``weights``."""

    def __init__(self, params: Any) -> None:
        self.params = params
        n_assets, lookback = params.n_assets, params.lookback
        self.n_assets: int = n_assets
        self.lookback: int = lookback  # read-only parameters: read once
        self.episode_length: int = params.episode_length
        self.history: np.ndarray | None = params.prices
        self.returns: np.ndarray | None = params._returns
        rows = _window_rows(params)
        self.rows: np.ndarray | None = self.returns if rows is None else rows
        dates = info_dates(params)
        self._dates = dates
        self.dates: list[Any] | None = None if dates is None else dates.tolist()
        self.opens: np.ndarray | None = params._opens if params.execution == "next_open" else None
        self.max_leverage: float | None = params.max_leverage if params.allow_short else None
        self._action_shape = (n_assets + 1,)
        self.starts = EpisodeStarts(params, 1)
        self.metrics = ScalarEpisodeMetrics()
        self.timestamp = self.end = 0
        self.wealth = self.cash = 1.0
        self.shares = [0.0] * n_assets
        self._holdings = [0.0] * n_assets  # shares * price, as the last step left them
        self._price = [1.0] * n_assets
        self._weights = [0.0] * n_assets + [1.0]
        # simulated returns as observed (float32), twice over: the window from each head is
        # one flat view of the ring, made once
        self.ring = np.zeros((2 * lookback, n_assets), dtype=np.float32)
        flat = self.ring.reshape(-1)
        self._windows = [flat[h * n_assets : (h + lookback) * n_assets] for h in range(lookback)]
        self._slots = [self.ring[head::lookback] for head in range(lookback)]  # both copies
        self.head = 0
        self._returns_of = _SimulatedReturns(params)
        self._cost_model: Any = None
        self._cost_of: Callable[[list[float]], float] = sequential_sum  # set on the first step
        self._linear_rate: Callable[[], float] | None = None  # a linear cost model's rate

    @property
    def price(self) -> np.ndarray:
        """The assets' prices, with the leading env axis of the array model's."""
        return np.array([self._price])

    @property
    def weights(self) -> np.ndarray:
        """The current weights, cash last, with the leading env axis of the array model's."""
        return np.array([self._weights])

    def reset(
        self,
        indices: np.ndarray,
        options: list[dict[str, Any] | None],
        rng: np.random.Generator,
    ) -> dict[str, Any]:
        lookback, length = self.lookback, self.episode_length
        if self.history is None:
            if options[0]:
                check_options(options[0], lookback, lookback)  # only start=lookback is valid
            start = lookback
            order = (self.head + np.arange(lookback)) % lookback
            warmup = self._returns_of.draw(rng, (1, lookback))[0]
            self.ring[order] = warmup
            self.ring[order + lookback] = warmup
            self._price = [1.0] * self.n_assets
        else:
            last = len(self.history) - 1 - length
            start = int(self.starts.draw(indices, options, rng, lookback, last, length)[0])
            self._price = self.history[start].tolist()
        self.timestamp, self.end = start, start + length
        self.wealth = self.cash = 1.0
        self.shares = [0.0] * self.n_assets
        self._holdings = [0.0] * self.n_assets
        self._weights = [0.0] * self.n_assets + [1.0]
        self.metrics.reset()
        return dated(
            self._dates,
            {
                "timestamp": np.array([start]),
                "wealth": np.ones(1),
                "weights": np.array([self._weights]),
                "cost": np.zeros(1),
                "financing": np.zeros(1),
            },
        )

    def observe(self) -> np.ndarray:
        return self._observation(np.array(self._weights))[None]

    def _observation(self, weights: np.ndarray) -> np.ndarray:
        """The window of returns (or rows), oldest first, then ``weights``, as one new float32
        array (one call: the window is a slice of the ring or of the history's rows)."""
        if self.rows is None:  # the ring, oldest first from head
            window = self._windows[self.head]
        else:
            timestamp = self.timestamp
            window = self.rows[timestamp - self.lookback + 1 : timestamp + 1].reshape(-1)
        return np.concatenate((window, weights), dtype=np.float32)

    def targets(self, action: Any) -> list[float] | None:
        """A weights action as the assets' target weights (cash's is the rest), if it is a
        float array of the right shape and valid weights; else None (the caller then checks it
        as the array model does)."""
        if type(action) is not np.ndarray or action.shape != self._action_shape:
            return None
        if action.dtype.kind != "f":
            return None
        values: list[float] = action.tolist()
        total = values[0]  # sequential_sum's loop, inlined
        for value in values[1:]:
            total += value
        if not abs(total - 1.0) <= SUM_TOLERANCE:  # NaN too
            return None
        if self.max_leverage is None:
            if not min(values) >= 0.0:
                return None
        elif not sequential_sum([abs(value) for value in values[:-1]]) <= (
            self.max_leverage * (1.0 + 1e-9)
        ):
            return None
        del values[-1]
        return [value / total for value in values]

    def step_one(self, targets: list[float], rng: np.random.Generator) -> StepResult:
        """One step of the env to checked ``targets``, the assets' weights (of weights
        summing to 1, cash's last and left out)."""
        params = self.params
        cost_model = params.cost_model
        if cost_model is not self._cost_model:  # a new model: find its scalar form once
            self._cost_model = cost_model
            self._cost_of = scalar_cost_of(cost_model, "cost_of_values", _cost_of_values)
            linear = type(cost_model) in LINEAR_COST_MODELS
            self._linear_rate = cost_model.linear_rate if linear else None
        shares, cash = self.shares, self.cash
        if self.opens is None:
            prices, wealth, holdings = self._price, self.wealth, self._holdings
        else:  # the next bar's opens, marked before the trade
            prices = self.opens[self.timestamp + 1].tolist()
            holdings = list(map(_mul, shares, prices))
            wealth = cash + sequential_sum(holdings)
        if self._linear_rate is None:
            target, cost, traded = size_weights(wealth, holdings, targets, self._cost_of)
        else:
            target, cost, traded = size_weights_linear(
                wealth, holdings, targets, self._linear_rate()
            )
        cash -= sequential_sum(list(map(_sub, target, holdings))) + cost
        shares = list(map(_truediv, target, prices))
        per_year = params.periods_per_year
        borrow_rate = params.borrow_rate / per_year
        short_value = 0.0  # the fee at a zero rate is 0.0 whatever the (finite) short value
        if borrow_rate != 0.0:
            # np.maximum(-(shares * prices), 0.0), signed zeros and NaN included
            short_value = sequential_sum(
                [0.0 if (v := -(s * p)) < 0.0 else v for s, p in zip(shares, prices, strict=True)]
            )
        interest = financing(cash, short_value, params.cash_rate / per_year, borrow_rate)
        cash += interest
        timestamp = self.timestamp + 1
        if self.history is None:
            returns = self._returns_of.draw_one(rng)
            self._slots[self.head][...] = returns  # both copies of the slot
            self.head = (self.head + 1) % self.lookback
            price = list(map(_mul, self._price, np.exp(returns).tolist()[0]))
        else:
            price = self.history[timestamp].tolist()
        holdings = list(map(_mul, shares, price))
        new_wealth = cash + sequential_sum(holdings)
        terminated = new_wealth <= RUIN
        # max(new_wealth, RUIN) without the call; log as the array model's np.log
        before = self.wealth
        reward = float(np.log((RUIN if new_wealth < RUIN else new_wealth) / before))
        self.metrics.update(reward, traded / before)
        weights = [h / new_wealth for h in holdings]
        weights.append(cash / new_wealth)
        self.timestamp, self.wealth, self.cash, self.shares = timestamp, new_wealth, cash, shares
        self._price, self._holdings, self._weights = price, holdings, weights
        truncated = timestamp >= self.end
        weights_array = np.array(weights)
        if self.dates is None:
            info: dict[str, Any] = {
                "timestamp": timestamp,
                "wealth": new_wealth,
                "weights": weights_array,
                "cost": cost,
                "financing": interest,
            }
        else:
            info = {
                "timestamp": timestamp,
                "date": self.dates[timestamp],
                "wealth": new_wealth,
                "weights": weights_array,
                "cost": cost,
                "financing": interest,
            }
        if terminated or truncated:
            info.update(self.metrics.summary(per_year))
        observation = self._observation(weights_array)
        return step_result((observation, reward, terminated, truncated, info))


def _cost_of_values(cost_model: Callable[[np.ndarray], np.ndarray], values: list[float]) -> float:
    """Any cost model's cost of one env's trades: called on a (1, n_assets) array and
    checked."""
    cost = np.asarray(cost_model(np.array([values])), dtype=np.float64)
    check_costs(cost, 1)
    return cost.item()
