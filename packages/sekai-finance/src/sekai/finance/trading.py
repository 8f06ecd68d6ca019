"""The Trading-v0 market model: one asset on a shared price history, over a leading env axis.

At decision bar ``t`` an env observes the last ``lookback`` log returns up to and including bar
``t`` (``log(p[t] / p[t-1])`` and earlier) and its position, then chooses a target position:
-1 (short), 0 (flat) or 1 (long) times its equity. A change of position trades at ``p[t]``
(``execution="close"``, the default) or at the next bar's open ``o[t+1]``, which the env never
observes before it trades (``execution="next_open"``), sized on equity (marked at that price)
net of the trade's cost; an unchanged position does not trade, so its exposure drifts with the
price. Then the period's financing accrues (``sekai.finance.accounting``: ``cash_rate`` and
``borrow_rate``, yearly rates, over ``periods_per_year``). The reward is
``log(equity[t+1] / equity[t])``: every step's cost and financing and the marking of the holding
at ``p[t+1]``, short positions included. An episode lasts
``episode_length`` steps (then truncated) unless equity falls to ruin (terminated).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sekai.core import StepResult
from sekai.finance._scalar import step_result
from sekai.finance.accounting import (
    RUIN,
    Account,
    check_costs,
    financing,
    settle,
    size_one,
    size_one_linear,
)
from sekai.finance.costs import LINEAR_COST_MODELS, scalar_cost_of
from sekai.finance.history import EpisodeStarts, dated, info_dates
from sekai.finance.metrics import EpisodeMetrics, ScalarEpisodeMetrics

__all__ = ["TradingModel", "TradingModelOne"]

_ENDED = "the episode has ended (episode_length steps); call reset() before stepping again"


class TradingModel:
    """State of ``num_envs`` Trading-v0 envs; reads its parameters from ``params`` every step
    (``prices``, ``lookback``, ``episode_length``, ``allow_short``, ``cost_model``, ``sampler``,
    ``periods_per_year``, ``borrow_rate``, ``cash_rate``; ``opens`` and ``execution`` once).
    The history is shared, never copied: the state is O(num_envs)."""

    def __init__(self, params: Any, num_envs: int) -> None:
        self.params = params
        self.history: np.ndarray = params.prices
        self.returns: np.ndarray = params._returns
        self.rows = _window_rows(params)
        self.dates = info_dates(params)
        self.opens: np.ndarray | None = _fill_prices(params)
        self.account = Account(num_envs, 1)
        self.metrics = EpisodeMetrics(num_envs)
        self.starts = EpisodeStarts(params, num_envs)
        self.timestamp = np.zeros(num_envs, dtype=np.int64)
        self.end = np.zeros(num_envs, dtype=np.int64)
        self.position = np.zeros(num_envs, dtype=np.int64)
        self.equity = np.ones(num_envs)
        self.price = np.zeros(num_envs)
        self.window = np.arange(1 - params.lookback, 1)

    def reset(
        self,
        indices: np.ndarray,
        options: list[dict[str, Any] | None],
        rng: np.random.Generator,
    ) -> dict[str, Any]:
        length = self.params.episode_length
        first, last = self.params.lookback, len(self.history) - 1 - length
        starts = self.starts.draw(indices, options, rng, first, last, length)
        # the last step's infos hold these arrays themselves: write to copies
        self.timestamp, self.position = self.timestamp.copy(), self.position.copy()
        self.equity, self.price = self.equity.copy(), self.price.copy()
        self.timestamp[indices] = starts
        self.end[indices] = starts + length
        self.position[indices] = 0
        self.equity[indices] = 1.0
        self.price[indices] = self.history[starts]
        self.account.reset(indices)
        self.metrics.reset(indices)
        return dated(
            self.dates,
            {
                "timestamp": starts,
                "price": self.price[indices],
                "position": self.position[indices],
                "equity": self.equity[indices],
                "cost": np.zeros(len(indices)),
                "financing": np.zeros(len(indices)),
            },
        )

    def observe(self) -> np.ndarray:
        """Every env's window: each bar's log return (then its features, when the data has
        them; row ``t`` is what was known at the close of bar ``t``), then the position."""
        lookback = len(self.window)
        bars = self.timestamp[:, None] + self.window
        if self.rows is None:
            observation = np.empty((len(self.timestamp), lookback + 1), dtype=np.float32)
            observation[:, :lookback] = self.returns[bars]
        else:  # each bar's return and features, bar-major
            observation = np.empty(
                (len(self.timestamp), self.rows[0].size * lookback + 1), np.float32
            )
            observation[:, :-1] = self.rows[bars].reshape(len(bars), -1)
        observation[:, -1] = self.position
        return observation

    def step(
        self, actions: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        params = self.params
        if np.count_nonzero(self.timestamp >= self.end):  # any (a C call, unlike .any())
            raise ValueError(_ENDED)
        target = self._check(actions, params.allow_short)
        if self.opens is None:
            prices, equity = self.price[:, None], self.equity
        else:  # the next bar's open, marked before the trade
            prices = self.opens[self.timestamp + 1][:, None]
            equity = self.account.equity(prices)
        cost, traded = self.account.trade_to(
            prices,
            equity,
            target[:, None].astype(np.float64),
            params.cost_model,
            keep=target == self.position,
        )
        per_year = params.periods_per_year
        financing = self.account.accrue(
            prices, params.cash_rate / per_year, params.borrow_rate / per_year
        )
        self.timestamp = self.timestamp + 1  # new state arrays every step: the infos keep them
        self.price = self.history[self.timestamp]
        equity = self.account.equity(self.price[:, None])
        rewards, terminated = settle(self.equity, equity)
        self.metrics.update(rewards, traded / self.equity)
        self.equity = equity
        self.position = target
        truncated = self.timestamp >= self.end
        infos = dated(
            self.dates,
            {
                "timestamp": self.timestamp,
                "price": self.price,
                "position": target,
                "equity": equity,
                "cost": cost,
                "financing": financing,
            },
        )
        infos.update(self.metrics.final_infos(terminated | truncated, params.periods_per_year))
        return rewards, terminated, truncated, infos

    def _check(self, actions: np.ndarray, allow_short: bool) -> np.ndarray:
        """Actions as int64 positions; ValueError naming the first one outside the space."""
        if actions.shape != self.position.shape:
            raise ValueError(
                f"expected {len(self.position)} actions (one position each), got shape "
                f"{actions.shape}"
            )
        positions = actions.astype(np.int64)
        low = -1 if allow_short else 0
        bad = (positions < low) | (positions > 1)
        if actions.dtype.kind != "i":  # a signed int converts exactly; others may not
            bad |= positions != actions
        if np.count_nonzero(bad):
            allowed = "-1 (short), 0 (flat) or 1 (long)" if allow_short else "0 (flat) or 1 (long)"
            raise ValueError(
                f"action {actions[bad][0].item()!r} is not a position: allowed are {allowed}"
            )
        return positions


class TradingModelOne:
    """``TradingModel`` for one env in Python floats: the single env's fast path. Every
    step does the operations of ``TradingModel`` in the same order (a test proves the two
    agree exactly); a cost model is called on a ``(1, 1)`` array unless it has the scalar form
    ``cost_of_one``. State attributes are Python scalars."""

    def __init__(self, params: Any) -> None:
        self.params = params
        self.history: np.ndarray = params.prices
        # float32 log returns (each followed by its bar's features) and one slot of padding,
        # so a window is one slice
        rows = _window_rows(params)
        self.width = 1 if rows is None else rows.shape[1]
        flat = params._returns if rows is None else rows.ravel()
        self.returns32: np.ndarray = np.append(flat, 0.0).astype(np.float32)
        dates = info_dates(params)
        self.dates: list[Any] | None = None if dates is None else dates.tolist()
        self.opens: np.ndarray | None = _fill_prices(params)
        self.lookback: int = params.lookback
        self.allow_short: bool = params.allow_short  # read-only parameters: read once
        self.low = -1 if self.allow_short else 0
        self.starts = EpisodeStarts(params, 1)
        self.metrics = ScalarEpisodeMetrics()
        self.timestamp = self.end = self.position = 0
        self.equity = self.cash = 1.0
        self.price = self.shares = 0.0
        self._cost_model: Any = None
        self._cost_of: Callable[[float], float] = float
        self._linear_rate: Callable[[], float] | None = None  # a linear cost model's rate

    def reset(
        self,
        indices: np.ndarray,
        options: list[dict[str, Any] | None],
        rng: np.random.Generator,
    ) -> dict[str, Any]:
        length = self.params.episode_length
        first, last = self.lookback, len(self.history) - 1 - length
        start = int(self.starts.draw(indices, options, rng, first, last, length)[0])
        self.timestamp, self.end, self.position = start, start + length, 0
        self.equity = self.cash = 1.0
        self.shares = 0.0
        self.price = self.history.item(start)
        self.metrics.reset()
        info: dict[str, Any] = {"timestamp": start}
        if self.dates is not None:
            info["date"] = self.dates[start]
        info |= {"price": self.price, "position": 0, "equity": 1.0, "cost": 0.0, "financing": 0.0}
        return {key: np.array([value]) for key, value in info.items()}

    def observe(self) -> np.ndarray:
        return self._observation(self.timestamp, self.position)[None]

    def step(
        self, actions: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The ``MarketModel`` form of ``step_one``."""
        _, reward, terminated, truncated, info = self.step_one(actions[0])
        arrays = {key: np.array([value]) for key, value in info.items()}
        return np.array([reward]), np.array([terminated]), np.array([truncated]), arrays

    def step_one(self, action: Any) -> StepResult:
        """One step of the env."""
        params = self.params
        if self.timestamp >= self.end:
            raise ValueError(_ENDED)
        if type(action) is int and self.low <= action <= 1:  # the common case, without a call
            position = action
        else:
            position = _check_one(action, self.allow_short)
        cost_model = params.cost_model
        if cost_model is not self._cost_model:  # a new model: find its scalar form once
            self._cost_model = cost_model
            self._cost_of = scalar_cost_of(cost_model, "cost_of_one", _cost_of_one)
            linear = type(cost_model) in LINEAR_COST_MODELS
            self._linear_rate = cost_model.linear_rate if linear else None
        cost_of = self._cost_of
        equity, price = self.equity, self.price
        if self.opens is None:
            sized_on = equity
        else:  # as TradingModel: the next bar's open, marked before the trade
            price = self.opens.item(self.timestamp + 1)
            sized_on = self.cash + self.shares * price
        holdings = self.shares * price
        if position != self.position:
            if self._linear_rate is None:
                target, cost, traded = size_one(sized_on, holdings, float(position), cost_of)
            else:
                rate = self._linear_rate()
                target, cost, traded = size_one_linear(sized_on, holdings, float(position), rate)
            self.shares = target / price
        else:  # as TradingModel's kept rows: no trade, yet the cost model is asked
            target, traded = holdings, 0.0
            cost = cost_of(0.0)
        self.cash -= (target - holdings) + cost
        per_year = params.periods_per_year
        short_value = max(-(self.shares * price), 0.0)
        interest = financing(
            self.cash, short_value, params.cash_rate / per_year, params.borrow_rate / per_year
        )
        self.cash += interest
        timestamp = self.timestamp + 1
        price = self.history.item(timestamp)
        new_equity = self.cash + self.shares * price
        terminated = new_equity <= RUIN
        # max(new_equity, RUIN) without the call; log as the array model's np.log
        reward = float(np.log((RUIN if new_equity < RUIN else new_equity) / equity))
        self.metrics.update(reward, traded / equity)
        self.timestamp, self.price, self.equity, self.position = (
            timestamp,
            price,
            new_equity,
            position,
        )
        truncated = timestamp >= self.end
        info: dict[str, Any] = {"timestamp": timestamp}
        if self.dates is not None:
            info["date"] = self.dates[timestamp]
        info |= {
            "price": price,
            "position": position,
            "equity": new_equity,
            "cost": cost,
            "financing": interest,
        }
        if terminated or truncated:
            info.update(self.metrics.summary(params.periods_per_year))
        lookback, width = self.lookback, self.width  # as _observation() builds it, inlined
        observation = self.returns32[
            (timestamp - lookback + 1) * width : (timestamp + 1) * width + 1
        ].copy()
        observation[-1] = position
        return step_result((observation, reward, terminated, truncated, info))

    def _observation(self, timestamp: int, position: int) -> np.ndarray:
        """The window ending at ``timestamp``, then the position (over bar timestamp + 1)."""
        width = self.width
        observation = self.returns32[
            (timestamp - self.lookback + 1) * width : (timestamp + 1) * width + 1
        ].copy()
        observation[-1] = position
        return observation


def _window_rows(params: Any) -> np.ndarray | None:
    """Each bar's log return and then its features, ``(T, 1 + n_features)``; None without
    features."""
    if params._feature_values is None:
        return None
    return np.column_stack([params._returns, params._feature_values])


def _cost_of_one(cost_model: Callable[[np.ndarray], np.ndarray], value: float) -> float:
    """Any cost model's cost of one trade: called on a (1, 1) array and checked."""
    cost = np.asarray(cost_model(np.array([[value]])), dtype=np.float64)
    check_costs(cost, 1)
    return cost.item()


def _check_one(action: Any, allow_short: bool) -> int:
    """One action as an int position; the ValueError of ``TradingModel._check``."""
    low = -1 if allow_short else 0
    if isinstance(action, np.ndarray) and action.size != 1:
        raise ValueError(
            f"TradingEnv takes one action, a position, got an array of shape {action.shape}"
        )
    value = action.item() if isinstance(action, np.ndarray | np.generic) else action
    try:
        position = int(value)
    except (TypeError, ValueError):
        position = None
    if position is None or position != value or not low <= position <= 1:
        allowed = "-1 (short), 0 (flat) or 1 (long)" if allow_short else "0 (flat) or 1 (long)"
        raise ValueError(f"action {value!r} is not a position: allowed are {allowed}")
    return position


def _fill_prices(params: Any) -> np.ndarray | None:
    """The opens trades fill at with ``execution="next_open"``; None to fill at the close."""
    return params._opens if params.execution == "next_open" else None
