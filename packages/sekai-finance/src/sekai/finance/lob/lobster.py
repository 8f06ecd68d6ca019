"""LOBSTER files: read, write, replay into an ``OrderBook``, and record a flow.

A LOBSTER message file is a CSV, one message a line: time (seconds after midnight, 5 to 9
decimals), type, order id, size, price (dollars x 10,000), direction (1 buy order, -1 sell
order). Types: 1 new limit order, 2 partial cancel, 3 full delete, 4 execution of a visible
order, 5 execution of a hidden order, 6 cross trade, 7 trading halt (price -1 halt, 0 quoting,
1 resume). Its orderbook file has one row per message, the top N levels after it: ask price,
ask size, bid price, bid size for level 1, then level 2, ...; an empty level is written as
price +-9999999999 and size 0. A level-N file holds only the messages that touched the top N
levels when they happened, so a replay starts from the opening book (row 1 less message 1) as
legacy volume, and can reconcile its top levels with the rows.
"""

from __future__ import annotations

import bz2
import datetime
import gzip
import lzma
import os
import re
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob import events as _events
from sekai.finance.lob._paths import local_file
from sekai.finance.lob._replay_stream import check_rows, check_tick, opening_lots, replay_stream
from sekai.finance.lob.book import BUY, LEGACY, PUBLIC, SELL, OrderBook
from sekai.finance.lob.flow import CANCEL, LIMIT, FlowEvents, seed_book

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
HALTED, QUOTING, RESUMED = -1, 0, 1  # the price of a halt message (type 7)
EMPTY_PRICE = 9_999_999_999  # an empty level's price in an orderbook file (asks +, bids -)
_CHUNK = 1024  # messages turned into Python objects at a time by replay
_EXACT = 2.0**53  # the file's numbers are parsed as float64: whole numbers below this are exact


class ReplayResult(NamedTuple):
    """What ``replay`` did with a stream of messages."""

    applied: int  # messages that changed the book (types 1 to 4)
    unmatched: int  # types 2 to 4 about more volume than the book held at their order or price
    hidden_trades: int  # type 5, on the tape only
    cross_trades: int  # type 6, on the tape only
    halts: int  # type 7 messages
    reconciliations: int  # messages after which the top levels were set to the orderbook row


# -- reading ---------------------------------------------------------------------------------
def read_messages(path: str | os.PathLike[str]) -> NDArray[Any]:
    """A LOBSTER message file as a structured array with the fields of MESSAGE_DTYPE.

    The file is a local path (``.gz``, ``.bz2``, ``.xz`` or a one-member ``.zip`` are
    decompressed by their suffix), with or without a header row. It is checked whole: a bad
    line is a ValueError naming the line (as an editor numbers it) and what is wrong.
    """
    path = local_file(path)
    raw, first_line = _read_rows(path, 6)
    _raise_at(path, first_line, _message_problem(*raw.T))
    messages = np.empty(len(raw), MESSAGE_DTYPE)
    for column, name in enumerate(MESSAGE_DTYPE.names or ()):
        messages[name] = raw[:, column]
    return messages


def read_orderbook(path: str | os.PathLike[str]) -> NDArray[Any]:
    """A LOBSTER orderbook file as a structured array, one record per row, with the fields
    ``ask_price``, ``ask_size``, ``bid_price`` and ``bid_size``, each an array of the N levels
    (best first): ``rows["bid_price"][:, 0]`` is the best bid after each message. An empty
    level has price 0 and size 0. Paths, compression and checks as ``read_messages``."""
    path = local_file(path)
    raw, first_line = _read_rows(path, None)
    if raw.shape[1] % 4:
        raise ValueError(
            f"{path}: an orderbook row has 4 columns per level, got {raw.shape[1]} columns"
        )
    _raise_at(path, first_line, _orderbook_problem(raw))
    levels = raw.shape[1] // 4
    rows = np.empty(len(raw), orderbook_dtype(levels))
    for offset, name in enumerate(("ask_price", "ask_size", "bid_price", "bid_size")):
        rows[name] = raw[:, offset::4]
    rows["ask_price"][rows["ask_size"] == 0] = 0
    rows["bid_price"][rows["bid_size"] == 0] = 0
    return rows


def orderbook_dtype(levels: int) -> np.dtype[Any]:
    """The dtype of ``read_orderbook``'s rows for files of ``levels`` levels."""
    return np.dtype(
        [(name, np.int64, (levels,)) for name in ("ask_price", "ask_size", "bid_price", "bid_size")]
    )


def _text(path: Path) -> str:
    """The file's text, decompressed by its suffix."""
    suffix = path.suffix.lower()
    if suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.infolist() if not m.is_dir()]
            if len(members) != 1:
                raise ValueError(f"{path}: a zip must hold one file, it holds {len(members)}")
            return archive.read(members[0]).decode()
    openers: dict[str, Callable[..., Any]] = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}
    opener = openers.get(suffix)
    if opener is None:
        return path.read_text()
    with opener(path, "rt") as file:
        text: str = file.read()
    return text


def _read_rows(path: Path, columns: int | None) -> tuple[NDArray[np.float64], int]:
    """The file's rows as floats, and the line number of the first (2 after a header row: a
    first line without a single number). Every line must have ``columns`` fields (or as many
    as the first, when None)."""
    lines = _text(path).splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    first_line = 1
    if lines and not any(_numbers(field) for field in lines[0].split(",")):
        lines, first_line = lines[1:], 2  # a header row: names only
    if not lines:
        return np.empty((0, columns or 4)), first_line
    expected = columns or lines[0].count(",") + 1
    for number, line in enumerate(lines, first_line):
        if line.count(",") + 1 != expected:
            raise ValueError(
                f"{path} line {number}: {line.count(',') + 1} columns, expected {expected}"
            )
    try:
        raw = np.loadtxt(lines, delimiter=",", dtype=np.float64, ndmin=2)
    except ValueError:
        for number, line in enumerate(lines, first_line):
            if not _numbers(line):
                raise ValueError(f"{path} line {number}: not all numbers: {line!r}") from None
        raise
    return raw, first_line


def _numbers(line: str) -> bool:
    try:
        for field in line.split(","):
            float(field)
    except ValueError:
        return False
    return True


def _raise_at(path: Path, first_line: int, problem: tuple[int, str] | None) -> None:
    if problem is not None:
        row, what = problem
        raise ValueError(f"{path} line {first_line + row}: {what}")


def _message_problem(*columns: NDArray[Any]) -> tuple[int, str] | None:
    """The first bad message of these columns (MESSAGE_DTYPE's, as numbers), and what is
    wrong with it."""
    time, kind, order_id, size, price, direction = columns
    whole = [
        (~np.isfinite(c) | (c != np.round(c)), f"{name} is not a whole number")
        for c, name in ((kind, "type"), (order_id, "order id"), (size, "size"), (price, "price"))
        if c.dtype.kind == "f"
    ]
    with np.errstate(invalid="ignore"):
        backwards = np.zeros(len(time), bool)
        backwards[1:] = time[1:] < time[:-1]
        trades = (kind >= SUBMIT) & (kind < HALT)
        return _events.first_problem(
            (~np.isfinite(time), "time is not a number"),
            *whole,
            ((kind < SUBMIT) | (kind > HALT), "type is not one of 1 to 7"),
            ((direction != 1) & (direction != -1), "direction is not 1 or -1"),
            (np.abs(order_id) >= _EXACT, "order id is 2**53 or more, beyond what is read exactly"),
            (trades & ~(size > 0), "size must be positive"),
            (
                (kind == HALT) & (price != HALTED) & (price != QUOTING) & (price != RESUMED),
                "a halt's price must be -1 (halt), 0 (quoting) or 1 (resume)",
            ),
            (backwards, "time goes backwards"),
        )


def _orderbook_problem(raw: NDArray[np.float64]) -> tuple[int, str] | None:
    """The first bad row of an orderbook file's numbers, and what is wrong with it."""
    asks, ask_sizes, bids, bid_sizes = (raw[:, k::4] for k in range(4))
    empty_asks, empty_bids = ask_sizes == 0, bid_sizes == 0

    def gaps(empty: NDArray[np.bool_]) -> Any:  # a level after an empty one
        return (empty[:, :-1] & ~empty[:, 1:]).any(axis=1)

    def unordered(prices: NDArray[np.float64], full: NDArray[np.bool_], sign: int) -> Any:
        steps = sign * np.diff(prices, axis=1) <= 0
        return (steps & full[:, 1:]).any(axis=1)

    with np.errstate(invalid="ignore"):
        return _events.first_problem(
            ((~np.isfinite(raw) | (raw != np.round(raw))).any(axis=1), "not all whole numbers"),
            (((ask_sizes < 0) | (bid_sizes < 0)).any(axis=1), "a negative size"),
            (gaps(empty_asks) | gaps(empty_bids), "a level after an empty one"),
            (
                ((asks <= 0) & ~empty_asks).any(axis=1) | ((bids <= 0) & ~empty_bids).any(axis=1),
                "a level with volume has no price",
            ),
            (
                unordered(asks, ~empty_asks, 1) | unordered(bids, ~empty_bids, -1),
                "levels out of price order",
            ),
            (
                ~empty_asks[:, 0] & ~empty_bids[:, 0] & (bids[:, 0] >= asks[:, 0]),
                "the best bid reaches the best ask",
            ),
        )


def to_events(messages: NDArray[Any], *, date: datetime.date | str | None = None) -> NDArray[Any]:
    """LOBSTER messages as sekai's order events (``sekai.finance.lob.events``): the same kinds
    (LOBSTER's types 1 to 7 are the events' 1 to 7), the direction as a side (a halt has none),
    and time in nanoseconds since the epoch: midnight (UTC) of ``date`` (a ``datetime.date`` or
    ``"YYYY-MM-DD"``; None counts from 1970-01-01) plus the message's seconds after midnight.
    The messages are checked as ``read_messages`` checks a file's."""
    if not isinstance(messages, np.ndarray) or messages.dtype != MESSAGE_DTYPE:
        raise TypeError(
            f"messages must be an array of MESSAGE_DTYPE, got {type(messages).__name__}"
        )
    problem = _message_problem(*(messages[name] for name in MESSAGE_DTYPE.names or ()))
    if problem is not None:
        raise ValueError(f"message {problem[0] + 1}: {problem[1]}")
    events = _events.empty(len(messages))
    kinds = messages["type"]
    events["time"] = np.round(messages["time"] * _events.NANOSECONDS).astype(np.int64)
    if date is not None:
        events["time"] += _events.midnight(date)
    events["kind"] = kinds
    events["order_id"] = messages["order_id"]
    events["side"] = np.where(
        kinds == HALT, _events.NO_SIDE, np.where(messages["direction"] == 1, BUY, SELL)
    )
    events["price"] = messages["price"]
    events["size"] = messages["size"]
    return _events.check_events(events, "LOBSTER messages")


def date_of(path: str | os.PathLike[str]) -> datetime.date | None:
    """The trading day a LOBSTER file's name gives (``AAPL_2012-06-21_34200000_..._10.csv``),
    or None when the name holds no date."""
    found = re.search(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)", Path(os.fspath(path)).name)
    if found is None:
        return None
    return datetime.date(*(int(part) for part in found.groups()))


# -- writing ---------------------------------------------------------------------------------
def write_messages(path: str | Path, messages: NDArray[Any]) -> None:
    """Write a structured array of messages as a LOBSTER message file."""
    with open(path, "w") as file:
        for m in messages:
            file.write(
                f"{m['time']:.9f},{m['type']},{m['order_id']},{m['size']},{m['price']},"
                f"{m['direction']}\n"
            )


# -- replay ----------------------------------------------------------------------------------
def initial_book(
    messages: NDArray[Any],
    orderbook: NDArray[Any],
    *,
    n_ticks: int,
    tick: int = 100,
    price_offset: int = 0,
) -> OrderBook:
    """The book before the first message: orderbook row 1 less message 1, every level seeded
    as legacy volume (``OrderBook.add_legacy``), on a grid of ``n_ticks`` ticks."""
    if not len(messages) or not len(orderbook):
        raise ValueError("initial_book needs the first message and the first orderbook row")
    _check_replay(messages[:1], tick, price_offset, n_ticks, orderbook[:1])
    first = replay_stream(to_events(messages[:1]))
    opening = opening_lots(first, orderbook, tick, price_offset, n_ticks)
    book = OrderBook(n_ticks)
    for side in (BUY, SELL):
        for price in np.flatnonzero(opening[side]):
            book.add_legacy(side, int(price), int(opening[side, price]))
    return book


def replay(
    book: OrderBook,
    messages: NDArray[Any],
    *,
    tick: int = 100,
    price_offset: int = 0,
    orderbook: NDArray[Any] | None = None,
) -> ReplayResult:
    """Drive ``book`` with ``messages`` by order id; return what happened.

    Prices map to ticks as ``(price - price_offset) // tick`` (``tick=100`` is one cent).
    Submissions rest under their LOBSTER id (owner PUBLIC). An execution, partial cancel or
    delete of an order the book holds acts on that order (an execution trades that order,
    whatever rests ahead of it); of an unknown id (an order from before the file), on the
    legacy volume at its price, as far as there is some (the rest counts as unmatched).
    Hidden executions and cross trades go on the tape (at the tick below a price between
    ticks) and change nothing else; halts halt and resume the book (``OrderBook.halt``).

    With ``orderbook`` (the file's rows, one per message, as ``read_orderbook`` returns
    them), after each message the book's top N levels are set to the row: volume the book
    lacks becomes legacy volume, volume it has beyond the row is cancelled (legacy first,
    then the newest orders); ``reconciliations`` counts the messages that needed it.

    Everything is checked before the first message is applied (types, directions, sizes,
    time order, prices on the grid and in the book, each new id submitted once and not
    resting yet), so a bad stream leaves the book untouched; submissions then take the
    book's unchecked path.
    """
    kinds, ticks = _check_replay(messages, tick, price_offset, book.n_ticks, orderbook)
    new_ids = messages["order_id"][kinds == SUBMIT] if len(book) else ()
    resting = next((i for i in new_ids if i in book), None)
    if resting is not None:
        raise ValueError(f"order id {resting} is submitted but already rests in the book")
    sides = np.where(messages["direction"] == 1, BUY, SELL)
    columns = (kinds, messages["order_id"], messages["size"], ticks, sides)
    reconciling = orderbook is not None
    rows = _row_ticks(orderbook, tick, price_offset) if orderbook is not None else []
    levels = orderbook.dtype["bid_size"].shape[0] if orderbook is not None else 0
    add, cancel, execute = book._add, book.cancel, book.execute
    unchanged = unmatched = reconciled = 0
    # Python lists a chunk at a time: lists of the whole stream would be garbage-collector
    # work (every young collection walks them) for no gain
    for start in range(0, len(messages), _CHUNK):
        chunk = [column[start : start + _CHUNK].tolist() for column in columns]
        targets = zip(*(_chunk_levels(*side, start) for side in rows), strict=True)
        for kind, order_id, size, price, side in zip(*chunk, strict=True):
            if kind == SUBMIT:
                add(side, price, size, PUBLIC, order_id)
            elif kind <= DELETE:  # a partial cancel or a delete
                try:
                    cancel(order_id, None if kind == DELETE else size)
                except KeyError:  # an order from before the file: legacy volume
                    taken = book.cancel_legacy(side, price, size)
                    unchanged += not taken
                    unmatched += taken < size
            elif kind == EXECUTE:
                try:
                    execute(order_id, size)
                except KeyError:
                    taken = book.execute_legacy(side, price, size)
                    unchanged += not taken
                    unmatched += taken < size
                except ValueError:  # executed beyond what the book holds of it
                    execute(order_id, book.order(order_id).size)
                    unmatched += 1
            elif kind == HALT:
                book.resume() if price == RESUMED else book.halt()
            else:
                book.record_trade(price, size, 1 - side)
            if reconciling:
                bids, asks = next(targets)
                reconciled += _reconcile(book, bids, asks, levels)
    counts = np.bincount(kinds, minlength=HALT + 1)
    return ReplayResult(
        applied=int(counts[SUBMIT : EXECUTE + 1].sum()) - unchanged,
        unmatched=unmatched,
        hidden_trades=int(counts[EXECUTE_HIDDEN]),
        cross_trades=int(counts[CROSS]),
        halts=int(counts[HALT]),
        reconciliations=reconciled,
    )


def _row_ticks(
    orderbook: NDArray[Any], tick: int, price_offset: int
) -> list[tuple[NDArray[np.int64], NDArray[np.int64]]]:
    """(ticks, sizes) of the bid levels, then of the ask levels, of every row (tick 0 where
    a level is empty)."""
    return [
        (
            np.where(orderbook[f"{name}_size"] > 0, orderbook[f"{name}_price"] - price_offset, 0)
            // tick,
            orderbook[f"{name}_size"],
        )
        for name in ("bid", "ask")
    ]


def _chunk_levels(
    ticks: NDArray[np.int64], sizes: NDArray[np.int64], start: int
) -> list[list[tuple[int, int]]]:
    """The non-empty levels, (tick, size) best first, of rows ``start`` to ``start + _CHUNK``."""
    return [
        [(p, s) for p, s in zip(row_ticks, row_sizes, strict=True) if s]
        for row_ticks, row_sizes in zip(
            ticks[start : start + _CHUNK].tolist(),
            sizes[start : start + _CHUNK].tolist(),
            strict=True,
        )
    ]


def _check_replay(
    messages: NDArray[Any],
    tick: int,
    price_offset: int,
    n_ticks: int,
    orderbook: NDArray[Any] | None,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Refuse, before anything is applied, a stream ``replay`` could not apply whole;
    return its types and its ticks (a halt keeps its price: -1, 0 or 1)."""
    check_tick(tick)
    if messages.dtype != MESSAGE_DTYPE:
        raise TypeError(f"messages must have MESSAGE_DTYPE, got {messages.dtype}")
    # contiguous copies of the fields used most: a structured array's fields are strided,
    # which makes each pass over them several times slower
    kinds, prices = np.ascontiguousarray(messages["type"]), np.ascontiguousarray(messages["price"])
    problem = _message_problem(
        messages["time"],
        kinds,
        messages["order_id"],
        messages["size"],
        prices,
        messages["direction"],
    )
    if problem is not None:
        raise ValueError(f"message {problem[0] + 1}: {problem[1]}")
    offsets = prices - price_offset
    ticks = offsets // tick
    off_grid = (kinds <= EXECUTE) & (ticks * tick != offsets)
    if off_grid.any():
        at = int(np.argmax(off_grid))
        raise ValueError(f"message {at + 1}: price {prices[at]} is not on the {tick}-unit grid")
    submitted = np.flatnonzero(kinds == SUBMIT)
    ids = messages["order_id"][submitted]
    order = np.argsort(ids, kind="stable")  # ids mostly come in order: near linear
    repeated = ids[order[1:]] == ids[order[:-1]]
    if repeated.any():
        at = int(submitted[order[1:][repeated].min()])
        raise ValueError(
            f"message {at + 1}: order id {messages['order_id'][at]} is submitted twice"
        )
    halts = kinds == HALT
    outside = ~halts & (ticks.view(np.uint64) >= n_ticks)  # a negative tick is a large uint
    if outside.any():
        at = int(np.argmax(outside))
        raise ValueError(
            f"message {at + 1}: price {prices[at]} is tick {ticks[at]}, outside the book's "
            f"[0, {n_ticks})"
        )
    ticks[halts] = prices[halts]
    if orderbook is None:
        return kinds, ticks
    check_rows(orderbook, len(messages), tick, price_offset, n_ticks)
    return kinds, ticks


def _reconcile(
    book: OrderBook, bids: list[tuple[int, int]], asks: list[tuple[int, int]], levels: int
) -> bool:
    """Set the book's top ``levels`` levels to an orderbook row's ``bids`` and ``asks``
    ((tick, size), best first); True if anything had to change. Excess volume goes first
    (legacy, then the newest orders), then what is missing comes as legacy volume, so the
    book never crosses on the way."""
    if book.depth(BUY, levels) == bids and book.depth(SELL, levels) == asks:
        return False
    missing = []
    for side, target in ((BUY, bids), (SELL, asks)):
        wanted = dict(target)
        # the file sees every level up to its last one, or the whole side if it shows fewer
        last = target[-1][0] if len(target) == levels else None
        for price, volume in _levels_up_to(book, side, last):
            excess = volume - wanted.get(price, 0)
            if excess > 0:
                _cancel_newest(book, side, price, excess)
        missing += [
            (side, price, size - book.volume(side, price))
            for price, size in target
            if size > book.volume(side, price)
        ]
    for side, price, size in missing:
        book.add_legacy(side, price, size)
    return True


def _levels_up_to(book: OrderBook, side: int, last: int | None) -> list[tuple[int, int]]:
    """The book's levels of a side from the best to tick ``last`` (all of them if None)."""
    count = 16
    while True:
        held = book.depth(side, count)
        beyond = (
            last is not None
            and held
            and (held[-1][0] < last if side == BUY else held[-1][0] > last)
        )
        if len(held) < count or beyond:
            break
        count *= 4
    if last is None:
        return held
    return [(p, v) for p, v in held if (p >= last if side == BUY else p <= last)]


def _cancel_newest(book: OrderBook, side: int, price: int, size: int) -> None:
    """Cancel ``size`` lots at a level: its legacy volume first, then the newest orders."""
    size -= book.cancel_legacy(side, price, size)
    for order in reversed(book.queue(side, price)):
        if not size:
            return
        if order.owner != LEGACY:
            book.cancel(order.order_id, min(size, order.size))
            size -= min(size, order.size)


# -- recording -------------------------------------------------------------------------------
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
