"""PortfolioWeights: the action space of target portfolio weights, cash explicit.

An element is ``n_assets + 1`` weights of equity, the assets' then cash's, summing to 1.
Long-only (``max_leverage=None``) they are all non-negative: a point of the simplex. With
``max_leverage=L`` asset weights may be negative (short) as long as their gross exposure
``sum(|w_asset|)`` is at most ``L``; cash is then ``1 - sum(w_asset)``, negative when borrowing.
``sample()`` draws valid weights (Dirichlet(1) magnitudes), so random agents and ``check_env``
work; ``batch_space`` of it is a batched ``PortfolioWeights`` whose samples are valid rows.

A Gaussian policy (PPO's, SAC's) outputs unconstrained vectors, not weights. ``box`` is the
space such a policy acts in, ``Box(-1, 1, (n_assets + 1,))``, the normalised action space
Stable-Baselines3 recommends, and ``from_box`` maps each of its points onto valid weights, every
valid weight vector being reached:

- long-only: weights proportional to ``a + 1`` (an entry at -1 holds nothing; all at -1 is all
  cash);
- with ``max_leverage=L``: ``(a_cash + 1) / 2`` is the share of ``L`` used as gross exposure,
  split between the assets in proportion to ``|a_asset|``, short where ``a_asset < 0``; cash is
  the rest, ``1 - sum(w_asset)``.

``sekai.compat.to_sb3`` shows SB3 ``box`` and applies ``from_box`` to every action.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.finance._rows import row_sums
from sekai.spaces import Box, register_space_type
from sekai.spaces.utils import batch_space

__all__ = ["SUM_TOLERANCE", "PortfolioWeights", "check_weights"]

SUM_TOLERANCE = 1e-5
"""How far from 1 the weights' sum may be (float32 policies); the env rescales to exactly 1."""


class PortfolioWeights(Box):
    """Target weights of ``n_assets`` assets and cash (see the module docstring); ``batch``
    stacks that many rows along a leading axis."""

    def __init__(
        self,
        n_assets: int,
        max_leverage: float | None = None,
        batch: int | None = None,
        seed: Any = None,
    ) -> None:
        self.n_assets = n_assets
        self.max_leverage = max_leverage
        self.batch = batch
        shape = (n_assets + 1,) if batch is None else (batch, n_assets + 1)
        if max_leverage is None:
            low, high = np.zeros(n_assets + 1), np.ones(n_assets + 1)
        else:
            low = np.append(np.full(n_assets, -max_leverage), 1.0 - max_leverage)
            high = np.append(np.full(n_assets, max_leverage), 1.0 + max_leverage)
        super().__init__(np.broadcast_to(low, shape), np.broadcast_to(high, shape), seed=seed)

    @property
    def box(self) -> Box:
        """The space a Gaussian policy acts in: ``Box(-1, 1)`` of this space's shape."""
        return Box(-1.0, 1.0, self.shape, dtype=np.float32)

    def from_box(self, actions: Any) -> NDArray[np.float64]:
        """Valid weights, float64, from points of ``box`` (any leading axes; values outside
        ``[-1, 1]`` are clipped to it, as SB3 does); see the module docstring."""
        a = np.clip(np.asarray(actions, dtype=np.float64), -1.0, 1.0)
        if a.shape[-1] != self.n_assets + 1:
            raise ValueError(
                f"expected actions of {self.n_assets + 1} values ({self.n_assets} assets and "
                f"cash) on the last axis, got shape {a.shape}"
            )
        weights = np.zeros_like(a)
        if self.max_leverage is None:
            raised = a + 1.0
            total = raised.sum(axis=-1, keepdims=True)
            np.divide(raised, total, out=weights, where=total > 0.0)
            weights[..., -1] = np.where(total[..., 0] > 0.0, weights[..., -1], 1.0)
            return weights
        assets = a[..., :-1]
        gross = np.abs(assets).sum(axis=-1, keepdims=True)
        used = self.max_leverage * (a[..., -1:] + 1.0) / 2.0
        np.divide(assets * used, gross, out=weights[..., :-1], where=gross > 0.0)
        weights[..., -1] = 1.0 - weights[..., :-1].sum(axis=-1)
        return weights

    def sample(self, mask: Any = None) -> NDArray[Any]:
        if mask is not None:
            raise ValueError("PortfolioWeights.sample takes no mask")
        rows = 1 if self.batch is None else self.batch
        magnitudes = self.rng.dirichlet(np.ones(self.n_assets + 1), size=rows)
        if self.max_leverage is None:
            weights = magnitudes
        else:
            signs = self.rng.choice(np.array([-1.0, 1.0]), size=(rows, self.n_assets))
            assets = self.max_leverage * signs * magnitudes[:, : self.n_assets]
            weights = np.concatenate([assets, 1.0 - assets.sum(axis=1, keepdims=True)], axis=1)
        weights = weights.astype(self.dtype)
        return weights[0] if self.batch is None else weights

    def contains(self, x: Any) -> bool:
        if not super().contains(x):
            return False
        rows = np.asarray(x, dtype=np.float64).reshape(-1, self.n_assets + 1)
        return _first_bad_row(rows, rows.sum(axis=1), self.max_leverage) is None

    def to_jsonable(self) -> dict[str, Any]:
        return {
            "type": "PortfolioWeights",
            "n_assets": self.n_assets,
            "max_leverage": self.max_leverage,
            "batch": self.batch,
        }

    @classmethod
    def from_jsonable(cls, data: dict[str, Any]) -> PortfolioWeights:
        return cls(data["n_assets"], data["max_leverage"], data["batch"])

    def __repr__(self) -> str:
        arguments = [f"n_assets={self.n_assets}"]
        if self.max_leverage is not None:
            arguments.append(f"max_leverage={self.max_leverage}")
        if self.batch is not None:
            arguments.append(f"batch={self.batch}")
        return f"PortfolioWeights({', '.join(arguments)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PortfolioWeights) and (
            self.n_assets,
            self.max_leverage,
            self.batch,
        ) == (other.n_assets, other.max_leverage, other.batch)

    __hash__ = None  # type: ignore[assignment]


@batch_space.register(PortfolioWeights)
def _batch_weights(space: PortfolioWeights, n: int) -> PortfolioWeights:
    if space.batch is not None:
        raise ValueError(f"{space!r} is already batched")
    return PortfolioWeights(space.n_assets, space.max_leverage, batch=int(n))


register_space_type("PortfolioWeights", PortfolioWeights)


def check_weights(actions: np.ndarray, n_assets: int, max_leverage: float | None) -> np.ndarray:
    """Actions ``(N, n_assets + 1)`` as float64 weights summing exactly to 1; ValueError naming
    the first row that is not valid weights (see the module docstring)."""
    weights = np.asarray(actions, dtype=np.float64)
    if weights.ndim != 2 or weights.shape[1] != n_assets + 1:
        raise ValueError(
            f"expected weights of shape (num_envs, {n_assets + 1}) ({n_assets} assets and "
            f"cash), got shape {weights.shape}"
        )
    total = row_sums(weights)
    long_only = max_leverage is None and weights.min() >= 0.0  # one reduction, not one a row
    if long_only and np.count_nonzero(np.abs(total - 1.0) <= SUM_TOLERANCE) == len(total):
        return weights / total[:, None]
    bad = _first_bad_row(weights, total, max_leverage)
    if bad is not None:
        row, reason = bad
        raise ValueError(
            f"action {np.asarray(actions)[row].tolist()!r} is not valid portfolio weights: {reason}"
        )
    return weights / total[:, None]


def _first_bad_row(
    weights: np.ndarray, total: np.ndarray, max_leverage: float | None
) -> tuple[int, str] | None:
    if max_leverage is None:
        bound = weights.min(axis=1) >= 0.0
        rule = "long-only weights must be non-negative (allow_short=False)"
    else:
        gross = row_sums(np.abs(weights[:, :-1]))
        bound = gross <= max_leverage * (1.0 + 1e-9)
        rule = f"the assets' gross exposure sum(|w|) must be at most max_leverage={max_leverage}"
    summed = np.abs(total - 1.0) <= SUM_TOLERANCE  # False for NaN, too
    good = bound & summed
    if good.all():
        return None
    row = int(np.flatnonzero(~good)[0])
    if not summed[row]:
        return row, f"weights (cash last) must sum to 1, these sum to {total[row]:.6g}"
    return row, rule
