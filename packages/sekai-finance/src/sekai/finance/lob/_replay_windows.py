"""Many windows of replayed days stepped at once, with virtual agent orders in the
real FIFO queues: one compiled call per step, a leading window axis.

The replayed book is the same for every window (agent orders are virtual: no market impact),
so it is replayed once per day (``_replay_kernel.replay_record``) into per-message arrays that
every window indexes, never copies: the lots each message moved, the arrival (message index)
of the order it names, the best ticks before it, and the per-level history the deeper levels
and the lots at any level are looked up in (``_replay_levels``). A window holds only its
cursor into those arrays and its agents' orders and accounts. An agent order has a side, a
tick, a size, the lots ahead of it and the message index at which it joined its level:

- it joins behind every lot at its level then (legacy volume and orders that arrived before);
- a cancel, delete or execution at its level of an order that arrived before it (or of legacy
  volume) moves it up by the lots taken off;
- an execution at its level of an order that arrived after it means it traded first: it fills
  by that size, and nothing is ahead of it any more;
- an execution (visible or hidden) at a price worse than its own (a sell below the agent's bid,
  a buy above its ask), or a new order on the other side at or through its price, also fills
  it, by that size;
- an agent market order takes the replayed levels' lots at their prices, without changing them;
- a reconciliation with the orderbook file (``ReplayDay``) after a message corrects the levels
  as ``lobster.replay`` does: legacy volume added at the agent's level is ahead of it (legacy
  rests at the head of a level), volume cancelled there moves it up if it was ahead of it.

Every fill is cut to what keeps the agent's inventory within ``max_inventory`` lots (an order
with no room left is cancelled); makers pay ``maker_fee`` per lot, takers ``taker_fee`` (a
negative fee is a rebate). The inventory cap's room and the accounts are the engine's rules
(``_engine``). numba is imported here and there only.
"""

from __future__ import annotations

import numba
import numpy as np

from sekai.finance.lob._engine import inline, jit, room, settle
from sekai.finance.lob._replay_levels import lots_at, next_level
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.events import ADD as SUBMIT
from sekai.finance.lob.events import EXECUTE
from sekai.finance.lob.events import TRADE as EXECUTE_HIDDEN

KEEP_ORDER, CANCEL_ORDER = -1, -2  # an instruction for a side: keep, cancel, else a tick
NO_MARKET = -1
FILL_FIELDS = 5  # agent, side (BUY: the agent bought), tick, lots, 1 maker / 0 taker
PARALLEL_FROM = 8  # windows: fewer are stepped on one thread (no thread pool to wake)
# the state tuple: cursor (W,), orders (W, A, 2, 4): tick or -1, size, lots ahead, joined at;
# cash, inventory, fees (W, A); fills (W, capacity, FILL_FIELDS), n_fills, refused (W,)
CURSOR, ORDERS, CASH, INVENTORY, FEES, FILLS, N_FILLS, REFUSED = range(8)


def step_windows(tape, stop, instructions, terms, state):  # type: ignore[no-untyped-def]
    """Replay window w's messages from ``state[CURSOR][w]`` up to ``stop[w]`` with its agents'
    orders. ``instructions`` = (entry, bid, ask, market, market_lots), each (W, A): agent a's
    instruction (``bid``/``ask``: a tick, KEEP_ORDER or CANCEL_ORDER; ``market``: BUY, SELL or
    NO_MARKET, for ``market_lots`` lots) reaches the book before message ``entry[w, a]``.
    ``terms`` = (order_size, max_inventory, maker_fee, taker_fee): ``order_size`` is a limit
    order's. This call's fills go to ``fills[w, :n_fills[w]]``; an instruction
    that reached a halted book is dropped and counted in ``refused[w]``. From PARALLEL_FROM
    windows on, the windows are spread over every core."""
    n, agents = instructions[0].shape
    if n >= PARALLEL_FROM:
        chunks = 4 * numba.get_num_threads()
        _parallel(tape, stop, instructions, terms, state, np.empty((chunks, agents), np.int64))
    else:
        _serial(0, n, tape, stop, instructions, terms, state, np.empty(agents, np.int64))


@numba.njit(cache=True, parallel=True, _nrt=False)  # type: ignore[call-overload,misc]
def _parallel(tape, stop, instructions, terms, state, rooms):  # type: ignore[no-untyped-def]
    """``_serial`` over as many runs of windows as ``rooms`` has rows (each run's room for
    ``_window``'s order), spread over every core: a call per run, not per window, as a call
    passes every array of the tape and the state (inlined, a window's step is a fifth
    faster)."""
    n, chunks = len(stop), len(rooms)
    for c in numba.prange(chunks):
        first, end = n * np.int64(c) // chunks, n * (np.int64(c) + 1) // chunks
        _serial(first, end, tape, stop, instructions, terms, state, rooms[c])


@jit
def _serial(lo, hi, tape, stop, instructions, terms, state, order):  # type: ignore[no-untyped-def]
    """Windows ``lo:hi``, one after the other; ``order``: room for a window's agents' order."""
    for w in range(lo, hi):
        _window(w, tape, stop, instructions, terms, state, order)


@inline
def _window(w, tape, stop, instructions, terms, state, order):  # type: ignore[no-untyped-def]
    """One window's step (see ``step_windows``); ``order``: room for its agents' order."""
    entry, bid, ask, market, market_lots = instructions
    cursor = state[CURSOR]
    state[N_FILLS][w] = 0
    k = cursor[w]
    fix = np.searchsorted(tape[12], k)  # the first correction after message k or later
    _arrival_order(entry[w], order)
    for a in order:
        k, fix = _replay(tape, k, entry[w, a], fix, w, terms, state)
        _instruct(
            tape, k, w, a, bid[w, a], ask[w, a], market[w, a], market_lots[w, a], terms, state
        )
    cursor[w], _ = _replay(tape, k, stop[w], fix, w, terms, state)


@inline
def _arrival_order(entry, order):  # type: ignore[no-untyped-def]
    """The agents by the message their instructions arrive before, ties in agent order (an
    insertion sort in place: a window has few agents, and the kernel allocates nothing)."""
    for a in range(len(entry)):
        j = a
        while j > 0 and entry[order[j - 1]] > entry[a]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = a


@inline
def _replay(tape, k, until, fix, w, terms, state):  # type: ignore[no-untyped-def]
    """Window w's messages k up to ``until`` (and their corrections, from ``fix`` on); the
    next message and correction."""
    while k < until:
        _message(tape, k, w, terms, state)
        fix = _corrections(tape, k, fix, w, state)
        k += 1
    return k, fix


@inline
def _message(tape, k, w, terms, state):  # type: ignore[no-untyped-def]
    """Message k's effect on window w's agent orders."""
    kinds, sides, ticks, lots, arrival = tape[0], tape[1], tape[2], tape[3], tape[4]
    kind, side, tick, size = kinds[k], sides[k], ticks[k], lots[k]
    if kind > EXECUTE_HIDDEN or size == 0:
        return
    orders = state[ORDERS]
    for a in range(orders.shape[1]):
        if kind == SUBMIT:  # a new order crossing the agent's on the other side
            other = 1 - side
            at = orders[w, a, other, 0]
            if at >= 0 and (tick <= at if other == BUY else tick >= at):
                _fill(tape, w, a, other, at, size, terms, state)
            continue
        at = orders[w, a, side, 0]
        if at < 0:
            continue
        if tick == at and kind != EXECUTE_HIDDEN:
            if arrival[k] < orders[w, a, side, 3]:  # ahead of the agent (or legacy)
                orders[w, a, side, 2] = max(orders[w, a, side, 2] - size, 0)
            elif kind == EXECUTE:  # behind it: the agent traded first
                orders[w, a, side, 2] = 0
                _fill(tape, w, a, side, at, size, terms, state)
        elif kind >= EXECUTE and (tick < at if side == BUY else tick > at):
            _fill(tape, w, a, side, at, size, terms, state)


@inline
def _corrections(tape, k, fix, w, state):  # type: ignore[no-untyped-def]
    """The reconciliation's corrections after message k, from the first not yet applied
    (``fix``), on window w's agent orders: legacy volume added at an agent's level goes
    ahead of it; volume taken off (legacy, or an order) moves it up if it was ahead. Returns
    the first correction after a later message."""
    fix_after = tape[12]
    if fix == len(fix_after) or fix_after[fix] != k:
        return fix
    fix_sides, fix_ticks, fix_lots, fix_arrival = tape[13], tape[14], tape[15], tape[16]
    orders = state[ORDERS]
    j = fix
    while j < len(fix_after) and fix_after[j] == k:
        side, tick, lots = fix_sides[j], fix_ticks[j], fix_lots[j]
        for a in range(orders.shape[1]):
            # legacy (arrival -1) rests at the head: added or taken, it is ahead of the agent
            if orders[w, a, side, 0] == tick and fix_arrival[j] < orders[w, a, side, 3]:
                orders[w, a, side, 2] = max(orders[w, a, side, 2] + lots, 0)
        j += 1
    return j


@jit
def _instruct(tape, k, w, a, bid, ask, market, market_lots, terms, state):  # type: ignore[no-untyped-def]
    """Agent a's instruction, reaching window w's book before message k."""
    best, halted = tape[5], tape[7]
    order_size, max_inventory, taker_fee = terms[0], terms[1], terms[3]
    orders, inventory = state[ORDERS], state[INVENTORY]
    acts = bid >= 0 or ask >= 0 or market != NO_MARKET
    if halted[k] and acts:
        state[REFUSED][w] += 1
        bid, ask, market = min(bid, KEEP_ORDER), min(ask, KEEP_ORDER), NO_MARKET
    for side in (BUY, SELL):
        tick = bid if side == BUY else ask
        if tick == KEEP_ORDER or tick == orders[w, a, side, 0]:
            continue  # keep, or already there: the place in the queue is kept
        orders[w, a, side, 0] = -1
        orders[w, a, side, 1] = 0
        if tick < 0:
            continue
        other = best[k, 1 - side]  # post-only: an order that would cross is dropped
        if other >= 0 and (tick >= other if side == BUY else tick <= other):
            continue
        size = min(order_size, room(inventory[w, a], side, max_inventory))
        if size > 0:
            orders[w, a, side, 0] = tick
            orders[w, a, side, 1] = size
            orders[w, a, side, 2] = _volume(tape, side, tick, k)
            orders[w, a, side, 3] = k
    if market == NO_MARKET:
        return
    maker = 1 - market
    orders[w, a, maker, 0] = -1  # self-trade prevention: the agent's own quote goes first
    orders[w, a, maker, 1] = 0
    left = min(market_lots, room(inventory[w, a], market, max_inventory))
    step = -1 if maker == BUY else 1
    tick = best[k, maker]
    for _ in range(tape[18]):  # the tape's top levels, best first
        if left == 0 or tick < 0:
            break
        take = min(left, _volume(tape, maker, tick, k))
        _account(tape, w, a, market, tick, take, taker_fee, False, state)
        left -= take
        tick = _next_level(tape, maker, tick + step, k)
    cap_room = room(inventory[w, a], market, max_inventory)
    if orders[w, a, market, 1] > cap_room:  # the quote on the traded side, cut to the room left
        orders[w, a, market, 1] = cap_room
        if cap_room == 0:
            orders[w, a, market, 0] = -1


@jit
def _fill(tape, w, a, side, tick, lots, terms, state):  # type: ignore[no-untyped-def]
    """Agent a's resting order on ``side`` trades up to ``lots`` at ``tick``, as the maker."""
    orders, inventory, max_inventory = state[ORDERS], state[INVENTORY], terms[1]
    size = min(lots, orders[w, a, side, 1], room(inventory[w, a], side, max_inventory))
    if size > 0:
        _account(tape, w, a, side, tick, size, terms[2], True, state)
        orders[w, a, side, 1] -= size
    if min(orders[w, a, side, 1], room(inventory[w, a], side, max_inventory)) <= 0:
        orders[w, a, side, 0] = -1
        orders[w, a, side, 1] = 0


@jit
def _account(tape, w, a, side, tick, lots, fee, maker, state):  # type: ignore[no-untyped-def]
    """Book a fill of ``lots`` at ``tick`` (``side`` BUY: the agent bought) and its fee."""
    if lots <= 0:
        return
    cash, inventory, fees, fills, n_fills = (
        state[CASH],
        state[INVENTORY],
        state[FEES],
        state[FILLS],
        state[N_FILLS],
    )
    settle(cash, inventory, w, a, side, lots, tape[6][tick], fee)
    fees[w, a] += fee * lots
    j = n_fills[w]
    if j < fills.shape[1]:
        fills[w, j, 0], fills[w, j, 1], fills[w, j, 2] = a, side, tick
        fills[w, j, 3], fills[w, j, 4] = lots, 1 if maker else 0
    n_fills[w] = j + 1


@inline
def _volume(tape, side, tick, k):  # type: ignore[no-untyped-def]
    """The lots at (side, tick) before message k, from the per-level history."""
    return lots_at(tape[8], tape[9], tape[10], tape[11], side, tick, k)


@inline
def _next_level(tape, side, tick, k):  # type: ignore[no-untyped-def]
    """The first tick from ``tick`` outward holding lots before message k (-1: none)."""
    return next_level(tape[8], tape[9], tape[10], tape[11], tape[17], side, tick, k)
