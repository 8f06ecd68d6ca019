"""Generated LOBSTER days for the replay tests: a full L3 day, and what LOBSTER ships of it.

``generate_day`` plays a day on a full-depth ``OrderBook`` (the truth): an opening book 40
levels deep, submissions at distances that reach far beyond the top levels, deletes and
partial cancels of any resting order (opening orders included), market orders that execute
the queues in FIFO order (one type 4 message per order they hit), hidden executions between
the ticks, a cross trade, and a halt (-1), quoting (0) and resume (1) with no trades between.
``ship(day, levels)`` keeps what a level-N LOBSTER file holds: the messages that changed the
top N levels when they happened (and every type 5, 6 and 7), with the orderbook row after each.
It also tells, for every price, from which message on an event the file never showed (or an
opening order deeper than N levels) lay there: the "old deep levels" that may come into view.
Imported by the tests and by ``benchmarks/lobster_fidelity.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.finance import BUY, SELL, OrderBook
from sekai.finance.lob.lobster import (
    CROSS,
    DELETE,
    EMPTY_PRICE,
    EXECUTE,
    EXECUTE_HIDDEN,
    HALT,
    MESSAGE_DTYPE,
    PARTIAL_CANCEL,
    SUBMIT,
    orderbook_dtype,
)

N_TICKS = 20_000
TICK = 100  # one cent in LOBSTER's price unit (dollars x 10,000)
OPEN_BID = 10_000  # the opening best bid: $100.00
SIZES = np.array([1, 10, 50, 100, 100, 100, 200, 200, 300, 500, 1000])
Depth = tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]


@dataclass
class Day:
    """A full day: the opening book and every message after it, with the truth's depth
    (top ``max_levels`` of each side) after each message."""

    opening: list[tuple[int, int, int, int]]  # (id, side, tick, size) resting at the start
    messages: NDArray[Any]  # MESSAGE_DTYPE, prices in LOBSTER units
    depth_before: Depth  # the opening book's top levels
    depths: list[Depth]  # after each message
    max_levels: int


@dataclass
class Shipped:
    """What a level-N LOBSTER file holds of a day."""

    messages: NDArray[Any]
    orderbook: NDArray[Any]  # orderbook_dtype(levels)
    index: NDArray[np.int64]  # each shipped message's index in the full day
    unseen_since: dict[int, int]  # tick -> first full-day index of an event the file lacks


def generate_day(seed: int, events: int = 6_000, max_levels: int = 12) -> Day:
    """A full day of about ``events`` events (see the module docstring)."""
    rng = np.random.default_rng(seed)
    book = OrderBook(N_TICKS)
    opening = []
    for side in (BUY, SELL):
        for distance in range(40):
            if distance and rng.random() < 0.2:
                continue  # an empty tick inside the book
            tick = OPEN_BID - distance if side == BUY else OPEN_BID + 1 + distance
            for _ in range(int(rng.integers(1, 4))):
                size = int(rng.choice(SIZES))
                opening.append((book.add(side, tick, size), side, tick, size))
    rows: list[tuple[float, int, int, int, int, int]] = []
    depths: list[Depth] = []
    depth_before = _depth(book, max_levels)
    time = 34_200.0

    def emit(kind: int, order_id: int, size: int, price: int, side: int) -> None:
        rows.append((round(time, 9), kind, order_id, size, price, 1 if side == BUY else -1))
        depths.append(_depth(book, max_levels))

    halt_at, cross_at = int(events * 0.6), int(events * 0.3)
    for event in range(events):
        time += float(rng.exponential(0.2))
        halted = halt_at <= event < halt_at + 150
        if event == cross_at:
            price = (book.best_bid or OPEN_BID) * TICK
            emit(CROSS, 0, 5_000, price, SELL)
            continue
        if event in (halt_at, halt_at + 100, halt_at + 150):
            emit(HALT, 0, 0, {halt_at: -1, halt_at + 100: 0}.get(event, 1), SELL)
            continue
        draw = rng.random()
        if draw < 0.12 and not halted:  # a market order: FIFO executions, best price first
            side = int(rng.integers(2))
            size = int(rng.choice(SIZES))
            maker_side = SELL if side == BUY else BUY
            while size and book.depth(maker_side, 1):
                best = book.depth(maker_side, 1)[0][0]
                for order in book.queue(maker_side, best):
                    fill = min(size, order.size)
                    book.execute(order.order_id, fill)
                    emit(EXECUTE, order.order_id, fill, best * TICK, maker_side)
                    size -= fill
                    if not size:
                        break
        elif draw < 0.15 and not halted:  # a hidden order executes between the quotes
            bid, ask = book.best_bid, book.best_ask
            if bid is not None and ask is not None:
                price = (bid + ask) * TICK // 2  # half a cent when the spread is odd
                emit(EXECUTE_HIDDEN, 0, int(rng.choice(SIZES)), price, int(rng.integers(2)))
        elif draw < 0.60:  # a submission, most near the quotes, some far behind
            side = int(rng.integers(2))
            bid, ask = book.best_bid, book.best_ask
            distance = int(rng.geometric(0.2))
            if side == BUY:
                tick = (ask if ask is not None else OPEN_BID + 1) - distance
            else:
                tick = (bid if bid is not None else OPEN_BID) + distance
            size = int(rng.choice(SIZES))
            order_id = book.add(side, tick, size)
            emit(SUBMIT, order_id, size, tick * TICK, side)
        else:  # a delete or a partial cancel of any resting order
            side = int(rng.integers(2))
            levels = book.depth(side, 60)
            if not levels:
                continue
            tick = levels[min(int(rng.geometric(0.3)) - 1, len(levels) - 1)][0]
            queue = book.queue(side, tick)
            order = queue[int(rng.integers(len(queue)))]
            if order.size > 1 and rng.random() < 0.2:
                cut = int(rng.integers(1, order.size))
                book.cancel(order.order_id, cut)
                emit(PARTIAL_CANCEL, order.order_id, cut, tick * TICK, side)
            else:
                book.cancel(order.order_id)
                emit(DELETE, order.order_id, order.size, tick * TICK, side)
    return Day(opening, np.array(rows, MESSAGE_DTYPE), depth_before, depths, max_levels)


def _depth(book: OrderBook, levels: int) -> Depth:
    return tuple(book.depth(BUY, levels)), tuple(book.depth(SELL, levels))


def _top(depth: Depth, levels: int) -> Depth:
    return depth[0][:levels], depth[1][:levels]


def ship(day: Day, levels: int) -> Shipped:
    """The level-``levels`` file of ``day`` (see the module docstring)."""
    assert levels < day.max_levels
    kept: list[int] = []
    unseen_since: dict[int, int] = {}
    before = _top(day.depth_before, levels)
    # what row 1 less message 1 shows: opening orders elsewhere lie outside the file's view
    first = next(k for k, depth in enumerate(day.depths) if _top(depth, levels) != before)
    in_view = {p for side in _top(day.depths[first], levels) for p, _ in side}
    in_view.add(int(day.messages[first]["price"]) // TICK)
    for _, _, tick, _ in day.opening:
        if tick not in in_view:
            unseen_since.setdefault(tick, -1)
    for k, (message, depth) in enumerate(zip(day.messages, day.depths, strict=True)):
        after = _top(depth, levels)
        if after != before or message["type"] in (EXECUTE_HIDDEN, CROSS, HALT):
            kept.append(k)
        elif message["type"] <= EXECUTE:
            unseen_since.setdefault(int(message["price"]) // TICK, k)
        before = after
    index = np.array(kept, np.int64)
    orderbook = np.zeros(len(index), orderbook_dtype(levels))
    for row, k in enumerate(kept):
        bids, asks = _top(day.depths[k], levels)
        for name, side, empty in (("bid", bids, -EMPTY_PRICE), ("ask", asks, EMPTY_PRICE)):
            orderbook[f"{name}_price"][row] = empty
            for level, (tick, size) in enumerate(side):
                orderbook[f"{name}_price"][row, level] = tick * TICK
                orderbook[f"{name}_size"][row, level] = size
    return Shipped(day.messages[index], orderbook, index, unseen_since)


def write_day(
    folder: Path,
    shipped: Shipped,
    *,
    header: bool = False,
    decimals: int = 9,
    suffix: str = "",
) -> tuple[Path, Path]:
    """Write the message and orderbook files as LOBSTER does (empty levels as
    +-9999999999 and size 0), optionally with a header row and ``decimals`` of time."""
    levels = shipped.orderbook.dtype["bid_price"].shape[0]
    lines = ["Time,Type,OrderID,Size,Price,Direction"] if header else []
    lines += [
        f"{m['time']:.{decimals}f},{m['type']},{m['order_id']},{m['size']},{m['price']},"
        f"{m['direction']}"
        for m in shipped.messages
    ]
    messages = folder / f"messages_{levels}.csv{suffix}"
    _write(messages, "\n".join(lines) + "\n")
    names = [f"{n}{k}" for k in range(1, levels + 1) for n in ("AskP", "AskS", "BidP", "BidS")]
    lines = [",".join(names)] if header else []
    columns = ("ask_price", "ask_size", "bid_price", "bid_size")
    for row in shipped.orderbook:
        fields = [int(row[name][k]) for k in range(levels) for name in columns]
        lines.append(",".join(str(x) for x in fields))
    orderbook = folder / f"orderbook_{levels}.csv{suffix}"
    _write(orderbook, "\n".join(lines) + "\n")
    return messages, orderbook


def _write(path: Path, text: str) -> None:
    if path.suffix == ".gz":
        import gzip

        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
