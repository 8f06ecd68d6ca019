"""The queue models' arithmetic as numba functions (``queue_models`` names the models): the
estimated lots ahead of an agent order (``front``) and the lots traded at its price since the
level last changed (``cum_trade``), moved by a change of the level and by a trade there, as
hftbacktest 2.4's ``RiskAdverseQueueModel`` and ``ProbQueueModel`` do, in the same float
operations in the same order, so that the two agree to the last bit. numba is imported here
and there only."""

from __future__ import annotations

import math

import numba

# error_model="numpy": a division by zero gives inf or nan, as in Rust, instead of raising
_jit = numba.njit(cache=True, error_model="numpy")  # type: ignore[call-overload]
RISK_AVERSE, POWER, POWER2, POWER3, LOG, LOG2 = range(6)


@_jit
def ieee_min(a, b):  # type: ignore[no-untyped-def]
    """Rust's ``f64::min``: the other argument when one is NaN."""
    if a != a:
        return b
    if b != b:
        return a
    return a if a <= b else b


@_jit
def round_half_away(x):  # type: ignore[no-untyped-def]
    """Rust's ``f64::round ... as i64``: halves away from zero, NaN to 0."""
    if x != x:
        return 0
    size = abs(x)
    whole = math.floor(size)
    if size - whole >= 0.5:
        whole += 1.0
    return int(whole) if x >= 0 else -int(whole)


@_jit
def probability(code, n, front, back):  # type: ignore[no-untyped-def]
    """The chance that a decrease of the level came from behind the order."""
    if code == POWER:
        return back**n / (back**n + front**n)
    if code == POWER2:
        return back**n / (back + front) ** n
    if code == POWER3:
        return 1.0 - (front / (front + back)) ** n
    if code == LOG:
        return math.log(1.0 + back) / (math.log(1.0 + back) + math.log(1.0 + front))
    return math.log(1.0 + back) / math.log(1.0 + back + front)  # LOG2


@_jit
def after_depth(code, n, front, cum_trade, prev_qty, new_qty):  # type: ignore[no-untyped-def]
    """(front, cum_trade) after the order's level went from ``prev_qty`` to ``new_qty``."""
    if code == RISK_AVERSE:
        return ieee_min(front, new_qty), cum_trade
    # the lots traded since the last change are part of this decrease: not counted twice
    change = prev_qty - new_qty - cum_trade
    if change < 0.0:
        return ieee_min(front, new_qty), 0.0
    back = prev_qty - front
    prob = probability(code, n, front, back)
    if math.isinf(prob):
        prob = 1.0
    estimate = front - (1.0 - prob) * change + ieee_min(back - prob * change, 0.0)
    return ieee_min(estimate, new_qty), 0.0


@_jit
def after_trade(front, cum_trade, qty):  # type: ignore[no-untyped-def]
    """(front, cum_trade) after ``qty`` lots traded at the order's price."""
    return front - qty, cum_trade + qty


@_jit
def filled(front):  # type: ignore[no-untyped-def]
    """(lots the order may fill, front after): the traded lots beyond the queue ahead."""
    lots = round_half_away(-front)
    if lots > 0:
        return lots, 0.0
    return 0, front
