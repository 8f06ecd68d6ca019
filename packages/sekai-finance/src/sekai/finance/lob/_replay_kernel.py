"""A compiled replay of an order-event stream (``_replay_stream``: events of any reader, as
replay messages) over level arrays: ``lobster.replay`` as one numba loop, with or without the
reconciliation with level rows (LOBSTER's orderbook file, one row per event).

The book is lots per side and tick, legacy lots per side and tick (ahead of every order at
their level), and an order table indexed by a dense slot per LOBSTER id (size, side, tick, and
the links of its level's FIFO queue). Executions, cancels and deletes of a known id act on that
order; of an unknown id, on the legacy lots at its price; a submission that crosses (only
against stale volume, in a file that hides deep levels) trades legacy first, then the queue,
best price first, as ``OrderBook`` does. Given the orderbook rows, after each message the top
N levels are set to the row by ``lobster.replay``'s rule: volume the book holds beyond the row
is cancelled (legacy first, then the newest orders), volume the row shows and the book lacks
becomes legacy; each change is recorded as a correction for the replay windows' queues.
The level rules (best prices, the top levels, legacy volume taken and added, and the matching
walk of a level that a crossing submission trades through) are the engine's (``_engine``),
on the one-book case of its level arrays; the order-id table and its FIFO queues, which that
walk reads, are this replay's. numba is imported here and there only.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob._engine import (
    add_anonymous,
    after_removal,
    improve_best,
    inline,
    match_level,
    outward,
    take_anonymous,
    top_levels,
)
from sekai.finance.lob._replay_stream import (
    ReplayStream,
    check_rows,
    replay_stream,
    stream_ticks,
)
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.events import ADD as SUBMIT
from sekai.finance.lob.events import DELETE, EXECUTE

_jit = numba.njit(cache=True)  # type: ignore[call-overload]
FIX_FIELDS = 5  # a correction: after message, side, tick, lots (+ legacy added, - taken), arrival


def replay_levels(
    messages: ReplayStream | NDArray[Any],
    opening: NDArray[np.int64],
    *,
    n_ticks: int,
    tick: int = 100,
    price_offset: int = 0,
    levels: int = 1,
    orderbook: NDArray[Any] | None = None,
    checked: NDArray[np.bool_] | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
    """Replay ``messages`` (a stream, or events) on a book of ``opening`` lots per (side,
    tick), all legacy, reconciled with the ``orderbook`` rows (one per event) if given,
    after the events ``checked`` marks (default: every event).

    Returns the top ``levels`` levels after every message, ``(len(messages), 2, levels, 2)``
    (side BUY/SELL, level, then tick and lots; tick -1 and 0 lots past the last level); the
    lots per (side, tick) at the end; and how many messages were unmatched.
    """
    record, volume, unmatched = _run(
        messages, opening, n_ticks, tick, price_offset, levels, orderbook, checked
    )
    return record.top[1:].astype(np.int64), volume, unmatched


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
    crossings: NDArray[np.int64]  # (x, FIX_FIELDS): what crossing submissions traded, as fixes


def replay_record(
    messages: ReplayStream | NDArray[Any],
    opening: NDArray[np.int64],
    *,
    n_ticks: int,
    tick: int = 100,
    price_offset: int = 0,
    levels: int = 1,
    orderbook: NDArray[Any] | None = None,
    checked: NDArray[np.bool_] | None = None,
) -> ReplayRecord:
    """Replay ``messages`` on the ``opening`` lots as ``replay_levels`` does, and record per
    message what a virtual order in the queue needs: the lots it moved, the arrival of the
    order it names, the top ``levels`` levels before it (row n: after the last) and the
    reconciliation's corrections after it. The top levels are int32 (half the memory) where
    no level can reach 2**31 lots (see ``_top_dtype``), else int64."""
    arguments = (n_ticks, tick, price_offset, levels, orderbook, checked)
    return _run(messages, opening, *arguments)[0]


def _run(
    messages: ReplayStream | NDArray[Any],
    opening: NDArray[np.int64],
    n_ticks: int,
    tick: int,
    price_offset: int,
    levels: int,
    orderbook: NDArray[Any] | None,
    checked: NDArray[np.bool_] | None = None,
) -> tuple[ReplayRecord, NDArray[np.int64], int]:
    """The record, the lots per (side, tick) at the end, and the unmatched messages."""
    stream = messages if isinstance(messages, ReplayStream) else replay_stream(messages)
    ticks = stream_ticks(stream, tick, price_offset, n_ticks)
    n = len(stream)
    # one dtype for every caller, so that the kernel compiles once
    top = np.empty((n + 1, 2, levels, 2), _top_dtype(stream, opening, orderbook))
    volume = np.array(opening, np.int64)[:, :, None].copy()  # the engine's one-book case
    bids, asks = np.flatnonzero(opening[BUY]), np.flatnonzero(opening[SELL])
    best = np.array([[bids[-1] if len(bids) else -1, asks[0] if len(asks) else n_ticks]], np.int64)
    # the lowest bid and the highest ask ever held bound the scans for the top levels
    bounds = np.array([bids[0] if len(bids) else n_ticks, asks[-1] if len(asks) else -1], np.int64)
    _top(volume, best, bounds, top[0])
    lots, arrival = np.empty(n, np.int64), np.empty(n, np.int64)
    closes = stream.closes if checked is None else stream.closes & checked[stream.source]
    if orderbook is not None:
        check_rows(orderbook, stream.n_events, tick, price_offset, n_ticks)
        if n != len(orderbook):  # a row per event: the row after its last message
            orderbook = orderbook[stream.source]
    row_ticks, row_sizes = _rows(orderbook, n, tick, price_offset)
    unmatched, reconciliations, n_fixes, fixes, n_crossings, crossings = _replay(
        stream.kinds,
        stream.slots,
        stream.sizes,
        ticks,
        stream.sides,
        volume,
        best,
        bounds,
        stream.n_slots,
        top[1:],
        lots,
        arrival,
        orderbook is not None,
        closes,
        row_ticks,
        row_sizes,
    )
    record = ReplayRecord(
        stream.kinds,
        ticks,
        stream.sides,
        lots,
        arrival,
        top,
        int(reconciliations),
        fixes[:n_fixes].copy(),
        crossings[:n_crossings].copy(),
    )
    return record, volume[:, :, 0], int(unmatched)


def _top_dtype(
    stream: ReplayStream, opening: NDArray[np.int64], orderbook: NDArray[Any] | None
) -> type[np.signedinteger[Any]]:
    """int32 if every tick and every level's lots fit in it, else int64. A level never holds
    more than the opening book's lots, the largest size a row shows (a reconciliation sets a
    level to its row's size, or cancels) and every submission's lots together."""
    bound = float(opening.sum(dtype=np.float64))
    bound += float(stream.sizes[stream.kinds == SUBMIT].sum(dtype=np.float64))
    if orderbook is not None and len(orderbook):
        bound += max(float(orderbook[f"{name}_size"].max()) for name in ("bid", "ask"))
    limit = np.iinfo(np.int32).max
    return np.int32 if bound <= limit and opening.shape[1] <= limit else np.int64


def _rows(
    orderbook: NDArray[Any] | None, n: int, tick: int, price_offset: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The rows' ticks and sizes, each ``(n, 2, N)`` (side BUY/SELL, level best first; tick
    0 and size 0 where a level is empty, as ``lobster._row_ticks``, compiled: one pass over
    the strided fields instead of NumPy's several, for twice the rows per second);
    ``(n, 2, 0)`` without an orderbook."""
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
def _replay(  # type: ignore[no-untyped-def]
    kinds,
    slots,
    sizes,
    ticks,
    sides,
    volume,
    best,
    bounds,
    n_slots,
    top,
    lots_of,
    arrival,
    reconciling,
    closes,
    row_ticks,
    row_sizes,
):
    """Replay into ``volume`` (2, ticks, 1), its ``best`` (1, 2) and ``bounds`` (the lowest
    bid and highest ask held); write the top levels after message k into ``top[k]``, the lots
    message k put on its level (a submission: what rests of it) or took off it (a cancel,
    delete or execution) into ``lots_of[k]`` (0 for the other types), and into
    ``arrival[k]`` the index of the submission of the order message k names (-1: an order
    from before the file, legacy volume). If ``reconciling``, set the top levels after
    message k to row k of ``row_ticks``/``row_sizes`` (``_reconcile``) where ``closes[k]``
    (the last message of an event: the rows describe the book between events). Return how many
    messages were unmatched, how many needed reconciling, the corrections (their count
    and an array of FIX_FIELDS columns holding them in its first rows), and the same for the
    lots a crossing submission traded at each level it reached (negative, arrival -1): the
    level moves that ``lots_of`` does not show."""
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
    seen = np.empty((2, row_sizes.shape[2], 2), np.int64)  # the top levels a row shows
    unmatched = reconciled = n_fixes = n_crossings = 0
    fixes = np.empty((16, FIX_FIELDS), np.int64)
    crossings = np.empty((16, FIX_FIELDS), np.int64)
    for k in range(len(kinds)):
        kind, slot, lots, price, side = kinds[k], slots[k], sizes[k], ticks[k], sides[k]
        lots_of[k], arrival[k] = 0, -1
        if kind == SUBMIT:
            arrival[k] = arrived[slot] = k
            maker = 1 - side
            while lots and (best[0, SELL] <= price if side == BUY else best[0, BUY] >= price):
                at = best[0, maker]
                left = _take(maker, at, lots, volume, legacy, size, head, tail, nxt, prv)
                crossings, n_crossings = _fix(crossings, n_crossings, k, maker, at, left - lots, -1)
                lots = left
                after_removal(volume, best, 0, maker, at)
            if lots:
                size[slot], side_of[slot], tick_of[slot] = lots, side, price
                nxt[slot], prv[slot] = -1, tail[side, price]
                if tail[side, price] >= 0:
                    nxt[tail[side, price]] = slot
                else:
                    head[side, price] = slot
                tail[side, price] = slot
                volume[side, price, 0] += lots
                lots_of[k] = lots
                improve_best(best, 0, side, price)
                _widen(bounds, side, price)
        elif kind <= EXECUTE:
            if size[slot]:
                side, price = side_of[slot], tick_of[slot]
                cut = lots
                if kind == DELETE or lots >= size[slot]:
                    if kind == EXECUTE and lots > size[slot]:
                        unmatched += 1
                    cut = size[slot]
                size[slot] -= cut
                volume[side, price, 0] -= cut
                arrival[k] = arrived[slot]
                if size[slot] == 0:
                    _unlink(slot, side, price, head, tail, nxt, prv)
            else:
                cut = take_anonymous(volume, legacy, 0, side, price, lots)
                if cut < lots:
                    unmatched += 1
            lots_of[k] = cut
            after_removal(volume, best, 0, side, price)
        # hidden executions, cross trades and halts change no level
        shown = False
        if reconciling and closes[k]:
            _top(volume, best, bounds, seen)
            shown = _shows(seen, row_ticks[k], row_sizes[k])
            if not shown:
                reconciled += 1
                fixes, n_fixes = _reconcile(
                    k, volume, legacy, size, arrived, tail, prv, nxt, head, best, bounds,
                    row_ticks[k], row_sizes[k], fixes, n_fixes,
                )  # fmt: skip
                best[0, BUY] = outward(volume, 0, BUY, best[0, BUY], -1)
                best[0, SELL] = outward(volume, 0, SELL, best[0, SELL], n_ticks)
                for side in (BUY, SELL):
                    for level in range(row_sizes.shape[2]):
                        if row_sizes[k, side, level]:
                            improve_best(best, 0, side, row_ticks[k, side, level])
                            _widen(bounds, side, row_ticks[k, side, level])
        if shown and top.shape[2] <= seen.shape[1]:  # the book's top levels, read already
            top[k] = seen[:, : top.shape[2]]
        else:
            _top(volume, best, bounds, top[k])
    return unmatched, reconciled, n_fixes, fixes, n_crossings, crossings


@_jit
def _widen(bounds, side, price):  # type: ignore[no-untyped-def]
    """Keep ``bounds`` the lowest bid and the highest ask ever held, lots having come to
    ``price``."""
    if side == BUY:
        bounds[BUY] = min(bounds[BUY], price)
    else:
        bounds[SELL] = max(bounds[SELL], price)


@_jit
def _top(volume, best, bounds, out):  # type: ignore[no-untyped-def]
    """The top levels of both sides into ``out`` (side, level, tick/lots; -1 and 0 past the
    last level); no bid lies below ``bounds[BUY]``, no ask above ``bounds[SELL]``."""
    top_levels(volume, best, 0, bounds[BUY] - 1, bounds[SELL] + 1, out)


@_jit
def _shows(seen, row_ticks, row_sizes):  # type: ignore[no-untyped-def]
    """Whether the book's top levels ``seen`` (``_top``, as deep as the row) are an orderbook
    row's (``row_ticks``/``row_sizes``, (2, N): side, level best first, size 0 where empty)."""
    for side in (BUY, SELL):
        for level in range(row_sizes.shape[1]):
            wanted = row_sizes[side, level]
            if seen[side, level, 1] != wanted or (
                wanted and seen[side, level, 0] != row_ticks[side, level]
            ):
                return False
    return True


@_jit
def _reconcile(  # type: ignore[no-untyped-def]
    k, volume, legacy, size, arrived, tail, prv, nxt, head, best, bounds,
    row_ticks, row_sizes, fixes, n_fixes,
):  # fmt: skip
    """``lobster._reconcile`` on the level arrays, after message k: on each side, the volume
    the book holds beyond the row, from the best level to the row's last (the whole side if
    the row shows fewer than N levels), is cancelled, legacy first, then the newest orders;
    then what the row shows beyond the book's volume is added as legacy. Every change is
    appended to ``fixes``; return them (grown if needed) and their count."""
    depth = row_sizes.shape[1]
    for side in (BUY, SELL):
        shown = 0
        while shown < depth and row_sizes[side, shown]:
            shown += 1
        # the ticks past the last one to look at (the row's last level's, or the side's end)
        if side == BUY:
            step, last = -1, bounds[BUY]
            if shown == depth:
                last = max(last, row_ticks[side, depth - 1])
        else:
            step, last = 1, bounds[SELL]
            if shown == depth:
                last = min(last, row_ticks[side, depth - 1])
        price = outward(volume, 0, side, best[0, side], last + step)
        while price > last + step if side == BUY else price < last + step:
            wanted = 0
            for level in range(shown):
                if row_ticks[side, level] == price:
                    wanted = row_sizes[side, level]
            excess = volume[side, price, 0] - wanted
            if excess > 0:
                take = take_anonymous(volume, legacy, 0, side, price, excess)
                if take:
                    excess -= take
                    fixes, n_fixes = _fix(fixes, n_fixes, k, side, price, -take, -1)
                slot = tail[side, price]
                while excess and slot >= 0:
                    before = prv[slot]
                    cut = min(excess, size[slot])
                    size[slot] -= cut
                    volume[side, price, 0] -= cut
                    excess -= cut
                    fixes, n_fixes = _fix(fixes, n_fixes, k, side, price, -cut, arrived[slot])
                    if size[slot] == 0:
                        _unlink(slot, side, price, head, tail, nxt, prv)
                    slot = before
            price = outward(volume, 0, side, price + step, last + step)
        for level in range(shown):
            price = row_ticks[side, level]
            missing = row_sizes[side, level] - volume[side, price, 0]
            if missing > 0:
                add_anonymous(volume, legacy, 0, side, price, missing)
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
    """Trade up to ``lots`` at one level by the engine's rule (``match_level``: legacy first,
    then the FIFO queue); return what is left."""
    queue = (size, head, tail, nxt, prv)
    return match_level(volume, legacy, 0, maker, price, lots, queue, _first, _fill, _leave)


# The order-id FIFO as ``match_level`` reads it: ``queue`` is (size, head, tail, nxt, prv).
@inline
def _first(queue, b, side, price, legacy):  # type: ignore[no-untyped-def]
    """The level's first order (-1: none), the legacy lots ahead of it (all the level's) and
    its lots."""
    slot = queue[1][side, price]
    return slot, legacy, queue[0][slot] if slot >= 0 else 0


@inline
def _fill(queue, b, side, price, slot, lots):  # type: ignore[no-untyped-def]
    """``lots`` of order ``slot`` traded (legacy lots, slot -1, have no order to change)."""
    if slot >= 0:
        queue[0][slot] -= lots


@inline
def _leave(queue, b, side, price, slot):  # type: ignore[no-untyped-def]
    """The emptied order ``slot`` out of its level's queue."""
    _, head, tail, nxt, prv = queue
    _unlink(slot, side, price, head, tail, nxt, prv)


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
