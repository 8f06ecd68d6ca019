"""What the single envs' scalar fast paths share."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from sekai.core import StepResult

# StepResult's own __new__ is Python code; building the tuple directly is 1 µs faster a step
step_result: Callable[[tuple[Any, ...]], StepResult] = functools.partial(tuple.__new__, StepResult)

EXACT_SUM_LENGTH = 7
"""Up to this many float64 values numpy's ``sum`` adds them one after the other, left to
right (it sums longer runs pairwise), so ``sequential_sum`` gives its result bit for bit."""


def sequential_sum(values: list[float]) -> float:
    """``numpy.sum`` of up to ``EXACT_SUM_LENGTH`` Python floats, exactly; the builtin ``sum``
    is not (Python 3.12 compensates its rounding)."""
    total = values[0]
    for value in values[1:]:
        total += value
    return total
