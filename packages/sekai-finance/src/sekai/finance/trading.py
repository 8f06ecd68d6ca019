"""The Trading-v0 market model: one asset on a shared price history, over a leading env axis.

At decision bar ``t`` an env observes the last ``lookback`` log returns up to and including bar
``t`` (``log(p[t] / p[t-1])`` and earlier) and its position, then chooses a target position:
-1 (short), 0 (flat) or 1 (long) times its equity. A change of position trades at ``p[t]``,
sized on equity net of the trade's cost; an unchanged position does not trade, so its exposure
drifts with the price. The reward is ``log(equity[t+1] / equity[t])``: every step's cost and
the marking of the holding at ``p[t+1]``, short positions included. An episode lasts
``episode_length`` steps (then truncated) unless equity falls to ruin (terminated).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sekai.finance.accounting import RUIN, Account, size_one
from sekai.finance.history import EpisodeStarts
from sekai.finance.metrics import EpisodeMetrics

__all__ = ["TradingModel"]


class TradingModel:
    """State of ``num_envs`` Trading-v0 envs; reads its parameters from ``params`` every step
    (``prices``, ``lookback``, ``episode_length``, ``allow_short``, ``cost_model``, ``sampler``,
    ``periods_per_year``). The history is shared, never copied: the state is O(num_envs)."""

    def __init__(self, params: Any, num_envs: int) -> None:
        self.params = params
        self.history: np.ndarray = params.prices
        self.returns: np.ndarray = params._returns
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
        self.timestamp[indices] = starts
        self.end[indices] = starts + length
        self.position[indices] = 0
        self.equity[indices] = 1.0
        self.price[indices] = self.history[starts]
        self.account.reset(indices)
        self.metrics.reset(indices)
        return {
            "timestamp": starts,
            "price": self.price[indices],
            "position": self.position[indices],
            "equity": self.equity[indices],
            "cost": np.zeros(len(indices)),
        }

    def observe(self) -> np.ndarray:
        lookback = len(self.window)
        observation = np.empty((len(self.timestamp), lookback + 1), dtype=np.float32)
        observation[:, :lookback] = self.returns[self.timestamp[:, None] + self.window]
        observation[:, lookback] = self.position
        return observation

    def step(
        self, actions: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        params = self.params
        target = self._check(actions, params.allow_short)
        prices = self.price[:, None]
        cost, traded = self.account.trade_to(
            prices,
            self.equity,
            target[:, None].astype(np.float64),
            params.cost_model,
            keep=target == self.position,
        )
        self.timestamp += 1
        self.price = self.history[self.timestamp]
        equity = self.account.equity(self.price[:, None])
        terminated = equity <= RUIN
        rewards = np.log(np.maximum(equity, RUIN) / self.equity)
        self.metrics.update(rewards, traded / self.equity)
        self.equity = equity
        self.position = target
        truncated = self.timestamp >= self.end
        infos = {
            "timestamp": self.timestamp.copy(),
            "price": self.price.copy(),  # copies: a reset changes the state in place
            "position": target.copy(),
            "equity": equity.copy(),
            "cost": cost,
        }
        infos.update(self.metrics.final_infos(terminated | truncated, params.periods_per_year))
        return rewards, terminated, truncated, infos

    def step_one(
        self, action: Any, cost_of: Callable[[float], float]
    ) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """:meth:`step` and :meth:`observe` for a single env (``num_envs=1``) with Python floats,
        the same operations in the same order (a test proves they agree exactly), for a cost
        model with the scalar form ``cost_of``. Returns ``(observation, reward, terminated,
        truncated, info)``."""
        params = self.params
        position = _check_one(action, params.allow_short)
        account = self.account
        equity = float(self.equity[0])
        price = float(self.price[0])
        cost = traded = 0.0
        if position != self.position[0]:
            holdings = float(account.shares[0, 0]) * price
            target, cost, traded = size_one(equity, holdings, float(position), cost_of)
            account.cash[0] = float(account.cash[0]) - ((target - holdings) + cost)
            account.shares[0, 0] = target / price
        timestamp = int(self.timestamp[0]) + 1
        price = float(self.history[timestamp])
        new_equity = float(account.cash[0]) + float(account.shares[0, 0]) * price
        terminated = new_equity <= RUIN
        reward = float(np.log(max(new_equity, RUIN) / equity))
        self.metrics.update_one(reward, traded / equity)
        self.timestamp[0] = timestamp
        self.price[0] = price
        self.equity[0] = new_equity
        self.position[0] = position
        truncated = timestamp >= self.end[0]
        info = {
            "timestamp": timestamp,
            "price": price,
            "position": position,
            "equity": new_equity,
            "cost": cost,
        }
        if terminated or truncated:
            for key, value in self.metrics.summary(params.periods_per_year).items():
                info[key] = value[0].item()
        lookback = len(self.window)
        observation = np.empty(lookback + 1, dtype=np.float32)
        observation[:lookback] = self.returns[timestamp - lookback + 1 : timestamp + 1]
        observation[lookback] = position
        return observation, reward, bool(terminated), bool(truncated), info

    def _check(self, actions: np.ndarray, allow_short: bool) -> np.ndarray:
        """Actions as int64 positions; ValueError naming the first one outside the space."""
        if actions.shape != self.position.shape:
            raise ValueError(
                f"expected {len(self.position)} actions (one position each), got shape "
                f"{actions.shape}"
            )
        positions = actions.astype(np.int64)
        low = -1 if allow_short else 0
        bad = (positions < low) | (positions > 1) | (positions != actions)
        if bad.any():
            allowed = "-1 (short), 0 (flat) or 1 (long)" if allow_short else "0 (flat) or 1 (long)"
            raise ValueError(
                f"action {actions[bad][0].item()!r} is not a position: allowed are {allowed}"
            )
        return positions


def _check_one(action: Any, allow_short: bool) -> int:
    """One action as an int position; the ValueError of :meth:`TradingModel._check`."""
    value = action.item() if isinstance(action, np.ndarray | np.generic) else action
    low = -1 if allow_short else 0
    try:
        position = int(value)
    except (TypeError, ValueError):
        position = None
    if position is None or position != value or not low <= position <= 1:
        allowed = "-1 (short), 0 (flat) or 1 (long)" if allow_short else "0 (flat) or 1 (long)"
        raise ValueError(f"action {value!r} is not a position: allowed are {allowed}")
    return position
