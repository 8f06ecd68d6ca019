"""The timing both benchmark scripts share: backends take turns, each keeps its best round.

Imported as ``from _timing import ...`` by the scripts next to it, run as
``python benchmarks/<script>.py``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

import numpy as np

Step = Callable[[Any], Any]


def rate(step: Step, actions: np.ndarray, seconds: float) -> float:
    """Env steps per second over at least ``seconds``."""
    steps = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for batch in actions:
            step(batch)
        steps += len(actions)
    return steps * actions.shape[1] / elapsed


def race(
    backends: dict[str, contextlib.AbstractContextManager[Step]],
    actions: np.ndarray,
    seconds: float,
    rounds: int,
) -> dict[str, float]:
    """Each backend's best env steps per second over ``rounds`` turns of ``seconds`` each.

    Taking turns, rather than one backend after the other, spreads a burst of load from other
    processes over all backends instead of landing it on one.
    """
    best = dict.fromkeys(backends, 0.0)
    with contextlib.ExitStack() as stack:
        steps = {name: stack.enter_context(backend) for name, backend in backends.items()}
        for step in steps.values():
            rate(step, actions[:50], 0.0)  # warm up
        for _ in range(rounds):
            for name, step in steps.items():
                best[name] = max(best[name], rate(step, actions, seconds))
    return best
