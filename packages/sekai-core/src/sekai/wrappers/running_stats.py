"""Per-element mean and variance estimates, updated from batches of samples.

Both estimators take a *batch* (leading sample axis) in ``update``, so a vector env
adds one sample per sub-env in one call and a single env adds a batch of one. ``normalize`` is
pure: it reads the estimates and never changes them.

- ``RunningMeanStd``: the mean and variance of every sample seen so far.
- ``EWMMeanStd``: exponentially weighted, forgetting old samples with a half-life counted in
  samples; it starts as a plain running mean until it has seen ``halflife`` samples' worth.

``prior_weight`` counts the starting estimates (mean 0, variance 1) as that many samples, so that
the first few samples are not divided by a near-zero standard deviation.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class MeanStd:
    """Shared state and update rule; subclasses decide how much weight a new batch gets."""

    kind: str

    def __init__(
        self, shape: tuple[int, ...] = (), epsilon: float = 1e-8, *, prior_weight: float = 0.0
    ) -> None:
        self.shape = tuple(shape)
        self.epsilon = epsilon
        self.prior_weight = prior_weight
        self.mean = np.zeros(self.shape, np.float64)
        self.var = np.ones(self.shape, np.float64)
        self.count = 0.0

    def _batch_weight(self, n: int) -> float:
        raise NotImplementedError

    def update(self, batch: Any) -> None:
        """Add the samples of ``batch`` (shape ``(n, *shape)``); an empty batch changes nothing."""
        batch = np.asarray(batch, np.float64)
        if batch.shape[1:] != self.shape:
            raise ValueError(
                f"expected a batch of shape (n, *{self.shape}), got shape {batch.shape}"
            )
        n = len(batch)
        if n == 0:
            return
        weight = self._batch_weight(n)
        batch_mean = batch.mean(axis=0)
        batch_var = batch.var(axis=0)
        mean = self.mean + weight * (batch_mean - self.mean)
        # variance of the mixture: each side's own variance plus its mean's offset from the new mean
        self.var = (1.0 - weight) * (self.var + (self.mean - mean) ** 2) + weight * (
            batch_var + (batch_mean - mean) ** 2
        )
        self.mean = mean
        self.count += n

    def normalize(self, batch: Any) -> np.ndarray:
        """``(batch - mean) / sqrt(var + epsilon)`` as float32; the estimates are not changed."""
        scaled = (np.asarray(batch, np.float64) - self.mean) / np.sqrt(self.var + self.epsilon)
        return scaled.astype(np.float32)

    def state_dict(self) -> dict[str, Any]:
        """A copy of the estimates, for saving with a policy; see ``load_state_dict``."""
        return {
            "kind": self.kind,
            "mean": self.mean.copy(),
            "var": self.var.copy(),
            "count": self.count,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore estimates saved by ``state_dict`` (same kind and shape)."""
        if state.get("kind") != self.kind:
            raise ValueError(f"state is for {state.get('kind')!r} statistics, not {self.kind!r}")
        mean = np.array(state["mean"], np.float64)
        var = np.array(state["var"], np.float64)
        if mean.shape != self.shape or var.shape != self.shape:
            raise ValueError(
                f"state has shapes {mean.shape} and {var.shape}, expected {self.shape}"
            )
        self.mean, self.var, self.count = mean, var, float(state["count"])

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={self.shape}, count={self.count:g})"


class RunningMeanStd(MeanStd):
    """Mean and variance of all samples so far (each sample weighs the same)."""

    kind = "running"

    def _batch_weight(self, n: int) -> float:
        return n / (self.prior_weight + self.count + n)


class EWMMeanStd(MeanStd):
    """Exponentially weighted mean and variance; a sample's weight halves every ``halflife``."""

    kind = "ewm"

    def __init__(
        self, shape: tuple[int, ...] = (), epsilon: float = 1e-8, *, halflife: float = 1000.0
    ) -> None:
        if not halflife > 0:
            raise ValueError(f"halflife must be positive, got {halflife}")
        super().__init__(shape, epsilon)
        self.halflife = halflife

    def _batch_weight(self, n: int) -> float:
        # the samples of one batch count as simultaneous; early on, fall back to the plain mean
        return max(1.0 - 0.5 ** (n / self.halflife), n / (self.prior_weight + self.count + n))


def make_mean_std(stats: str, shape: tuple[int, ...], epsilon: float, halflife: float) -> MeanStd:
    """Build the estimator named by ``stats``: ``"running"`` or ``"ewm"``."""
    if stats == "running":
        return RunningMeanStd(shape, epsilon)
    if stats == "ewm":
        return EWMMeanStd(shape, epsilon, halflife=halflife)
    raise ValueError(f"stats must be 'running' or 'ewm', got {stats!r}")
