"""LOBSTER message files: read, write, replay into an ``OrderBook``, and record a flow.

A LOBSTER message file is a header-less CSV, one message a line: time (seconds after
midnight), type, order id, size, price (dollars x 10,000), direction (1 buy order, -1 sell
order). Types: 1 new limit order, 2 partial cancel, 3 full delete, 4 execution of a visible
order, 5 execution of a hidden order, 6 cross trade, 7 trading halt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.finance.order_book import BUY, PUBLIC, SELL, OrderBook
from sekai.finance.order_flow import CANCEL, LIMIT, FlowEvents, seed_book

MESSAGE_DTYPE = np.dtype(
    [
        ("time", np.float64),
        ("type", np.int64),
        ("order_id", np.int64),
        ("size", np.int64),
        ("price", np.int64),
        ("direction", np.int64),
    ]
)
SUBMIT, PARTIAL_CANCEL, DELETE, EXECUTE, EXECUTE_HIDDEN, CROSS, HALT = range(1, 8)
_CHUNK = 1024  # messages turned into Python objects at a time by replay


def read_messages(path: str | Path) -> NDArray[Any]:
    """A LOBSTER message file as a structured array with the fields of MESSAGE_DTYPE."""
    raw = np.loadtxt(path, delimiter=",", ndmin=2, dtype=np.float64)
    if raw.size and raw.shape[1] < 6:
        raise ValueError(f"{path}: a LOBSTER message has 6 columns, got {raw.shape[1]}")
    messages = np.empty(len(raw), MESSAGE_DTYPE)
    for column, name in enumerate(MESSAGE_DTYPE.names or ()):
        messages[name] = raw[:, column] if raw.size else []
    return messages


def write_messages(path: str | Path, messages: NDArray[Any]) -> None:
    """Write a structured array of messages as a LOBSTER message file."""
    with open(path, "w") as file:
        for m in messages:
            file.write(
                f"{m['time']:.9f},{m['type']},{m['order_id']},{m['size']},{m['price']},"
                f"{m['direction']}\n"
            )


def replay(
    book: OrderBook, messages: NDArray[Any], *, tick: int = 100, price_offset: int = 0
) -> int:
    """Drive ``book`` with ``messages``; return how many changed it.

    Prices map to ticks as ``(price - price_offset) // tick`` (``tick=100`` is one cent).
    Submissions rest under their LOBSTER id (owner PUBLIC); cancels and deletes act on that id;
    an execution of a visible order is replayed as a market order of its size against the
    executed order's side, so orders that traders placed ahead of it in the queue trade first.
    Messages about orders the book does not hold (placed before the file starts, or already
    filled by traders) are skipped, as are hidden executions, cross trades and halts. An
    unknown type, or a submission off the tick grid or outside the book, is refused before
    any message is applied.
    """
    if tick <= 0:
        raise ValueError(f"tick must be a positive int, got {tick!r}")
    kinds = messages["type"]
    unknown = (kinds < SUBMIT) | (kinds > HALT)
    if unknown.any():
        kind = kinds[unknown][0]
        raise ValueError(f"unknown LOBSTER message type {kind} (allowed: 1 to 7)")
    offsets = messages["price"] - price_offset
    off_grid = (kinds == SUBMIT) & (offsets % tick != 0)
    if off_grid.any():
        price = messages["price"][off_grid][0]
        raise ValueError(f"price {price} is not on the {tick}-unit tick grid")
    ticks = offsets // tick
    outside = (kinds == SUBMIT) & ((ticks < 0) | (ticks >= book.n_ticks))
    if outside.any():
        price, at = messages["price"][outside][0], ticks[outside][0]
        raise ValueError(f"price {price} is tick {at}, outside the book's [0, {book.n_ticks})")
    acting = kinds <= EXECUTE  # the rest change nothing
    kinds = kinds[acting]
    # a submission rests on its direction's side; an execution is a market order against it
    sides = np.where((messages["direction"][acting] == 1) == (kinds == EXECUTE), SELL, BUY)
    columns = (
        kinds,
        messages["order_id"][acting],
        messages["size"][acting],
        ticks[acting],
        sides,
    )
    add, cancel, market = book.add, book.cancel, book.market
    skipped = 0
    # Python lists a chunk at a time: lists of the whole stream would be garbage-collector
    # work (every young collection walks them) for no gain
    for start in range(0, len(kinds), _CHUNK):
        chunk = [column[start : start + _CHUNK].tolist() for column in columns]
        for kind, order_id, size, price, side in zip(*chunk, strict=True):
            if kind == SUBMIT:
                add(side, price, size, PUBLIC, order_id)
            elif kind == EXECUTE:
                market(side, size)
            else:
                try:
                    cancel(order_id, None if kind == DELETE else size)
                except KeyError:
                    skipped += 1  # not in the book
    return len(kinds) - skipped


def record_flow(
    flow: FlowEvents, *, n_ticks: int = 2000, tick: int = 100, price_offset: int = 0
) -> NDArray[Any]:
    """The LOBSTER messages of a given flow played alone on a book seeded with its initial
    depth (best bid at ``n_ticks // 2``): the seed orders first, at time 0, then the flow."""
    book = OrderBook(n_ticks)
    seed_book(book, flow.initial_depth, n_ticks // 2)
    rows = [
        (0.0, SUBMIT, o.order_id, o.size, o.price, 1 if o.side == BUY else -1)
        for side in (BUY, SELL)
        for price, _ in book.depth(side, n_ticks)
        for o in book.queue(side, price)
    ]
    rows.sort(key=lambda row: row[2])  # by id: the order they were placed in
    for time, kind, side, price, rank in zip(
        flow.time.tolist(),
        flow.kind.tolist(),
        flow.side.tolist(),
        flow.price.tolist(),
        flow.rank.tolist(),
        strict=True,
    ):
        direction = 1 if side == BUY else -1
        tape = len(book.trades)
        if kind == CANCEL:
            public = [o for o in book.queue(side, price) if o.owner == PUBLIC]
            if 0 <= price < n_ticks and rank < len(public):
                book.cancel(public[rank].order_id)
                rows.append((time, DELETE, public[rank].order_id, 1, price, direction))
            continue
        if kind == LIMIT:
            if not 0 <= price < n_ticks:
                continue
            order_id = book.add(side, price, 1)
            if order_id in book:
                rows.append((time, SUBMIT, order_id, 1, price, direction))
        else:
            book.market(side, 1)
        for trade in book.trades[tape:]:  # a market order, or a public order that crossed
            rows.append((time, EXECUTE, trade.maker_id, trade.size, trade.price, -direction))
    messages = np.array(rows, MESSAGE_DTYPE)
    messages["price"] = messages["price"] * tick + price_offset
    return messages
