"""Pictures of finished episodes as PNG files, drawn with matplotlib (the ``plot`` extra:
``pip install "sekai-finance[plot]"``).

``episode_equity`` runs one episode of a finance env with a batched policy (any of
``sekai.finance.baselines``, or an agent's) and returns its equity curve;
``plot_episode`` draws an agent's curve against the baselines'. A batch of episodes (a 2-D
array, one row per episode) is drawn as its mean with a band from its minimum to its maximum.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["episode_equity", "plot_episode"]


def episode_equity(
    env: Any, policy: Callable[[np.ndarray], np.ndarray], *, seed: int | None = None
) -> np.ndarray:
    """Run ``env`` (a single finance env) from ``reset(seed=seed)`` to the end of its episode,
    ``policy`` choosing each action from a batch of one observation. Returns the equity (what
    the env's frame draws as equity: ``equity``, or ``wealth`` for Portfolio-v0) after the
    reset and after every step."""
    name = env.unwrapped.picture.equity
    observation, _ = env.reset(seed=seed)
    curve = [float(getattr(env.unwrapped, name))]
    while True:
        action = np.asarray(policy(np.asarray(observation)[None]))[0]
        result = env.step(action)
        curve.append(float(getattr(env.unwrapped, name)))
        if result.terminated or result.truncated:
            return np.array(curve)
        observation = result.observation


def plot_episode(
    path: str | Path,
    equity: np.ndarray,
    *,
    baselines: Mapping[str, np.ndarray] | None = None,
    label: str = "agent",
    title: str | None = None,
) -> Path:
    """Draw ``equity`` (one episode's curve, or a batch of curves as rows) and each baseline's
    curve (or batch) against the step; save the figure as a PNG at ``path`` and return it."""
    curves = {label: equity, **(baselines or {})}
    batches = {name: _batch(name, values) for name, values in curves.items()}
    pyplot = _pyplot()
    figure, axes = pyplot.subplots(figsize=(8, 4.5), dpi=100)
    try:
        for name, batch in batches.items():
            steps = np.arange(batch.shape[1])
            (line,) = axes.plot(steps, batch.mean(axis=0), label=name, linewidth=1.6)
            if len(batch) > 1:
                low, high = batch.min(axis=0), batch.max(axis=0)
                axes.fill_between(steps, low, high, color=line.get_color(), alpha=0.2)
        axes.set_xlabel("step")
        axes.set_ylabel("equity")
        axes.grid(alpha=0.3)
        axes.legend()
        if title is not None:
            axes.set_title(title)
        path = Path(path)
        figure.savefig(path, format="png")
    finally:
        pyplot.close(figure)
    return path


def _batch(name: str, values: Any) -> np.ndarray:
    """``values`` as a 2-D float array of curves; ValueError naming ``name`` otherwise."""
    batch = np.atleast_2d(np.asarray(values, np.float64))
    if batch.ndim != 2 or batch.shape[1] == 0 or not np.isfinite(batch).all():
        raise ValueError(
            f"{name}: equity must be a curve or a batch of curves (rows) of finite numbers, "
            f"got an array of shape {np.shape(values)}"
        )
    return batch


def _pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend; ImportError naming the extra when
    matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(
            'sekai.finance.plotting needs matplotlib: pip install "sekai-finance[plot]"'
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    return pyplot
