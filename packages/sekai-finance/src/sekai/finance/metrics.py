"""Episode performance figures, accumulated with a few array operations per step.

``EpisodeMetrics`` keeps O(num_envs) running sums; the finance envs (single and native
alike) update it every step and put the figures in the info of an episode's last step:

- ``episode_return``: simple return of equity over the episode, ``exp(sum of log returns) - 1``;
- ``sharpe``: mean over standard deviation (ddof=1) of the per-step log returns, annualised by
  ``sqrt(periods_per_year)``; 0.0 when the deviation is zero or there is a single step;
- ``max_drawdown``: the largest fall of equity from its running peak, as a fraction of the peak;
- ``turnover``: the sum over steps of traded value divided by equity before the trade.
"""

from __future__ import annotations

import numpy as np

__all__ = ["METRIC_KEYS", "EpisodeMetrics", "ScalarEpisodeMetrics"]

METRIC_KEYS = ("episode_return", "sharpe", "max_drawdown", "turnover")


class EpisodeMetrics:
    """Running episode figures of ``num_envs`` envs (see the module docstring)."""

    def __init__(self, num_envs: int) -> None:
        self.steps = np.zeros(num_envs, dtype=np.int64)
        self.log_return = np.zeros(num_envs)  # cumulative, also the log equity over its start
        self.sum_squares = np.zeros(num_envs)
        self.peak = np.zeros(num_envs)  # running maximum of log_return (0 at the start)
        self.drawdown = np.zeros(num_envs)  # largest peak - log_return so far
        self.turnover = np.zeros(num_envs)

    def reset(self, indices: np.ndarray) -> None:
        """Start new episodes for the envs in ``indices``."""
        for array in (self.steps, self.log_return, self.sum_squares, self.peak, self.drawdown):
            array[indices] = 0
        self.turnover[indices] = 0.0

    def update(self, log_returns: np.ndarray, turnover: np.ndarray) -> None:
        """Add one step of every env: its log return and traded value over equity."""
        self.steps += 1
        self.log_return += log_returns
        self.sum_squares += log_returns * log_returns
        np.maximum(self.peak, self.log_return, out=self.peak)
        np.maximum(self.drawdown, self.peak - self.log_return, out=self.drawdown)
        self.turnover += turnover

    def summary(self, periods_per_year: float) -> dict[str, np.ndarray]:
        """Every env's figures so far, each an array of shape ``(num_envs,)``; the Sharpe ratio
        is annualised by ``sqrt(periods_per_year)`` (252 for daily bars)."""
        n = np.maximum(self.steps, 1)
        mean = self.log_return / n
        variance = (self.sum_squares - n * mean * mean) / np.maximum(n - 1, 1)
        std = np.sqrt(np.maximum(variance, 0.0))
        positive = (std > 1e-9 * np.abs(mean)) & (std > 0.0) & (self.steps > 1)
        sharpe = np.where(positive, mean / np.where(positive, std, 1.0), 0.0)
        return {
            "episode_return": np.expm1(self.log_return),
            "sharpe": sharpe * np.sqrt(periods_per_year),
            "max_drawdown": -np.expm1(-self.drawdown),
            "turnover": self.turnover.copy(),
        }

    def final_infos(self, ended: np.ndarray, periods_per_year: float) -> dict[str, np.ndarray]:
        """The figures for the envs whose episode ended, as masked arrays (masked rows: no key),
        or plain arrays when every env's episode ended; an empty dict when none ended, so an
        ordinary step costs nothing."""
        count = np.count_nonzero(ended)  # a C call, unlike .any()
        if not count:
            return {}
        if count == len(ended):  # every env has them: plain arrays (a masked array costs ~12 us)
            return self.summary(periods_per_year)
        mask = ~ended
        return {
            key: np.ma.MaskedArray(value, mask)
            for key, value in self.summary(periods_per_year).items()
        }


class ScalarEpisodeMetrics:
    """``EpisodeMetrics`` of one env in Python floats, for single envs' scalar fast paths:
    ``update`` does the same operations in the same order, and ``summary`` uses
    ``EpisodeMetrics.summary`` itself, so the figures agree exactly."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.steps = 0
        self.log_return = self.sum_squares = self.peak = self.drawdown = self.turnover = 0.0

    def update(self, log_return: float, turnover: float) -> None:
        self.steps += 1
        total = self.log_return + log_return
        self.log_return = total
        self.sum_squares += log_return * log_return
        if total > self.peak:  # np.maximum's result, without the call (no NaN here)
            self.peak = total
        drawdown = self.peak - total
        if drawdown > self.drawdown:
            self.drawdown = drawdown
        self.turnover += turnover

    def summary(self, periods_per_year: float) -> dict[str, float]:
        arrays = EpisodeMetrics(1)
        for name in ("steps", "log_return", "sum_squares", "peak", "drawdown", "turnover"):
            getattr(arrays, name)[0] = getattr(self, name)
        return {key: value.item() for key, value in arrays.summary(periods_per_year).items()}
