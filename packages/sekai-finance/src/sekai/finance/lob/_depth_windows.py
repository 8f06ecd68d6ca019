"""Many windows of a depth-only day stepped at once, with virtual agent orders whose queue
position a queue model estimates (``queue_models``): one compiled call per step, a leading
window axis, as ``_replay_windows`` for order-level data (whose rules for instructions, the
inventory cap, fills and accounts are used as they are).

The fills are hftbacktest's partial-fill exchange's (``PartialFillExchange``):

- an order joins with the level's size ahead of it (``front``);
- a level update at the order's price moves ``front`` as the queue model says;
- a trade at the order's price takes its size off ``front``; what goes beyond ``front``
  (rounded half away from zero) fills the order, up to what remains of it, and ``front`` is 0;
- a trade through the order's price (a taker buy above the agent's ask, a sell below its
  bid), or the other side's best price reaching the order's price after an update, fills all
  that remains of it.

Per agent order the window keeps, beside ``_replay_windows``' fields, ``front`` and the lots
traded at its price since the level last changed (``queue``, floats); the lots ahead field
is ``front`` rounded half away from zero (0 when negative), for the observation. numba is
imported here and there only.
"""

from __future__ import annotations

import numba
import numpy as np

from sekai.finance.lob._depth_day import LEVEL
from sekai.finance.lob._queue_kernel import after_depth, after_trade, filled, round_half_away
from sekai.finance.lob._replay_windows import (
    CURSOR,
    N_FILLS,
    ORDERS,
    PARALLEL_FROM,
    _arrival_order,
    _fill,
    _instruct,
)
from sekai.finance.lob.book import BUY, SELL

# as ``_engine``'s ``jit`` and ``inline`` (no reference counting), with numpy's error model
_jit = numba.njit(cache=True, _nrt=False, error_model="numpy")  # type: ignore[call-overload]
_inline = numba.njit(cache=True, _nrt=False, inline="always", error_model="numpy")  # type: ignore[call-overload]
FRONT, CUM_TRADE = 0, 1  # the queue fields


def step_depth_windows(tape, stop, instructions, terms, state, queue, model):  # type: ignore[no-untyped-def]
    """``_replay_windows.step_windows`` on a depth tape (``DepthDays.tape``), with ``queue``
    (W, A, 2, 2): per agent order its front and lots traded since the level's last change;
    ``model`` = (code, exponent) of the queue model (``queue_models``)."""
    run = _parallel if len(stop) >= PARALLEL_FROM else _serial
    run(tape, stop, instructions, terms, state, queue, model[0], model[1])


@numba.njit(cache=True, parallel=True, error_model="numpy")  # type: ignore[misc]
def _parallel(tape, stop, instructions, terms, state, queue, code, n):  # type: ignore[no-untyped-def]
    order = np.empty(instructions[0].shape, np.int64)
    for w in numba.prange(len(stop)):
        # prange's index is unsigned: as an int64, _window has _serial's signature and compiles once
        _window(np.int64(w), tape, stop, instructions, terms, state, queue, code, n, order[w])


@numba.njit(cache=True, error_model="numpy")  # type: ignore[misc]
def _serial(tape, stop, instructions, terms, state, queue, code, n):  # type: ignore[no-untyped-def]
    order = np.empty(instructions[0].shape, np.int64)
    for w in range(len(stop)):
        _window(w, tape, stop, instructions, terms, state, queue, code, n, order[w])


@_jit
def _window(w, tape, stop, instructions, terms, state, queue, code, n, order):  # type: ignore[no-untyped-def]
    entry, bid, ask, market, market_lots = instructions
    cursor, orders = state[CURSOR], state[ORDERS]
    state[N_FILLS][w] = 0  # this step's fills
    _arrival_order(entry[w], order)
    k = cursor[w]
    for a in order:
        while k < entry[w, a]:
            _message(tape, k, w, terms, state, queue, code, n)
            k += 1
        before_bid, before_ask = orders[w, a, BUY, 0], orders[w, a, SELL, 0]
        _instruct(
            tape, k, w, a, bid[w, a], ask[w, a], market[w, a], market_lots[w, a], terms, state
        )
        for side, before in ((BUY, before_bid), (SELL, before_ask)):
            if orders[w, a, side, 0] >= 0 and orders[w, a, side, 0] != before:  # a new order
                queue[w, a, side, FRONT] = orders[w, a, side, 2]
                queue[w, a, side, CUM_TRADE] = 0.0
    while k < stop[w]:
        _message(tape, k, w, terms, state, queue, code, n)
        k += 1
    cursor[w] = k


@_inline
def _message(tape, k, w, terms, state, queue, code, n):  # type: ignore[no-untyped-def]
    """Message k's effect on window w's agent orders."""
    kinds, sides, ticks, lots, prev, best = tape[0], tape[1], tape[2], tape[3], tape[4], tape[5]
    side, tick, size = sides[k], ticks[k], lots[k]
    orders = state[ORDERS]
    for a in range(orders.shape[1]):
        if kinds[k] == LEVEL:
            if orders[w, a, side, 0] == tick:
                front, cum = after_depth(
                    code, n, queue[w, a, side, FRONT], queue[w, a, side, CUM_TRADE],
                    float(prev[k]), float(size),
                )  # fmt: skip
                _set_front(orders, queue, w, a, side, front, cum)
            # the other side's best reaching the agent's price fills it whole
            other = 1 - side
            at, before, after = orders[w, a, other, 0], best[k, side], best[k + 1, side]
            if at >= 0 and _reached(side, before, after, at):
                _fill(tape, w, a, other, at, orders[w, a, other, 1], terms, state)
            continue
        maker = 1 - side  # a trade: the taker's side took the maker side's liquidity
        at = orders[w, a, maker, 0]
        if at < 0:
            continue
        if (at < tick) if maker == SELL else (at > tick):  # traded through the order
            _fill(tape, w, a, maker, at, orders[w, a, maker, 1], terms, state)
        elif at == tick:
            front, cum = after_trade(queue[w, a, maker, FRONT], queue[w, a, maker, CUM_TRADE], size)
            got, front = filled(front)
            _set_front(orders, queue, w, a, maker, front, cum)
            if got > 0:
                _fill(tape, w, a, maker, at, min(got, orders[w, a, maker, 1]), terms, state)


@_inline
def _set_front(orders, queue, w, a, side, front, cum):  # type: ignore[no-untyped-def]
    queue[w, a, side, FRONT] = front
    queue[w, a, side, CUM_TRADE] = cum
    orders[w, a, side, 2] = max(round_half_away(front), 0)


@_inline
def _reached(side, before, after, at):  # type: ignore[no-untyped-def]
    """Whether the best price of ``side``, moved from ``before`` to ``after`` by an update
    (-1: none), improved and reached ``at``, the price of an agent order on the other side."""
    if after < 0:
        return False
    if side == BUY:
        return after > before and at <= after
    return (before < 0 or after < before) and at >= after
