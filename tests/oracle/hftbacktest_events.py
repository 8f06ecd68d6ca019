"""Order events (``sekai.finance.lob.events.EVENT_DTYPE``) as hftbacktest's L3 (market-by-order)
feed: the array of ``hftbacktest.event_dtype`` its ``BacktestAsset.data`` takes, every row an
exchange and a local event, the local time ``feed_latency`` nanoseconds after the exchange's.

hftbacktest's L3 feed has no event that takes lots off an order and leaves the rest in its place
other than a modify to the smaller size (its cancel deletes the whole order; its fill only
matches the backtest's orders, without touching the book), so:

- ``ADD`` is an add, ``DELETE`` a cancel (a delete, in hftbacktest's words);
- a partial ``CANCEL`` is a modify to the lots left (same price, smaller size: the order keeps
  its place in the queue, in both), a ``CANCEL`` of the rest a cancel;
- ``EXECUTE`` is a fill of that order, then a modify to the lots left, or a cancel when none is;
- ``TRADE`` (an execution against hidden volume: no order id) is a trade, flagged with the
  taker's side (the other side of the resting order); hftbacktest's L3 exchange does not match
  backtest orders against trades;
- ``HALT`` has no counterpart (hftbacktest has no trading states) and is left out.

Other kinds (``MODIFY``, ``CROSS``, ``CLEAR``) are not needed by the days compared here and are
a ValueError naming the event.
"""

from __future__ import annotations

from typing import Any

import hftbacktest as hbt
import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob.events import (
    ADD,
    BUY,
    CANCEL,
    DELETE,
    EXECUTE,
    HALT,
    KINDS,
    PRICE_UNITS,
    TRADE,
    check_events,
)

_FLAGS = hbt.EXCH_EVENT | hbt.LOCAL_EVENT


def to_hftbacktest(
    events: NDArray[Any], feed_latency: int, *, sweeps_first: bool = False
) -> NDArray[Any]:
    """``events`` (one day, in time order) as hftbacktest L3 feed rows (see the module).
    ``sweeps_first``: in a run of executions at one time (a market order sweeping the
    queues), every fill comes before the modifies and cancels that take the lots off the
    book, so the book hftbacktest compares a fill's price with is the one the sweep met."""
    check_events(events)
    if feed_latency < 0:
        raise ValueError(f"feed_latency must be >= 0 nanoseconds, got {feed_latency}")
    left: dict[int, int] = {}  # lots resting, by order id
    rows: list[tuple[Any, ...]] = []
    held: list[tuple[Any, ...]] = []  # a sweep's removals, with sweeps_first
    listed = events.tolist()
    for i, (time, kind, order_id, side, price, size, _) in enumerate(listed):
        if held and not (kind == EXECUTE and time == listed[i - 1][0]):
            rows += held
            held.clear()
        if kind == HALT:
            continue
        flag = hbt.BUY_EVENT if side == BUY else hbt.SELL_EVENT
        # the row's event, lots, order id; the time, price and latency are the event's
        row = (_FLAGS, time, time + feed_latency, price / PRICE_UNITS)
        if kind == TRADE:
            taker = hbt.SELL_EVENT if side == BUY else hbt.BUY_EVENT
            rows.append(_row(row, hbt.TRADE_EVENT | taker, size, 0))
            continue
        if kind == ADD:
            left[order_id] = size
            rows.append(_row(row, hbt.ADD_ORDER_EVENT | flag, size, order_id))
            continue
        if kind not in (CANCEL, DELETE, EXECUTE):
            raise ValueError(f"event {i}: hftbacktest's L3 feed here takes no {KINDS[kind]!r}")
        if order_id not in left:
            raise ValueError(f"event {i}: {KINDS[kind]} of an unknown order {order_id}")
        if kind == EXECUTE:
            rows.append(_row(row, hbt.FILL_EVENT | flag, size, order_id))
        rest = 0 if kind == DELETE else left[order_id] - size
        if rest < 0:
            raise ValueError(
                f"event {i}: takes {size} lots off order {order_id} of {left[order_id]}"
            )
        out = held if sweeps_first and kind == EXECUTE else rows
        if rest == 0:
            del left[order_id]
            out.append(_row(row, hbt.CANCEL_ORDER_EVENT | flag, 0, order_id))
        else:
            left[order_id] = rest
            out.append(_row(row, hbt.MODIFY_ORDER_EVENT | flag, rest, order_id))
    rows += held
    return np.array(rows, hbt.event_dtype)


def _row(common: tuple[Any, ...], ev: int, lots: int, order_id: int) -> tuple[Any, ...]:
    flags, exch_ts, local_ts, px = common
    return (flags | ev, exch_ts, local_ts, px, float(lots), order_id, 0, 0.0)
