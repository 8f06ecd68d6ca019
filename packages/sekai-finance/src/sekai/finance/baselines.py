"""Baseline policies: the benchmarks an agent must beat. Each is batched: a batch of
observations ``(N, ...)`` in, a batch of actions out, so it drives a native vector env (or a
single env, given a batch of one) at array speed.

- ``BuyAndHold``: Trading-v0 long from the first bar; Portfolio-v0 equal weights once,
  then the observed (drifted) weights as targets, so it trades only the float32 rounding of
  the observation: its wealth is within about 1e-8 of an exact buy-and-hold's.
- ``EqualWeight``: Portfolio-v0 rebalanced to ``1 / n_assets`` of wealth in every asset
  each step (the "1/N" portfolio of DeMiguel, Garlappi and Uppal, Rev. Financial Studies 2009).
- ``AvellanedaStoikov``: MarketMaking-v0 quoted by Avellaneda and Stoikov's closed form.
- ``CarteaJaimungal``: MarketMaking-v0 quoted by Cartea and Jaimungal's closed form, optimal
  for the reward with the running and terminal inventory penalties.
- ``TWAP`` and ``AlmgrenChriss``: OptimalExecution-v0 traded evenly, or by Almgren and
  Chriss's mean-variance optimal schedule.

The ``for_env(env)`` constructors read the parameters from a single env or a native vector
env's ``template``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sekai.finance.weights import PortfolioWeights
from sekai.spaces import Discrete

__all__ = [
    "TWAP",
    "AlmgrenChriss",
    "AvellanedaStoikov",
    "BuyAndHold",
    "CarteaJaimungal",
    "EqualWeight",
]


class BuyAndHold:
    """Buy at the first step, then hold. ``action_space`` is the env's: ``Discrete`` (a
    Trading-v0 position) or ``PortfolioWeights`` (Portfolio-v0)."""

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


def _template(env: Any) -> Any:
    """The object holding an env's parameters: a native vector env's template, else the env."""
    template = getattr(env, "template", None)
    return template if template is not None else env.unwrapped


def _steps_left(time_remaining: np.ndarray, dt: float) -> np.ndarray:
    """Whole steps left, from a time remaining that may carry float32 rounding; at least 1."""
    return np.maximum(np.rint(np.asarray(time_remaining, np.float64) / dt), 1.0)


class AvellanedaStoikov:
    """Avellaneda-Stoikov's closed-form quotes for MarketMaking-v0 observations.

    With inventory ``q`` and time remaining ``T - t`` the dealer quotes around the reservation
    price ``r = S - q * gamma * sigma**2 * (T - t)`` with the total spread
    ``gamma * sigma**2 * (T - t) + (2 / gamma) * log(1 + gamma / k)``, ``gamma`` being the
    dealer's risk aversion (per price unit) and ``k`` the market's depth decay. With
    ``symmetric=True`` it is the paper's benchmark instead: the same spread centred on the mid,
    whatever the inventory. The depths are clipped to the action space ``[0, max_depth]``.
    """

    def __init__(
        self,
        risk_aversion: float,
        sigma: float,
        depth_decay: float,
        max_depth: float,
        symmetric: bool = False,
    ) -> None:
        if not risk_aversion > 0 or not math.isfinite(risk_aversion):
            raise ValueError(f"risk_aversion must be positive and finite, got {risk_aversion!r}")
        self.risk_aversion = risk_aversion
        self.sigma = sigma
        self.depth_decay = depth_decay
        self.max_depth = max_depth
        self.symmetric = symmetric

    @classmethod
    def for_env(
        cls, env: Any, risk_aversion: float = 0.1, symmetric: bool = False
    ) -> AvellanedaStoikov:
        """The quotes for a MarketMaking-v0 env (or its native vector env)."""
        params = _template(env)
        return cls(risk_aversion, params.sigma, params.depth_decay, params.max_depth, symmetric)

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        """Bid and ask depths, shape (N, 2), for observations ``[inventory, time_remaining]``."""
        observations = np.asarray(observations, np.float64)
        inventory, time_remaining = observations[:, 0], observations[:, 1]
        gamma = self.risk_aversion
        risk = gamma * self.sigma**2 * time_remaining
        half_spread = 0.5 * (risk + (2.0 / gamma) * math.log1p(gamma / self.depth_decay))
        skew = 0.0 if self.symmetric else inventory * risk  # mid minus reservation price
        depths = np.stack([half_spread + skew, half_spread - skew], axis=1)
        return np.clip(depths, 0.0, self.max_depth).astype(np.float32)


class CarteaJaimungal:
    """Cartea and Jaimungal's closed-form optimal quotes for MarketMaking-v0 observations.

    Cartea, Jaimungal and Penalva (2015), "Algorithmic and High-Frequency Trading", section
    10.2: a dealer maximising ``E[PnL_T - alpha q_T**2 - phi int q_t**2 dt]``, market orders
    arriving at intensity ``A exp(-k depth)`` on each side, inventory within ``[-Q, Q]``. With
    ``omega(t) = exp(M (T - t)) z``, where ``z_q = exp(-k alpha q**2)`` and ``M`` is the
    tridiagonal matrix with ``-k phi q**2`` on its diagonal and ``A / e`` beside it, the
    optimal depths are ``1/k - log(omega_{q+1} / omega_q) / k`` (bid) and
    ``1/k - log(omega_{q-1} / omega_q) / k`` (ask). At the inventory limit the side that would
    pass it quotes ``max_depth`` (the env never fills it). The volatility does not enter: the
    penalties stand for the risk. The depths are clipped to ``[0, max_depth]``.
    """

    def __init__(
        self,
        arrival_rate: float,
        depth_decay: float,
        inventory_penalty: float,
        terminal_penalty: float,
        max_inventory: int,
        max_depth: float,
    ) -> None:
        if not depth_decay > 0 or not math.isfinite(depth_decay):
            raise ValueError(f"depth_decay must be positive and finite, got {depth_decay!r}")
        if not inventory_penalty >= 0 or not terminal_penalty >= 0:
            raise ValueError(
                "the inventory penalties must be non-negative, got "
                f"inventory_penalty={inventory_penalty!r}, terminal_penalty={terminal_penalty!r}"
            )
        self.depth_decay = depth_decay
        self.max_inventory = max_inventory
        self.max_depth = max_depth
        inventories = np.arange(-max_inventory, max_inventory + 1, dtype=np.float64)
        beside = np.full(2 * max_inventory, arrival_rate / math.e)
        generator = (
            np.diag(-depth_decay * inventory_penalty * inventories**2)
            + np.diag(beside, 1)
            + np.diag(beside, -1)
        )
        # symmetric (A on both sides): exp(M tau) = V diag(exp(w tau)) V^T
        self._eigenvalues, self._eigenvectors = np.linalg.eigh(generator)
        terminal = np.exp(-depth_decay * terminal_penalty * inventories**2)
        self._weights = self._eigenvectors.T @ terminal

    @classmethod
    def for_env(cls, env: Any) -> CarteaJaimungal:
        """The quotes for a MarketMaking-v0 env (or its native vector env), from its
        ``inventory_penalty`` (phi) and ``terminal_penalty`` (alpha)."""
        params = _template(env)
        return cls(
            params.arrival_rate,
            params.depth_decay,
            params.inventory_penalty,
            params.terminal_penalty,
            params.max_inventory,
            params.max_depth,
        )

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        """Bid and ask depths, shape (N, 2), for observations ``[inventory, time_remaining]``."""
        observations = np.asarray(observations, np.float64)
        limit = self.max_inventory
        row = np.rint(observations[:, 0]).astype(np.int64) + limit
        tau = np.maximum(observations[:, 1], 0.0)
        # omega up to a factor per observation (the largest exponential), which cancels
        growth = np.exp(np.outer(tau, self._eigenvalues - self._eigenvalues.max()))
        rows = np.clip(row[:, None] + np.array([-1, 0, 1]), 0, 2 * limit)
        omega = np.einsum("nrj,nj->nr", self._eigenvectors[rows], growth * self._weights)
        log_omega = np.log(np.maximum(omega, np.finfo(np.float64).tiny))
        k = self.depth_decay
        bid = 1.0 / k - (log_omega[:, 2] - log_omega[:, 1]) / k
        ask = 1.0 / k - (log_omega[:, 0] - log_omega[:, 1]) / k
        bid = np.where(row >= 2 * limit, self.max_depth, bid)
        ask = np.where(row <= 0, self.max_depth, ask)
        return np.clip(np.stack([bid, ask], axis=1), 0.0, self.max_depth).astype(np.float32)


class TWAP:
    """Time-weighted average price for OptimalExecution-v0: the same number of shares every
    step, i.e. ``1 / steps_left`` of what remains."""

    def __init__(self, dt: float) -> None:
        self.dt = dt

    @classmethod
    def for_env(cls, env: Any) -> TWAP:
        """TWAP for an OptimalExecution-v0 env (or its native vector env)."""
        return cls(_template(env).dt)

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        """Fractions of the remaining shares, shape (N, 1), from ``observations[:, 1]``."""
        steps_left = _steps_left(np.asarray(observations)[:, 1], self.dt)
        return (1.0 / steps_left)[:, None].astype(np.float32)


class AlmgrenChriss:
    """Almgren-Chriss's optimal liquidation schedule for OptimalExecution-v0 observations.

    It minimises ``E[shortfall] + risk_aversion * Var[shortfall]``: the shares held at time
    ``t`` are ``X * sinh(kappa * (T - t)) / sinh(kappa * T)``, where ``kappa`` solves
    ``2 (cosh(kappa * dt) - 1) / dt**2 = risk_aversion * sigma**2 / (eta - gamma * dt / 2)``
    (``eta`` the temporary and ``gamma`` the permanent impact). As ``risk_aversion`` goes to 0 it
    becomes TWAP.
    """

    def __init__(
        self,
        dt: float,
        sigma: float,
        temporary_impact: float,
        permanent_impact: float,
        risk_aversion: float,
    ) -> None:
        adjusted_impact = temporary_impact - 0.5 * permanent_impact * dt
        if not adjusted_impact > 0:
            raise ValueError(
                "AlmgrenChriss needs temporary_impact > permanent_impact * dt / 2, got "
                f"temporary_impact={temporary_impact!r}, permanent_impact={permanent_impact!r}, "
                f"dt={dt!r}"
            )
        if not risk_aversion >= 0:
            raise ValueError(f"risk_aversion must be non-negative, got {risk_aversion!r}")
        self.dt = dt
        kappa_tilde_squared = risk_aversion * sigma**2 / adjusted_impact
        self.kappa = math.acosh(1.0 + 0.5 * kappa_tilde_squared * dt**2) / dt

    @classmethod
    def for_env(cls, env: Any, risk_aversion: float | None = None) -> AlmgrenChriss:
        """The schedule for an OptimalExecution-v0 env (or its native vector env), with the
        env's ``risk_aversion`` unless one is given."""
        params = _template(env)
        return cls(
            params.dt,
            params.sigma,
            params.temporary_impact,
            params.permanent_impact,
            params.risk_aversion if risk_aversion is None else risk_aversion,
        )

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        """Fractions of the remaining shares, shape (N, 1), from ``observations[:, 1]``."""
        left = _steps_left(np.asarray(observations)[:, 1], self.dt) * self.dt
        if self.kappa == 0.0:
            keep = (left - self.dt) / left
        else:
            keep = np.sinh(self.kappa * (left - self.dt)) / np.sinh(self.kappa * left)
        return (1.0 - keep)[:, None].astype(np.float32)
