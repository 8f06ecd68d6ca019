"""An order-event array (``events.EVENT_DTYPE``, from any reader) as the replay kernels read
it: kinds 1 to 7 only, each order by a dense slot, prices on the tick grid.

Events are turned into replay messages one to one, except two kinds the kernels do not know:

- ``MODIFY``: a lower size at the same price is a ``CANCEL`` of the difference (the order keeps
  its place); a new price or a larger size is a ``DELETE`` and an ``ADD`` at the back of the
  new level, under a new slot; a new size of 0 is a ``DELETE``; a modify that changes nothing
  is no message; a modify of an order not resting is an ``ADD`` (as Databento's own book
  example treats one).
- ``CLEAR``: a ``DELETE`` of every order resting from earlier events (volume known only from
  level rows, legacy volume, is left to the rows).

An ``ADD`` takes a new slot; the events that name its order id take that slot while it
rests. Events naming an order that does not rest (one from before the data, legacy volume)
share one slot that never rests, which sends the kernels to the legacy volume at their price.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numba
import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob import events as _events
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.events import ADD, CANCEL, CLEAR, DELETE, EXECUTE, HALT, MODIFY

_jit = numba.njit(cache=True)  # type: ignore[call-overload]


class ReplayStream(NamedTuple):
    """One day's events as replay messages (``replay_stream``)."""

    time: NDArray[np.float64]  # seconds after midnight (UTC) of the first event's day
    kinds: NDArray[np.int64]  # 1 to 7, as events' (LOBSTER's) kinds
    slots: NDArray[np.int64]  # the order's slot; ``n_slots - 1``: no resting order
    sizes: NDArray[np.int64]
    prices: NDArray[np.int64]  # in events' price units; a halt's: its state
    sides: NDArray[np.int64]  # BUY or SELL (a halt: BUY)
    source: NDArray[np.int64]  # the index of the event each message comes from
    closes: NDArray[np.bool_]  # whether a message is its event's last
    n_slots: int
    n_events: int

    def __len__(self) -> int:
        return len(self.kinds)


def replay_stream(events: NDArray[Any], source: object = "events") -> ReplayStream:
    """``events`` (checked with ``events.check_events``) as replay messages. An ``ADD`` of an
    order id that still rests is a ValueError naming the event."""
    _events.check_events(events, source)
    arrays = _columns(events)
    n, n_slots, twice = _normalise(*arrays, np.empty((6, 0), np.int64), False)
    if twice >= 0:
        raise ValueError(
            f"{source}: event {twice}: order id {int(events['order_id'][twice])} is added "
            "while it rests"
        )
    out = np.empty((6, n), np.int64)
    _normalise(*arrays, out, False)
    kinds, slots, sizes, prices, sides, origin = out
    slots[slots < 0] = n_slots  # the slot that never rests
    times = np.ascontiguousarray(events["time"])
    if len(times):
        start = times[0] // _events.DAY * _events.DAY
        time = (times[origin] - start) / _events.NANOSECONDS
    else:
        time = np.zeros(0)
    closes = np.ones(n, np.bool_)
    closes[:-1] = origin[1:] != origin[:-1]
    return ReplayStream(
        time, kinds, slots, sizes, prices, sides, origin, closes, n_slots + 1, len(events)
    )


def first_stranger(events: NDArray[Any]) -> int:
    """The index of the first event that cancels, deletes, executes or modifies an order not
    resting (never added, or gone), or adds one that rests; -1 if there is none. For a day
    that starts from a full snapshot, where every order is known, such an event is an error."""
    return int(_normalise(*_columns(events), np.empty((6, 0), np.int64), True)[2])


_Columns = tuple[
    NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[Any], NDArray[Any], int
]


def _columns(events: NDArray[Any]) -> _Columns:
    """``_normalise``'s inputs: the events' fields as contiguous int64 arrays (each order id
    as a dense venue index) and the number of distinct ids."""
    kind = np.ascontiguousarray(events["kind"]).astype(np.int64)
    ids, venue = np.unique(events["order_id"], return_inverse=True)
    side = np.ascontiguousarray(events["side"]).astype(np.int64)
    price, size = np.ascontiguousarray(events["price"]), np.ascontiguousarray(events["size"])
    return kind, venue.astype(np.int64).reshape(-1), side, price, size, len(ids)


@_jit
def _normalise(kind, venue, side, price, size, n_ids, out, strict):  # type: ignore[no-untyped-def]
    """Write the messages into ``out`` (rows: kind, slot (-1: none), size, price, side, source
    event; with ``out`` of 0 columns, count only). Return their count, the slots used, and
    the first event adding an id that rests (-1: none); if ``strict``, also the first event
    naming an order that does not rest."""
    write = out.shape[1] > 0
    slot_of = np.full(n_ids, -1, np.int64)  # the resting slot of each venue id
    left = np.zeros(n_ids, np.int64)  # lots resting, as far as the events tell
    at = np.zeros(n_ids, np.int64)  # the price it rests at
    on = np.zeros(n_ids, np.int64)  # its side
    live = np.empty(n_ids, np.int64)  # the resting venue ids, live[:resting], for a clear
    spot = np.empty(n_ids, np.int64)  # each resting id's place in ``live``
    resting = n = n_slots = 0
    for e in range(len(kind)):
        k, v = kind[e], venue[e]
        if k == CLEAR:
            gone = live[:resting][np.argsort(slot_of[live[:resting]])]  # in arrival order
            for u in gone:
                if write:
                    _put(out, n, DELETE, slot_of[u], left[u], at[u], on[u], e)
                n += 1
                slot_of[u], left[u] = -1, 0
            resting = 0
            continue
        if strict and slot_of[v] < 0 and (k == MODIFY or CANCEL <= k <= EXECUTE):
            return n, n_slots, e
        if k == MODIFY:
            here = slot_of[v] >= 0 and price[e] == at[v]
            if here and size[e] == left[v]:
                continue  # changes nothing
            if here and 0 < size[e] < left[v]:
                if write:
                    _put(out, n, CANCEL, slot_of[v], left[v] - size[e], at[v], on[v], e)
                n += 1
                left[v] = size[e]
                continue
            if slot_of[v] >= 0:
                if write:
                    _put(out, n, DELETE, slot_of[v], left[v], at[v], on[v], e)
                n += 1
                slot_of[v], left[v] = -1, 0
                resting = _leave(live, spot, resting, v)
            if size[e] == 0:
                continue
            k = ADD
        if k == ADD:
            if slot_of[v] >= 0:
                return n, n_slots, e
            slot_of[v], left[v], at[v], on[v] = n_slots, size[e], price[e], side[e]
            if write:
                _put(out, n, ADD, n_slots, size[e], price[e], side[e], e)
            n += 1
            n_slots += 1
            live[resting], spot[v] = v, resting
            resting += 1
            continue
        slot = slot_of[v] if k <= EXECUTE else -1
        if write:
            _put(out, n, k, slot, size[e], price[e], max(side[e], 0), e)
        n += 1
        if slot >= 0:
            left[v] = 0 if k == DELETE else max(left[v] - size[e], 0)
            if left[v] == 0:
                slot_of[v] = -1
                resting = _leave(live, spot, resting, v)
    return n, n_slots, -1


@numba.njit(cache=True, inline="always")  # type: ignore[misc]
def _leave(live, spot, resting, v):  # type: ignore[no-untyped-def]
    """Take venue id ``v`` off the resting list (its last entry fills the gap); the new count."""
    last = live[resting - 1]
    live[spot[v]], spot[last] = last, spot[v]
    return resting - 1


@numba.njit(cache=True, inline="always")  # type: ignore[misc]
def _put(out, n, kind, slot, size, price, side, source):  # type: ignore[no-untyped-def]
    out[0, n], out[1, n], out[2, n] = kind, slot, size
    out[3, n], out[4, n], out[5, n] = price, side, source


def stream_ticks(
    stream: ReplayStream, tick: int, price_offset: int, n_ticks: int
) -> NDArray[np.int64]:
    """The messages' ticks, ``(price - price_offset) // tick`` (a halt keeps its state); a
    ValueError names the first event whose price is off the grid or outside ``[0, n_ticks)``."""
    check_tick(tick)
    kinds, prices = stream.kinds, stream.prices
    offsets = prices - price_offset
    ticks = offsets // tick
    halts = kinds == HALT
    problem = _events.first_problem(
        ((kinds <= EXECUTE) & (ticks * tick != offsets), "off"),
        (~halts & (ticks.view(np.uint64) >= n_ticks), "outside"),  # a negative tick: large
    )
    if problem is not None:
        m, what = problem
        at = f"event {int(stream.source[m])}: price {int(prices[m])}"
        if what == "off":
            raise ValueError(f"{at} is not on the {tick}-unit grid")
        raise ValueError(f"{at} is tick {int(ticks[m])}, outside the book's [0, {n_ticks})")
    ticks[halts] = prices[halts]
    return ticks


def check_tick(tick: object) -> None:
    """A ValueError unless ``tick`` (price units a tick) is a positive int."""
    if isinstance(tick, bool) or not isinstance(tick, int | np.integer) or tick <= 0:
        raise ValueError(f"tick must be a positive int, got {tick!r}")


def check_rows(rows: NDArray[Any], n: int, tick: int, price_offset: int, n_ticks: int) -> None:
    """Refuse level rows (``lobster.read_orderbook``'s) that are not ``n`` rows, one per
    event, or name a price off the tick grid or outside the book."""
    if rows.dtype.names != ("ask_price", "ask_size", "bid_price", "bid_size"):
        raise TypeError("orderbook must be level rows as lobster.read_orderbook returns them")
    if len(rows) != n:
        raise ValueError(f"orderbook has {len(rows)} rows for {n} messages: one per message")
    for name in ("ask", "bid"):
        full = rows[name + "_size"] > 0
        row_offsets = rows[name + "_price"] - price_offset
        row_ticks = row_offsets // tick
        bad = full & ((row_ticks * tick != row_offsets) | (row_ticks < 0) | (row_ticks >= n_ticks))
        if bad.any():
            row, level = (int(i[0]) for i in np.nonzero(bad))
            raise ValueError(
                f"orderbook row {row + 1}: {name} price {rows[name + '_price'][row, level]} "
                f"is not a tick of the book's {tick}-unit grid [0, {n_ticks})"
            )


def opening_lots(
    stream: ReplayStream, rows: NDArray[Any], tick: int, price_offset: int, n_ticks: int
) -> NDArray[np.int64]:
    """The lots per (side, tick) before the first event: the first level row (the book after
    that event) less what the event's messages did. A ValueError when the row shows less
    than the event added."""
    check_rows(rows[:1], 1, tick, price_offset, n_ticks)
    opening = np.zeros((2, n_ticks), np.int64)
    for side, name in ((BUY, "bid"), (SELL, "ask")):
        full = rows[name + "_size"][0] > 0
        ticks = (rows[name + "_price"][0][full] - price_offset) // tick
        opening[side, ticks] = rows[name + "_size"][0][full]
    for m in range(len(stream)):
        if stream.source[m] != 0:
            break
        kind, side, size = int(stream.kinds[m]), int(stream.sides[m]), int(stream.sizes[m])
        if kind > EXECUTE:
            continue
        at = (int(stream.prices[m]) - price_offset) // tick
        left = opening[side, at] + (-size if kind == ADD else size)
        if left < 0:
            raise ValueError(f"event 0 adds {size} at tick {at}; the first row shows less there")
        opening[side, at] = left
    return opening


def rows_by_time(
    event_times: NDArray[np.int64],
    row_times: NDArray[np.int64],
    rows: NDArray[Any],
    source: NDArray[np.int64] | None = None,
) -> tuple[NDArray[Any], NDArray[np.bool_]]:
    """Level rows stamped with their own times (Databento's MBP-1 and MBP-10, one per update)
    as one row per event, and which events to check against theirs: the last event of each
    timestamp (the rows show the book between a venue's packets, not inside one), once a row
    has come. Each event gets the last row stamped at or before its time. Given the stream's
    ``source`` (the event of each replay message), the last event of a timestamp that makes
    a message: the replay checks the book after a message, and an event that makes none (a
    modify that changes nothing) would take its timestamp's check with it."""
    if len(row_times) and (np.diff(row_times) < 0).any():
        raise ValueError("the level rows' times go backwards")
    last = np.searchsorted(row_times, event_times, side="right") - 1
    checked = last >= 0
    moving = np.arange(len(event_times)) if source is None else np.unique(source)
    times = event_times[moving]
    ends = np.ones(len(moving), np.bool_)
    ends[:-1] = times[1:] != times[:-1]
    ending = np.zeros(len(event_times), np.bool_)
    ending[moving[ends]] = True
    checked &= ending
    return rows[np.maximum(last, 0)], checked
