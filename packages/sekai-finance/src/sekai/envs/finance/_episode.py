"""Episode metrics of the PnL-reward finance envs, accumulated row by row in arrays."""

from __future__ import annotations

import numpy as np


class EpisodeTracker:
    """Running sums for each row's episode: PnL, its square, peak equity, drawdown, turnover.

    ``summary`` gives the episode's return (its total PnL, in the env's money units), Sharpe
    ratio (mean over standard deviation of the step PnLs, not annualised; 0 when they do not
    vary), maximum drawdown (largest fall of equity from its running peak, money units) and
    turnover (units traded).
    """

    def __init__(self, num_envs: int) -> None:
        self.steps = np.zeros(num_envs, dtype=np.int64)
        self.pnl = np.zeros(num_envs)
        self.pnl_squared = np.zeros(num_envs)
        self.peak = np.zeros(num_envs)
        self.max_drawdown = np.zeros(num_envs)
        self.turnover = np.zeros(num_envs)

    def reset(self, indices: np.ndarray | slice, equity: float | np.ndarray) -> None:
        self.steps[indices] = 0
        self.pnl[indices] = 0.0
        self.pnl_squared[indices] = 0.0
        self.peak[indices] = equity
        self.max_drawdown[indices] = 0.0
        self.turnover[indices] = 0.0

    def update(self, equity: np.ndarray, pnl: np.ndarray, traded: np.ndarray) -> None:
        self.steps += 1
        self.pnl += pnl
        self.pnl_squared += pnl * pnl
        np.maximum(self.peak, equity, out=self.peak)
        np.maximum(self.max_drawdown, self.peak - equity, out=self.max_drawdown)
        self.turnover += traded

    def summary(self, rows: np.ndarray | slice) -> dict[str, np.ndarray]:
        """The metrics of ``rows``, as arrays (keys ``episode_return`` ... ``episode_turnover``)."""
        steps = np.maximum(self.steps[rows], 1)
        mean = self.pnl[rows] / steps
        variance = np.maximum(self.pnl_squared[rows] / steps - mean * mean, 0.0)
        std = np.sqrt(variance)
        tiny = std <= 1e-12 * np.maximum(np.abs(mean), 1.0)
        sharpe = np.where(tiny, 0.0, mean / np.where(tiny, 1.0, std))
        return {
            "episode_return": self.pnl[rows].copy(),
            "episode_sharpe": sharpe,
            "episode_max_drawdown": self.max_drawdown[rows].copy(),
            "episode_turnover": self.turnover[rows].copy(),
        }

    def final_infos(self, ended: np.ndarray) -> dict[str, np.ndarray]:
        """The metrics of the rows whose episode ended, as masked arrays (a masked row gets no
        key in its info); an empty dict when none ended, so an ordinary step costs nothing."""
        if not ended.any():
            return {}
        return {
            key: np.ma.MaskedArray(value, ~ended)
            for key, value in self.summary(slice(None)).items()
        }
