"""Cash-and-shares accounting shared by the trading envs, over a leading env axis.

An account holds ``cash`` (N,) and ``shares`` (N, A). Trading to target weights of equity is
sized on equity *net of the trade's own cost*, so a fully invested long-only account never
borrows to pay its costs (the FinRL #481 bug); every fill conserves value: cash changes by
exactly minus the traded value minus the cost.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["RUIN", "Account"]

RUIN = 1e-9
"""Equity at or below this (starting equity is 1.0) ends the episode: the account is ruined."""

_SIZING_ROUNDS = 3  # fixed-point rounds for net equity; each shrinks the error by the cost rate


class Account:
    """Cash and share holdings of ``num_envs`` accounts in ``n_assets`` assets."""

    def __init__(self, num_envs: int, n_assets: int) -> None:
        self.cash = np.ones(num_envs)
        self.shares = np.zeros((num_envs, n_assets))

    def reset(self, indices: np.ndarray) -> None:
        """All cash, equity 1.0, for the accounts in ``indices``."""
        self.cash[indices] = 1.0
        self.shares[indices] = 0.0

    def equity(self, prices: np.ndarray) -> np.ndarray:
        """Cash plus holdings marked at ``prices`` (N, A)."""
        return self.cash + (self.shares * prices).sum(axis=1)

    def trade_to(
        self,
        prices: np.ndarray,
        equity: np.ndarray,
        weights: np.ndarray,
        cost_model: Callable[[np.ndarray], np.ndarray],
        keep: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Trade every account to hold ``weights`` (N, A) of its net-of-cost equity in each
        asset (rows where ``keep`` is True do not trade). Returns ``(cost, traded_value)``,
        shapes (N,) and (N,): cost is never negative."""
        holdings = self.shares * prices
        net = equity
        for _ in range(_SIZING_ROUNDS):
            target = weights * net[:, None]
            if keep is not None:
                target = np.where(keep[:, None], holdings, target)
            traded = np.abs(target - holdings)
            cost = np.asarray(cost_model(traded), dtype=np.float64)
            net = equity - cost
        check_costs(cost, len(equity))
        self.cash -= (target - holdings).sum(axis=1) + cost
        shares = target / prices
        self.shares = shares if keep is None else np.where(keep[:, None], self.shares, shares)
        return cost, traded.sum(axis=1)


def check_costs(cost: np.ndarray, num_envs: int) -> None:
    """A cost model's result must be ``num_envs`` finite, non-negative costs."""
    if cost.shape != (num_envs,) or not (np.isfinite(cost) & (cost >= 0.0)).all():
        raise ValueError(
            f"a cost model must return {num_envs} finite non-negative costs, got {cost!r}"
        )
