"""A compiled replay of LOBSTER messages over level arrays: ``lobster.replay`` as one numba
loop, with or without the orderbook file's reconciliation.

The book is lots per side and tick, legacy lots per side and tick (ahead of every order at
their level), and an order table indexed by a dense slot per LOBSTER id (size, side, tick, and
the links of its level's FIFO queue). Executions, cancels and deletes of a known id act on that
order; of an unknown id, on the legacy lots at its price; a submission that crosses (only
against stale volume, in a file that hides deep levels) trades legacy first, then the queue,
best price first, as ``OrderBook`` does. Given the orderbook rows, after each message the top
N levels are set to the row by ``lobster.replay``'s rule: volume the book holds beyond the row
is cancelled (legacy first, then the newest orders), volume the row shows and the book lacks
becomes legacy; each change is recorded as a correction for the replay windows' queues.
numba is imported here only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from sekai.finance.lobster import DELETE, EXECUTE, SUBMIT, _check_replay
from sekai.finance.order_book import BUY, SELL

_jit = numba.njit(cache=True)  # type: ignore[call-overload]
FIX_FIELDS = 5  # a correction: after message, side, tick, lots (+ legacy added, - taken), arrival


def replay_levels(
    messages: NDArray[Any],
    opening: NDArray[np.int64],
    *,
    n_ticks: int,
    tick: int = 100,
    price_offset: int = 0,
    levels: int = 1,
    orderbook: NDArray[Any] | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
    """Replay ``messages`` on a book of ``opening`` lots per (side, tick), all legacy,
    reconciled with the ``orderbook`` rows if given.

    Returns the top ``levels`` levels after every message, ``(len(messages), 2, levels, 2)``
    (side BUY/SELL, level, then tick and lots; tick -1 and 0 lots past the last level); the
    lots per (side, tick) at the end; and how many messages were unmatched.
    """
    record, volume, unmatched = _run(
        messages, opening, n_ticks, tick, price_offset, levels, orderbook
    )
    return record.top[1:], volume, unmatched


class ReplayRecord(NamedTuple):
    """A stream replayed once, message by message, as arrays (``replay_record``)."""

    kinds: NDArray[np.int64]  # the message types
    ticks: NDArray[np.int64]  # (a halt's: -1, 0 or 1)
    sides: NDArray[np.int64]  # BUY or SELL
    lots: NDArray[np.int64]  # put on (submission) or taken off (2 to 4) the level
    arrival: NDArray[np.int64]  # index of the named order's submission; -1: legacy
    top: NDArray[np.int64]  # (n + 1, 2, levels, 2): the top levels before message k
    reconciliations: int  # messages after which the top levels were set to the orderbook row
    fixes: NDArray[np.int64]  # (c, FIX_FIELDS): the corrections, in the order they were made


def replay_record(
    messages: NDArray[Any],
    opening: NDArray[np.int64],
    *,
    n_ticks: int,
    tick: int = 100,
    price_offset: int = 0,
    levels: int = 1,
    orderbook: NDArray[Any] | None = None,
) -> ReplayRecord:
    """Replay ``messages`` on the ``opening`` lots as ``replay_levels`` does, and record per
    message what a virtual order in the queue needs: the lots it moved, the arrival of the
    order it names, the top ``levels`` levels before it (row n: after the last) and the
    reconciliation's corrections after it."""
    return _run(messages, opening, n_ticks, tick, price_offset, levels, orderbook)[0]


def _run(
    messages: NDArray[Any],
    opening: NDArray[np.int64],
    n_ticks: int,
    tick: int,
    price_offset: int,
    levels: int,
    orderbook: NDArray[Any] | None,
) -> tuple[ReplayRecord, NDArray[np.int64], int]:
    """The record, the lots per (side, tick) at the end, and the unmatched messages."""
    kinds, ticks = _check_replay(messages, tick, price_offset, n_ticks, orderbook)
    ids, slots = np.unique(messages["order_id"], return_inverse=True)
    sides = np.where(messages["direction"] == 1, BUY, SELL).astype(np.int64)
    top = np.empty((len(messages) + 1, 2, levels, 2), np.int64)
    volume = np.array(opening, np.int64, copy=True)
    _opening_top(volume, top[0])
    lots, arrival = np.empty(len(messages), np.int64), np.empty(len(messages), np.int64)
    row_ticks, row_sizes = _rows(orderbook, len(messages), tick, price_offset)
    unmatched, reconciliations, n_fixes, fixes = _replay(
        kinds,
        slots.astype(np.int64),
        np.ascontiguousarray(messages["size"]),
        ticks,
        sides,
        volume,
        len(ids),
        top[1:],
        lots,
        arrival,
        orderbook is not None,
        row_ticks,
        row_sizes,
    )
    record = ReplayRecord(
        kinds, ticks, sides, lots, arrival, top, int(reconciliations), fixes[:n_fixes].copy()
    )
    return record, volume, int(unmatched)


def _rows(
    orderbook: NDArray[Any] | None, n: int, tick: int, price_offset: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The rows' ticks and sizes, each ``(n, 2, N)`` (side BUY/SELL, level best first; tick
    0 and size 0 where a level is empty, as ``lobster._row_ticks``); ``(n, 2, 0)`` without
    an orderbook."""
    if orderbook is None:
        return np.zeros((n, 2, 0), np.int64), np.zeros((n, 2, 0), np.int64)
    depth = orderbook.dtype["bid_size"].shape[0]
    row_ticks, row_sizes = np.empty((n, 2, depth), np.int64), np.empty((n, 2, depth), np.int64)
    for side, name in ((BUY, "bid"), (SELL, "ask")):
        _row_arrays(
            orderbook[f"{name}_price"],
            orderbook[f"{name}_size"],
            tick,
            price_offset,
            row_ticks[:, side],
            row_sizes[:, side],
        )
    return row_ticks, row_sizes


@_jit
def _row_arrays(prices, sizes, tick, price_offset, row_ticks, row_sizes):  # type: ignore[no-untyped-def]
    """One side's rows as ticks and sizes, in one pass over the strided fields."""
    for k in range(prices.shape[0]):
        for level in range(prices.shape[1]):
            size = sizes[k, level]
            row_sizes[k, level] = size
            row_ticks[k, level] = (prices[k, level] - price_offset) // tick if size else 0


@_jit
def _opening_top(volume, out):  # type: ignore[no-untyped-def]
    n_ticks = volume.shape[1]
    _top(volume, n_ticks - 1, 0, 0, n_ticks - 1, out)


@_jit
def _replay(  # type: ignore[no-untyped-def]
    kinds,
    slots,
    sizes,
    ticks,
    sides,
    volume,
    n_slots,
    top,
    lots_of,
    arrival,
    reconciling,
    row_ticks,
    row_sizes,
):
    """Replay into ``volume``; write the top levels after message k into ``top[k]``, the lots
    message k put on its level (a submission: what rests of it) or took off it (a cancel,
    delete or execution) into ``lots_of[k]`` (0 for the other types), and into
    ``arrival[k]`` the index of the submission of the order message k names (-1: an order
    from before the file, legacy volume). If ``reconciling``, set the top levels after
    message k to row k of ``row_ticks``/``row_sizes`` (``_reconcile``). Return how many
    messages were unmatched, how many needed reconciling, and the corrections (their count
    and an array of FIX_FIELDS columns holding them in its first rows)."""
    n_ticks = volume.shape[1]
    arrived = np.full(n_slots, -1, np.int64)
    legacy = volume.copy()
    size = np.zeros(n_slots, np.int64)  # 0: not resting
    side_of = np.zeros(n_slots, np.int64)
    tick_of = np.zeros(n_slots, np.int64)
    nxt = np.full(n_slots, -1, np.int64)
    prv = np.full(n_slots, -1, np.int64)
    head = np.full((2, n_ticks), -1, np.int64)
    tail = np.full((2, n_ticks), -1, np.int64)
    bid = n_ticks - 1
    while bid >= 0 and volume[BUY, bid] == 0:
        bid -= 1
    ask = 0
    while ask < n_ticks and volume[SELL, ask] == 0:
        ask += 1
    # the lowest bid and the highest ask ever held bound the scans for the top levels
    low = 0
    while low < n_ticks and volume[BUY, low] == 0:
        low += 1
    high = n_ticks - 1
    while high >= 0 and volume[SELL, high] == 0:
        high -= 1
    unmatched = reconciled = n_fixes = 0
    fixes = np.empty((16, FIX_FIELDS), np.int64)
    for k in range(len(kinds)):
        kind, slot, lots, price, side = kinds[k], slots[k], sizes[k], ticks[k], sides[k]
        lots_of[k], arrival[k] = 0, -1
        if kind == SUBMIT:
            arrival[k] = arrived[slot] = k
            if side == BUY:
                while lots and ask < n_ticks and ask <= price:
                    lots = _take(SELL, ask, lots, volume, legacy, size, head, tail, nxt, prv)
                    while ask < n_ticks and volume[SELL, ask] == 0:
                        ask += 1
            else:
                while lots and bid >= 0 and bid >= price:
                    lots = _take(BUY, bid, lots, volume, legacy, size, head, tail, nxt, prv)
                    while bid >= 0 and volume[BUY, bid] == 0:
                        bid -= 1
            if lots:
                size[slot], side_of[slot], tick_of[slot] = lots, side, price
                nxt[slot], prv[slot] = -1, tail[side, price]
                if tail[side, price] >= 0:
                    nxt[tail[side, price]] = slot
                else:
                    head[side, price] = slot
                tail[side, price] = slot
                volume[side, price] += lots
                lots_of[k] = lots
                if side == BUY:
                    bid, low = max(bid, price), min(low, price)
                else:
                    ask, high = min(ask, price), max(high, price)
        elif kind <= EXECUTE:
            if size[slot]:
                side, price = side_of[slot], tick_of[slot]
                cut = lots
                if kind == DELETE or lots >= size[slot]:
                    if kind == EXECUTE and lots > size[slot]:
                        unmatched += 1
                    cut = size[slot]
                size[slot] -= cut
                volume[side, price] -= cut
                arrival[k] = arrived[slot]
                if size[slot] == 0:
                    _unlink(slot, side, price, head, tail, nxt, prv)
            else:
                cut = min(lots, legacy[side, price])
                legacy[side, price] -= cut
                volume[side, price] -= cut
                if cut < lots:
                    unmatched += 1
            lots_of[k] = cut
            if volume[side, price] == 0:
                if side == BUY:
                    while bid >= 0 and volume[BUY, bid] == 0:
                        bid -= 1
                else:
                    while ask < n_ticks and volume[SELL, ask] == 0:
                        ask += 1
        # hidden executions, cross trades and halts change no level
        if reconciling and not _matches(volume, bid, ask, low, high, row_ticks[k], row_sizes[k]):
            reconciled += 1
            fixes, n_fixes = _reconcile(
                k, volume, legacy, size, arrived, tail, prv, nxt, head, bid, ask, low, high,
                row_ticks[k], row_sizes[k], fixes, n_fixes,
            )  # fmt: skip
            while bid >= 0 and volume[BUY, bid] == 0:
                bid -= 1
            while ask < n_ticks and volume[SELL, ask] == 0:
                ask += 1
            for level in range(row_sizes.shape[2]):
                if row_sizes[k, BUY, level]:
                    bid = max(bid, row_ticks[k, BUY, level])
                    low = min(low, row_ticks[k, BUY, level])
                if row_sizes[k, SELL, level]:
                    ask = min(ask, row_ticks[k, SELL, level])
                    high = max(high, row_ticks[k, SELL, level])
        _top(volume, bid, ask, low, high, top[k])
    return unmatched, reconciled, n_fixes, fixes


@_jit
def _matches(volume, bid, ask, low, high, row_ticks, row_sizes):  # type: ignore[no-untyped-def]
    """Whether the book's top levels are an orderbook row's (``row_ticks``/``row_sizes``,
    (2, N): side, level best first, size 0 where empty)."""
    for side in (BUY, SELL):
        price = bid if side == BUY else ask
        for level in range(row_sizes.shape[1]):
            if side == BUY:
                while price >= low and volume[BUY, price] == 0:
                    price -= 1
                found = price >= low
            else:
                while price <= high and volume[SELL, price] == 0:
                    price += 1
                found = price <= high
            if not found:
                if row_sizes[side, level]:
                    return False
                continue
            if row_sizes[side, level] != volume[side, price] or row_ticks[side, level] != price:
                return False
            price += -1 if side == BUY else 1
    return True


@_jit
def _reconcile(  # type: ignore[no-untyped-def]
    k, volume, legacy, size, arrived, tail, prv, nxt, head, bid, ask, low, high,
    row_ticks, row_sizes, fixes, n_fixes,
):  # fmt: skip
    """``lobster._reconcile`` on the level arrays, after message k: on each side, the volume
    the book holds beyond the row, from the best level to the row's last (the whole side if
    the row shows fewer than N levels), is cancelled, legacy first, then the newest orders;
    then what the row shows beyond the book's volume is added as legacy. Every change is
    appended to ``fixes``; return them (grown if needed) and their count."""
    n_ticks, depth = volume.shape[1], row_sizes.shape[1]
    for side in (BUY, SELL):
        shown = 0
        while shown < depth and row_sizes[side, shown]:
            shown += 1
        if side == BUY:
            first, last, step = bid, low, -1
            if shown == depth:
                last = max(low, row_ticks[side, depth - 1])
        else:
            first, last, step = ask, high, 1
            if shown == depth:
                last = min(high, row_ticks[side, depth - 1])
        price = first
        while 0 <= price < n_ticks and (price >= last if side == BUY else price <= last):
            if volume[side, price]:
                wanted = 0
                for level in range(shown):
                    if row_ticks[side, level] == price:
                        wanted = row_sizes[side, level]
                excess = volume[side, price] - wanted
                if excess > 0:
                    take = min(excess, legacy[side, price])
                    if take:
                        legacy[side, price] -= take
                        volume[side, price] -= take
                        excess -= take
                        fixes, n_fixes = _fix(fixes, n_fixes, k, side, price, -take, -1)
                    slot = tail[side, price]
                    while excess and slot >= 0:
                        before = prv[slot]
                        cut = min(excess, size[slot])
                        size[slot] -= cut
                        volume[side, price] -= cut
                        excess -= cut
                        fixes, n_fixes = _fix(fixes, n_fixes, k, side, price, -cut, arrived[slot])
                        if size[slot] == 0:
                            _unlink(slot, side, price, head, tail, nxt, prv)
                        slot = before
            price += step
        for level in range(shown):
            price = row_ticks[side, level]
            missing = row_sizes[side, level] - volume[side, price]
            if missing > 0:
                legacy[side, price] += missing
                volume[side, price] += missing
                fixes, n_fixes = _fix(fixes, n_fixes, k, side, price, missing, -1)
    return fixes, n_fixes


@_jit
def _fix(fixes, n_fixes, k, side, price, lots, arrival):  # type: ignore[no-untyped-def]
    """Append a correction to ``fixes`` (doubled when full); return it and the new count."""
    if n_fixes == fixes.shape[0]:
        grown = np.empty((2 * fixes.shape[0], FIX_FIELDS), np.int64)
        grown[:n_fixes] = fixes
        fixes = grown
    fixes[n_fixes, 0], fixes[n_fixes, 1], fixes[n_fixes, 2] = k, side, price
    fixes[n_fixes, 3], fixes[n_fixes, 4] = lots, arrival
    return fixes, n_fixes + 1


@_jit
def _take(maker, price, lots, volume, legacy, size, head, tail, nxt, prv):  # type: ignore[no-untyped-def]
    """Trade up to ``lots`` at one level, legacy first, then the queue; return what is left."""
    fill = min(lots, legacy[maker, price])
    legacy[maker, price] -= fill
    volume[maker, price] -= fill
    lots -= fill
    while lots and head[maker, price] >= 0:
        slot = head[maker, price]
        fill = min(lots, size[slot])
        size[slot] -= fill
        volume[maker, price] -= fill
        lots -= fill
        if size[slot] == 0:
            _unlink(slot, maker, price, head, tail, nxt, prv)
    return lots


@_jit
def _unlink(slot, side, price, head, tail, nxt, prv):  # type: ignore[no-untyped-def]
    if prv[slot] >= 0:
        nxt[prv[slot]] = nxt[slot]
    else:
        head[side, price] = nxt[slot]
    if nxt[slot] >= 0:
        prv[nxt[slot]] = prv[slot]
    else:
        tail[side, price] = prv[slot]
    nxt[slot] = prv[slot] = -1


@_jit
def _top(volume, bid, ask, low, high, out):  # type: ignore[no-untyped-def]
    """The top levels of both sides into ``out`` (side, level, tick/lots; -1 and 0 past the
    last level); no bid lies below ``low``, no ask above ``high``."""
    price = bid
    for level in range(out.shape[1]):
        while price >= low and volume[BUY, price] == 0:
            price -= 1
        found = price >= low
        out[BUY, level, 0] = price if found else -1
        out[BUY, level, 1] = volume[BUY, price] if found else 0
        price -= 1
    price = ask
    for level in range(out.shape[1]):
        while price <= high and volume[SELL, price] == 0:
            price += 1
        found = price <= high
        out[SELL, level, 0] = price if found else -1
        out[SELL, level, 1] = volume[SELL, price] if found else 0
        price += 1
