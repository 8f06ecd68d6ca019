"""The timing both benchmark scripts share: backends take turns, each keeps its best round.

Imported as ``from _timing import ...`` by the scripts next to it, run as
``python benchmarks/<script>.py``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

Step = Callable[[Any], Any]


@runtime_checkable
class SelfTimed(Protocol):
    """A backend that measures its own rate: one whose work cannot be driven one step at a
    time from here (processes that step on their own, with no message between steps)."""

    def rate(self, actions: np.ndarray, seconds: float) -> float:
        """Env steps per second over at least ``seconds``, with the batches of ``actions``."""
        ...


def run_for(step: Step, actions: np.ndarray, seconds: float) -> tuple[int, float]:
    """Step through the batches of ``actions`` again and again until ``seconds`` have passed
    (once at least, so that a warm-up of 0 seconds steps); the env steps taken and the time."""
    steps = 0
    start = time.perf_counter()
    while True:
        for batch in actions:
            step(batch)
        steps += len(actions)
        if (elapsed := time.perf_counter() - start) >= seconds:
            return steps * actions.shape[1], elapsed


def rate(step: Step, actions: np.ndarray, seconds: float) -> float:
    """Env steps per second over at least ``seconds``."""
    env_steps, elapsed = run_for(step, actions, seconds)
    return env_steps / elapsed


def race(
    backends: dict[str, contextlib.AbstractContextManager[Step | SelfTimed]],
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
        rates = {name: _measure(stack.enter_context(backend)) for name, backend in backends.items()}
        for measure in rates.values():
            measure(actions[:50], 0.0)  # warm up
        for _ in range(rounds):
            for name, measure in rates.items():
                best[name] = max(best[name], measure(actions, seconds))
    return best


def _measure(backend: Step | SelfTimed) -> Callable[[np.ndarray, float], float]:
    if isinstance(backend, SelfTimed):
        return backend.rate
    return lambda actions, seconds: rate(backend, actions, seconds)
