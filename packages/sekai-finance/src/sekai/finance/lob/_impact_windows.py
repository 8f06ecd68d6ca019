"""The replay windows with market impact (``impact=True``): the agent's trades take real
lots out of its window's book, and the later messages are adapted to what the window holds.

Each window keeps, beside ``_replay_windows``' state, its deficits: per (side, tick) the lots
its agent's trades have taken from the replayed level. The window's queue at a level is the
replayed queue without its first ``deficit`` lots (price-time priority: a trade takes a
level's head), so a deficit and the position of a message's order in the replayed queue
(``_replay_positions``: the lots ahead of it and its own) tell how much of that order the
window still holds. Per message, on window w:

- an agent market order takes the window's levels, best first, at their prices: the
  deficits grow by what it takes;
- a cancel or delete takes off only what the window holds of its order; a lot the window
  had lost already shrinks the deficit instead;
- an execution takes what the window holds of its order; the rest of its size, the part of
  the order the window had lost, executes the next lots of that queue (the agent's order
  among them where it stands), then the next levels, so real aggressive flow walks further
  into the window's book. The agent's order fills first where it stands ahead of the order
  (or at a better price), as without impact; its fill comes out of that rest;
- a submission that crosses the agent's order trades with it first and rests with the rest.

An agent order joins behind the window's lots at its level, a post-only order is dropped if
it would cross the window's book, and the observation shows the window's book. A window's
level never holds more lots than the replayed one, so its book never crosses where the
replay's does not.
Agent fills, accounts and fees are ``_replay_windows``' (``_fill``, ``_account``); days with
level rows (reconciliation) are refused, their legacy volume names no order. numba is
imported here and there only.
"""

from __future__ import annotations

import numba
import numpy as np

from sekai.finance.lob._engine import inline, jit, room
from sekai.finance.lob._replay_windows import (
    CURSOR,
    INVENTORY,
    KEEP_ORDER,
    N_FILLS,
    NO_MARKET,
    ORDERS,
    PARALLEL_FROM,
    REFUSED,
    _account,
    _arrival_order,
    _fill,
    _next_level,
    _volume,
)
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.events import ADD as SUBMIT
from sekai.finance.lob.events import EXECUTE
from sekai.finance.lob.events import TRADE as EXECUTE_HIDDEN

DEFICITS = 8  # the state's ninth array: (W, 2, n_ticks) lots taken per level
AHEAD_OF, SIZE_OF = 19, 20  # the impact tape's queue positions (``_replay_positions``)


def step_impact_windows(tape, stop, instructions, terms, state):  # type: ignore[no-untyped-def]
    """``_replay_windows.step_windows`` with impact: ``tape`` is the replay tape followed by
    ``queue_positions``' two arrays, ``state`` its state followed by the deficits."""
    run = _parallel if len(stop) >= PARALLEL_FROM else _serial
    run(tape, stop, instructions, terms, state)


@numba.njit(cache=True, parallel=True)  # type: ignore[misc]
def _parallel(tape, stop, instructions, terms, state):  # type: ignore[no-untyped-def]
    order = np.empty(instructions[0].shape, np.int64)
    for w in numba.prange(len(stop)):
        # prange's index is unsigned: as an int64, _window has _serial's signature and compiles once
        _window(np.int64(w), tape, stop, instructions, terms, state, order[w])


@numba.njit(cache=True)  # type: ignore[misc]
def _serial(tape, stop, instructions, terms, state):  # type: ignore[no-untyped-def]
    order = np.empty(instructions[0].shape, np.int64)
    for w in range(len(stop)):
        _window(w, tape, stop, instructions, terms, state, order[w])


@jit
def _window(w, tape, stop, instructions, terms, state, order):  # type: ignore[no-untyped-def]
    entry, bid, ask, market, market_lots = instructions
    cursor = state[CURSOR]
    state[N_FILLS][w] = 0
    _arrival_order(entry[w], order)
    k = cursor[w]
    for a in order:
        while k < entry[w, a]:
            _message(tape, k, w, terms, state)
            k += 1
        _instruct(
            tape, k, w, a, bid[w, a], ask[w, a], market[w, a], market_lots[w, a], terms, state
        )
    while k < stop[w]:
        _message(tape, k, w, terms, state)
        k += 1
    cursor[w] = k


@jit
def _filled(tape, w, a, side, tick, lots, terms, state):  # type: ignore[no-untyped-def]
    """``_fill`` of agent a's order on ``side``; return the lots it traded."""
    inventory = state[INVENTORY]
    before = inventory[w, a]
    _fill(tape, w, a, side, tick, lots, terms, state)
    return abs(inventory[w, a] - before)


@inline
def _message(tape, k, w, terms, state):  # type: ignore[no-untyped-def]
    """Message k's effect on window w's agent orders and deficits."""
    kind, side, tick, size = tape[0][k], tape[1][k], tape[2][k], tape[3][k]
    if kind > EXECUTE_HIDDEN or size == 0:
        return
    orders, deficit = state[ORDERS], state[DEFICITS][w]
    if kind == SUBMIT:  # a new order crossing the agent's on the other side trades it first
        other = 1 - side
        left = size
        for a in range(orders.shape[1]):
            at = orders[w, a, other, 0]
            if left > 0 and at >= 0 and (tick <= at if other == BUY else tick >= at):
                left -= _filled(tape, w, a, other, at, left, terms, state)
        deficit[side, tick] += size - left
        return
    if kind == EXECUTE_HIDDEN:  # no level changes: a trade through the agent's price fills it
        for a in range(orders.shape[1]):
            at = orders[w, a, side, 0]
            if at >= 0 and (tick < at if side == BUY else tick > at):
                _fill(tape, w, a, side, at, size, terms, state)
        return
    ahead, own, arrival = tape[AHEAD_OF][k], tape[SIZE_OF][k], tape[4][k]
    lost = deficit[side, tick]
    held = own - min(own, max(lost - ahead, 0))  # the window's lots of the message's order
    taken = min(size, held)
    if kind != EXECUTE:  # a cancel or delete takes what is left; a lost lot, off the deficit
        deficit[side, tick] = lost - (size - taken)
        for a in range(orders.shape[1]):
            if orders[w, a, side, 0] == tick and arrival < orders[w, a, side, 3]:
                orders[w, a, side, 2] = max(orders[w, a, side, 2] - taken, 0)
        return
    first = 0  # what the agent's orders ahead of the order (or at better prices) traded
    walks = False  # an agent order behind the order at its level, met by the walk
    for a in range(orders.shape[1]):
        at = orders[w, a, side, 0]
        if at < 0:
            continue
        if tick == at:
            if arrival < orders[w, a, side, 3]:  # the order is ahead of the agent
                orders[w, a, side, 2] = max(orders[w, a, side, 2] - taken, 0)
                walks = True
            else:  # behind it: the agent traded first
                orders[w, a, side, 2] = 0
                first += _filled(tape, w, a, side, at, size, terms, state)
        elif tick < at if side == BUY else tick > at:
            first += _filled(tape, w, a, side, at, size, terms, state)
    if taken == size:
        return  # the window held the lots executed: its deficit stays
    rest = max(size - taken - first, 0)
    start = max(lost, ahead + own)  # the first lot behind the order the window holds
    level = _volume(tape, side, tick, k)
    behind, rest = _take_level(tape, k, w, side, tick, level - start, rest, walks, terms, state)
    deficit[side, tick] = start + behind - size
    step = -1 if side == BUY else 1
    at = tick + step
    while rest > 0:
        at = _reached(tape, k, w, side, at, state)
        if at < 0:
            break
        level = _volume(tape, side, at, k)
        took, rest = _take_level(
            tape, k, w, side, at, level - deficit[side, at], rest, True, terms, state
        )
        deficit[side, at] += took
        at += step


@jit
def _reached(tape, k, w, side, tick, state):  # type: ignore[no-untyped-def]
    """The first tick from ``tick`` outward where window w holds lots before message k or
    its agents rest an order on ``side``; -1 if none."""
    orders = state[ORDERS]
    reached = _window_level(tape, k, state[DEFICITS][w], side, tick)
    for a in range(orders.shape[1]):
        at = orders[w, a, side, 0]
        beyond = at <= tick if side == BUY else at >= tick
        nearer = reached < 0 or (at > reached if side == BUY else at < reached)
        if at >= 0 and beyond and nearer:
            reached = at
    return reached


@jit
def _take_level(tape, k, w, side, tick, held, lots, agents, terms, state):  # type: ignore[no-untyped-def]
    """Execute up to ``lots`` at (side, tick) in window w: its ``held`` real lots in FIFO
    order, with the agents' orders there where they stand (if ``agents``); return the real
    lots taken and the lots left to execute."""
    orders = state[ORDERS]
    real = 0
    held = max(held, 0)
    if agents:
        for a in range(orders.shape[1]):
            if lots == 0 or orders[w, a, side, 0] != tick:
                continue
            before = min(lots, orders[w, a, side, 2], held - real)
            real += before
            lots -= before
            orders[w, a, side, 2] -= before
            if lots > 0 and orders[w, a, side, 2] == 0:
                lots -= _filled(tape, w, a, side, tick, lots, terms, state)
    behind = min(lots, held - real)
    return real + behind, lots - behind


@jit
def _window_level(tape, k, deficit, side, tick):  # type: ignore[no-untyped-def]
    """The first tick from ``tick`` outward where the window (``deficit``: its lots taken
    per (side, tick)) holds lots before message k; -1 if none."""
    step = -1 if side == BUY else 1
    at = _next_level(tape, side, tick, k)
    while at >= 0 and _volume(tape, side, at, k) <= deficit[side, at]:
        at = _next_level(tape, side, at + step, k)
    return at


@jit
def _instruct(tape, k, w, a, bid, ask, market, market_lots, terms, state):  # type: ignore[no-untyped-def]
    """Agent a's instruction, reaching window w's book before message k (as
    ``_replay_windows._instruct``, on the window's book)."""
    halted = tape[7]
    order_size, max_inventory, taker_fee = terms[0], terms[1], terms[3]
    orders, inventory, deficit = state[ORDERS], state[INVENTORY], state[DEFICITS][w]
    acts = bid >= 0 or ask >= 0 or market != NO_MARKET
    if halted[k] and acts:
        state[REFUSED][w] += 1
        bid, ask, market = min(bid, KEEP_ORDER), min(ask, KEEP_ORDER), NO_MARKET
    for side in (BUY, SELL):
        tick = bid if side == BUY else ask
        if tick == KEEP_ORDER or tick == orders[w, a, side, 0]:
            continue
        orders[w, a, side, 0] = -1
        orders[w, a, side, 1] = 0
        if tick < 0:
            continue
        other = _window_best(tape, k, deficit, 1 - side)  # post-only, on the window's book
        if other >= 0 and (tick >= other if side == BUY else tick <= other):
            continue
        size = min(order_size, room(inventory[w, a], side, max_inventory))
        if size > 0:
            orders[w, a, side, 0] = tick
            orders[w, a, side, 1] = size
            orders[w, a, side, 2] = _volume(tape, side, tick, k) - deficit[side, tick]
            orders[w, a, side, 3] = k
    if market == NO_MARKET:
        return
    maker = 1 - market
    orders[w, a, maker, 0] = -1
    orders[w, a, maker, 1] = 0
    left = min(market_lots, room(inventory[w, a], market, max_inventory))
    step = -1 if maker == BUY else 1
    tick = _window_best(tape, k, deficit, maker)
    for _ in range(tape[18]):
        if left == 0 or tick < 0:
            break
        take = min(left, _volume(tape, maker, tick, k) - deficit[maker, tick])
        _account(tape, w, a, market, tick, take, taker_fee, False, state)
        deficit[maker, tick] += take
        left -= take
        tick = _window_level(tape, k, deficit, maker, tick + step)
    cap_room = room(inventory[w, a], market, max_inventory)
    if orders[w, a, market, 1] > cap_room:
        orders[w, a, market, 1] = cap_room
        if cap_room == 0:
            orders[w, a, market, 0] = -1


@jit
def _window_best(tape, k, deficit, side):  # type: ignore[no-untyped-def]
    """The window's best tick on ``side`` before message k (-1: none)."""
    best = tape[5][k, side]
    return -1 if best < 0 else _window_level(tape, k, deficit, side, best)


@jit
def _tops(tape, deficits, windows, rows, out):  # type: ignore[no-untyped-def]
    for j in range(len(rows)):
        k, deficit = rows[j], deficits[windows[j]]
        for side in (BUY, SELL):
            step = -1 if side == BUY else 1
            tick = _window_best(tape, k, deficit, side)
            level = 0
            while level < out.shape[2] and tick >= 0:
                out[j, side, level, 0] = tick
                out[j, side, level, 1] = _volume(tape, side, tick, k) - deficit[side, tick]
                level += 1
                tick = _window_level(tape, k, deficit, side, tick + step)
            while level < out.shape[2]:
                out[j, side, level, 0] = -1
                out[j, side, level, 1] = 0
                level += 1


def impacted_tops(tape, deficits, windows, rows, levels):  # type: ignore[no-untyped-def]
    """``(len(rows), 2, levels, 2)``: window ``windows[j]``'s top levels before message
    ``rows[j]`` (side, level, tick/lots; tick -1 and 0 lots past the last level), the
    replayed levels less its ``deficits``."""
    out = np.empty((len(rows), 2, levels, 2), np.int64)
    _tops(tape, deficits, np.asarray(windows, np.int64), np.asarray(rows, np.int64), out)
    return out
