"""What the single envs' scalar fast paths share."""

from __future__ import annotations

from sekai.core import _step_result

step_result = _step_result  # a StepResult built without its Python-level __new__

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
