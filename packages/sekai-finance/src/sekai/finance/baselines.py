"""Baseline policies: the benchmarks an agent must beat. Each is batched: a batch of
observations ``(N, ...)`` in, a batch of actions out, so it drives a native vector env (or a
single env, given a batch of one) at array speed.

- :class:`BuyAndHold`: Trading-v0 long from the first bar; Portfolio-v0 equal weights once,
  then the observed (drifted) weights as targets, so it trades only the float32 rounding of
  the observation: its wealth is within about 1e-8 of an exact buy-and-hold's.
- :class:`EqualWeight`: Portfolio-v0 rebalanced to ``1 / n_assets`` of wealth in every asset
  each step (the "1/N" portfolio of DeMiguel, Garlappi and Uppal, Rev. Financial Studies 2009).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.finance.weights import PortfolioWeights
from sekai.spaces import Discrete

__all__ = ["BuyAndHold", "EqualWeight"]


class BuyAndHold:
    """Buy at the first step, then hold. ``action_space`` is the env's: ``Discrete`` (a
    Trading-v0 position) or :class:`PortfolioWeights` (Portfolio-v0)."""

    def __init__(self, action_space: Any) -> None:
        if not isinstance(action_space, Discrete | PortfolioWeights):
            raise TypeError(
                "BuyAndHold takes Trading-v0's Discrete or Portfolio-v0's PortfolioWeights "
                f"action space, got {action_space!r}"
            )
        self.action_space = action_space

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        observations = np.asarray(observations)
        if isinstance(self.action_space, Discrete):
            return np.ones(len(observations), dtype=np.int64)
        weights = observations[:, -(self.action_space.n_assets + 1) :].astype(np.float64)
        if self.action_space.max_leverage is None:
            weights = np.maximum(weights, 0.0)  # a float rounding of 0 may come out as -1e-17
        weights /= weights.sum(axis=1, keepdims=True)
        all_cash = weights[:, -1] == 1.0  # the first step of an episode
        equal = EqualWeight(self.action_space)(observations)
        return np.where(all_cash[:, None], equal, weights)


class EqualWeight:
    """Rebalance to ``1 / n_assets`` of wealth in every asset, no cash, every step."""

    def __init__(self, action_space: PortfolioWeights) -> None:
        if not isinstance(action_space, PortfolioWeights):
            raise TypeError(
                f"EqualWeight takes Portfolio-v0's PortfolioWeights space, got {action_space!r}"
            )
        n = action_space.n_assets
        self.weights = np.append(np.full(n, 1.0 / n), 0.0)

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        return np.tile(self.weights, (len(observations), 1))
