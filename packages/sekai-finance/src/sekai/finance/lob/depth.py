"""Depth-only data: the book as its levels' sizes, without order ids, and the trades; what
``DepthReplay-v0`` replays (its queue positions estimated by ``queue_models``).

Two arrays make a day, each in time order:

- level updates, ``DEPTH_DTYPE``: ``time`` (nanoseconds since the epoch), ``side`` (``BUY``
  for a bid level, ``SELL`` for an ask), ``price`` (1e-4 units, as ``events``) and ``size``,
  the level's new size in lots (0 deletes the level);
- trades, ``TRADE_DTYPE``: ``time``, ``side`` (the taker's: ``BUY`` took the asks),
  ``price`` and ``size``.

Readers: a crypto-style L2 incremental CSV and a trades CSV (``read_l2_csv``,
``read_trades_csv``), level rows of LOBSTER's orderbook files or of Databento MBP-10
(``levels_to_depth``; ``lobster_depth`` with the message file's executions as the trades,
``databento.read_dbn_trades`` for an MBP file's trades). A level that falls off the rows' shown
depth keeps its last size (the rows do not say it went).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob._paths import local_file
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.events import PRICE_UNITS

__all__ = [
    "DEPTH_DTYPE",
    "TRADE_DTYPE",
    "levels_to_depth",
    "lobster_depth",
    "read_l2_csv",
    "read_trades_csv",
]

DEPTH_DTYPE = np.dtype(
    [("time", np.int64), ("side", np.int8), ("price", np.int64), ("size", np.int64)]
)
TRADE_DTYPE = DEPTH_DTYPE  # side: the taker's
_COLUMNS = "time,side,price,size"


def read_l2_csv(path: str | os.PathLike[str]) -> NDArray[Any]:
    """An L2 incremental CSV (header ``time,side,price,size``; side ``bid`` or ``ask``; price
    in currency units, on a 1e-4 grid; size in lots, 0 deleting the level) as level updates
    (``DEPTH_DTYPE``). A bad line, or updates that leave the book crossed or locked at the
    end of a timestamp, are a ValueError naming the file and the line."""
    local = local_file(path)
    rows = _read_csv(local, {"bid": BUY, "ask": SELL}, zero_size=True)
    if len(rows):
        from sekai.finance.lob._depth_day import first_crossed

        ranks, index = np.unique(rows["price"], return_inverse=True)
        sides = rows["side"].astype(np.int64)
        k = first_crossed(rows["time"], sides, index.astype(np.int64), rows["size"], len(ranks))
        if k >= 0:
            raise ValueError(
                f"{local} line {k + 2}: the book is crossed at the end of timestamp "
                f"{int(rows['time'][k])} (a bid at or above the best ask)"
            )
    return rows


def read_trades_csv(path: str | os.PathLike[str]) -> NDArray[Any]:
    """A trades CSV (header ``time,side,price,size``; side the taker's, ``buy`` or ``sell``;
    size > 0 lots) as trades (``TRADE_DTYPE``); a bad line is a ValueError naming it."""
    return _read_csv(local_file(path), {"buy": BUY, "sell": SELL}, zero_size=False)


def _read_csv(path: Any, sides: dict[str, int], *, zero_size: bool) -> NDArray[Any]:
    from sekai.finance.lob.lobster import _text

    lines = _text(path).splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines or lines[0].replace(" ", "") != _COLUMNS:
        raise ValueError(f"{path} line 1: the header must be {_COLUMNS!r}")
    rows = np.empty(len(lines) - 1, DEPTH_DTYPE)
    for number, line in enumerate(lines[1:], 2):
        fields = line.split(",")
        if len(fields) != 4:
            raise ValueError(f"{path} line {number}: {len(fields)} columns, expected 4")
        time, side, price, size = (f.strip() for f in fields)
        if side not in sides:
            raise ValueError(
                f"{path} line {number}: side must be {' or '.join(sides)}, got {side!r}"
            )
        try:
            t, p, s = int(time), float(price) * PRICE_UNITS, int(size)
        except ValueError:
            raise ValueError(f"{path} line {number}: not numbers: {line!r}") from None
        if not (abs(p - round(p)) < 1e-6 and p > 0):
            raise ValueError(f"{path} line {number}: price {price} is not > 0 on a 1e-4 grid")
        if s < (0 if zero_size else 1):
            raise ValueError(f"{path} line {number}: size {size} must be >= {int(not zero_size)}")
        if number > 2 and t < rows["time"][number - 3]:
            raise ValueError(f"{path} line {number}: time goes backwards")
        rows[number - 2] = (t, sides[side], round(p), s)
    return rows


def levels_to_depth(time: NDArray[np.int64], rows: NDArray[Any]) -> NDArray[Any]:
    """Level rows (``lobster.orderbook_dtype``: ``bid_price``/``bid_size``/``ask_price``/
    ``ask_size`` per level, best first, an empty level of size 0), the book after each
    ``time``, as the level updates between them: a level whose size changed, and a level gone
    from inside the shown depth (between the best and the last shown level, or anywhere on a
    side that shows fewer levels than the rows hold). A level past the shown depth keeps its
    last size."""
    from sekai.finance.lob._depth_day import level_changes

    n, depth = len(rows), rows.dtype["bid_size"].shape[0]
    prices, sizes = np.empty((n, 2, depth), np.int64), np.empty((n, 2, depth), np.int64)
    for side, name in ((BUY, "bid"), (SELL, "ask")):
        prices[:, side], sizes[:, side] = rows[f"{name}_price"], rows[f"{name}_size"]
    out = np.empty((4 * depth * n, 4), np.int64)
    count = level_changes(np.asarray(time, np.int64), prices, sizes, out)
    updates = np.empty(count, DEPTH_DTYPE)
    for column, name in enumerate(("time", "side", "price", "size")):
        updates[name] = out[:count, column]
    return updates


def lobster_depth(messages: Any, orderbook: Any) -> tuple[NDArray[Any], NDArray[Any]]:
    """A LOBSTER day as depth-only data: its orderbook rows (one per message; a path or
    ``lobster.read_orderbook``'s rows) as level updates, and the executions of its messages
    (a path or ``lobster.MESSAGE_DTYPE``; visible and hidden) as trades, the taker on the
    other side of the executed order. Times count from midnight of the file name's date, as
    ``lobster.to_events`` counts (from 1970-01-01 without one)."""
    from sekai.finance.lob import lobster

    date = None
    if isinstance(messages, str | os.PathLike):
        date = lobster.date_of(messages)
        messages = lobster.read_messages(messages)
    if isinstance(orderbook, str | os.PathLike):
        orderbook = lobster.read_orderbook(orderbook)
    if len(orderbook) != len(messages):
        raise ValueError(
            f"orderbook has {len(orderbook)} rows for {len(messages)} messages: one per message"
        )
    events = lobster.to_events(messages, date=date)
    executions = np.isin(messages["type"], (lobster.EXECUTE, lobster.EXECUTE_HIDDEN))
    trades = np.empty(int(executions.sum()), TRADE_DTYPE)
    trades["time"] = events["time"][executions]
    trades["side"] = 1 - events["side"][executions]
    trades["price"] = events["price"][executions]
    trades["size"] = events["size"][executions]
    return levels_to_depth(events["time"], orderbook), trades
