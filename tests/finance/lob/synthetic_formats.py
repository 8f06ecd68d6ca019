"""One synthetic trading day written as LOBSTER, NASDAQ TotalView-ITCH 5.0 and Databento DBN MBO
(issue 34: the three formats of the same day give the same books).

``synthetic_day(seed)`` makes the day once, as order events (``EVENT_DTYPE``), played on a
full-depth ``OrderBook`` so that every event is one the book can take: an opening book ten
levels deep, then adds (never crossing the other side), partial cancels, deletes, replaces (the
delete of an order and the add of a new one at the same time on its side, ITCH's 'U'), market
orders that execute the queues in FIFO order (partial and full executions at one time),
trades against hidden orders (order id 0, as NASDAQ and LOBSTER give it), and a halt, quoting
and resume with no execution in between. Prices are on a cent grid around $10.00, order ids
pass 2**32, times are whole nanoseconds (not whole microseconds) from 9:30 on ``DATE``.

The day holds only what all three formats carry: no ``MODIFY`` (LOBSTER and ITCH have none:
a change of an order is a replace), no ``CROSS`` and no ``CLEAR``, flags 0, and every
``DELETE`` of the size the order has left (ITCH's 'D' carries no size: it means the rest).

``write_lobster``, ``write_itch`` and ``write_dbn_mbo`` write an event array in each format,
``write_day(folder)`` makes the day and writes it in all three (the function the replay
comparison starts from), ``read_back(fmt, path)`` reads a file with sekai's reader, and
``as_read(fmt, events)`` is what that reader must give for the day, by the readers'
documented rules:

- LOBSTER (``lobster.read_messages`` + ``to_events(date=date_of(path))``) and ITCH
  (``itch.read_itch``): the day itself, field by field. LOBSTER's decimal seconds have nine
  decimals, enough for every nanosecond of a day through a float64 and back.
- DBN (``databento.read_dbn``): MBO has no trading-status record (Databento publishes halts
  in its separate ``status`` schema), so the halts are not in the file; a delete is a cancel
  of the rest (``CANCEL``); and each event's last record carries ``F_LAST`` where the next
  event has another time (the events of one time are one venue packet), read as ``LAST``.

``mbp10_records`` derives from MBO records the MBP-10 records Databento would publish for
them (the top ten levels after each update and trade), ``derive_mbp10`` writes an MBO file's
as an MBP-10 file, the depth file an MBO replay is reconciled with.

``top_levels_after_each`` and ``apply_event`` replay events into an ``OrderBook`` for the
book comparison.
"""

from __future__ import annotations

import datetime
import gzip
import io
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import itch_messages as itch
import numpy as np
from numpy.typing import NDArray

from sekai.finance import BUY, SELL, OrderBook
from sekai.finance.lob.events import (
    ADD,
    CANCEL,
    DAY,
    DELETE,
    EVENT_DTYPE,
    EXECUTE,
    HALT,
    HALTED,
    KINDS,
    LAST,
    NANOSECONDS,
    NO_SIDE,
    QUOTING,
    RESUMED,
    TRADE,
    check_events,
    midnight,
)

SYMBOL = "SEKA"
DATE = datetime.date(2024, 1, 2)
TICK = 100  # one cent in price units (1e-4 dollars)
N_TICKS = 2_000  # the book's ticks: $0.00 to $19.99
OPEN_BID = 1_000  # the opening best bid's tick: $10.00
OPEN_TIME = 34_200 * NANOSECONDS  # 9:30, after midnight
FIRST_ID = 5_000_000_000  # beyond 32 bits: an id cut to 4 bytes somewhere shows
SIZES = (1, 5, 10, 50, 100, 100, 100, 200, 300, 500)
FORMATS = ("lobster", "itch", "dbn")
CARRIED = (ADD, CANCEL, DELETE, EXECUTE, TRADE, HALT)  # the kinds all three writers take

LOCATE = 1  # the stock's ITCH locate code
INSTRUMENT_ID = 7  # its Databento instrument id
PUBLISHER_ID = 2  # Databento's XNAS.ITCH publisher
RECV_DELAY = 2_500  # ns from ts_event to ts_recv in the DBN file
_STATES = {HALTED: "H", QUOTING: "Q", RESUMED: "T"}  # a halt's ITCH trading state


# -- the day ---------------------------------------------------------------------------------
def synthetic_day(seed: int = 0, n_events: int = 3_000) -> NDArray[Any]:
    """A day of about ``n_events`` order events of ``SYMBOL`` on ``DATE`` (see the module
    docstring): ``EVENT_DTYPE``, in time order, checked by ``check_events``. Events come
    0.2 s apart on average: the 3,000 of the default span about ten minutes from 9:30, more
    than one ``LobsterReplay-v0`` episode of its default 300 steps of 1 s."""
    rng = np.random.default_rng(seed)
    book = OrderBook(N_TICKS)
    rows: list[tuple[int, int, int, int, int, int, int]] = []
    time = midnight(DATE) + OPEN_TIME
    next_id = FIRST_ID

    def emit(kind: int, order_id: int, side: int, price: int, size: int) -> None:
        rows.append((time, kind, order_id, side, price, size, 0))

    def place(side: int, tick: int, size: int) -> None:
        nonlocal next_id
        book.add(side, tick, size, order_id=next_id)
        emit(ADD, next_id, side, tick * TICK, size)
        next_id += int(rng.integers(1, 4))  # gaps: ids the venue gave other stocks

    def passive_tick(side: int) -> int:  # a price that rests: never at or through the other side
        distance = int(rng.geometric(0.3)) - 1
        if side == BUY:
            ask = book.best_ask
            return (ask - 1 if ask is not None else OPEN_BID) - distance
        bid = book.best_bid
        return (bid + 1 if bid is not None else OPEN_BID + 1) + distance

    def any_order(side: int) -> Any:  # a resting order, most often near the top
        levels = book.depth(side, 40)
        if not levels:
            return None
        tick = levels[min(int(rng.geometric(0.35)) - 1, len(levels) - 1)][0]
        queue = book.queue(side, tick)
        return queue[int(rng.integers(len(queue)))]

    for side in (BUY, SELL):  # the opening book, all at 9:30:00
        for level in range(10):
            tick = OPEN_BID - level if side == BUY else OPEN_BID + 1 + level
            for _ in range(int(rng.integers(1, 4))):
                place(side, tick, int(rng.choice(SIZES)))
    halt_at = int(n_events * 0.6)
    states = {halt_at: HALTED, halt_at + 100: QUOTING, halt_at + 150: RESUMED}
    for event in range(n_events):
        time += int(rng.exponential(0.2 * NANOSECONDS)) + 1
        halted = halt_at <= event < halt_at + 150
        if event in states:
            emit(HALT, 0, NO_SIDE, states[event], 0)
            continue
        side = int(rng.integers(2))
        draw = rng.random()
        if draw < 0.45:
            place(side, passive_tick(side), int(rng.choice(SIZES)))
        elif draw < 0.60:  # a partial cancel (a delete of a one-lot order)
            order = any_order(side)
            if order is None:
                continue
            if order.size > 1:
                cut = int(rng.integers(1, order.size))
                book.cancel(order.order_id, cut)
                emit(CANCEL, order.order_id, side, order.price * TICK, cut)
            else:
                book.cancel(order.order_id)
                emit(DELETE, order.order_id, side, order.price * TICK, order.size)
        elif draw < 0.75:  # a delete
            order = any_order(side)
            if order is None:
                continue
            book.cancel(order.order_id)
            emit(DELETE, order.order_id, side, order.price * TICK, order.size)
        elif draw < 0.82:  # a replace: the delete, then the new order, at one time
            order = any_order(side)
            if order is None:
                continue
            book.cancel(order.order_id)
            emit(DELETE, order.order_id, side, order.price * TICK, order.size)
            place(side, passive_tick(side), int(rng.choice(SIZES)))
        elif draw < 0.97 and not halted:  # a market order of the other side
            size = int(rng.choice(SIZES))
            while size and book.depth(side, 1):
                tick = book.depth(side, 1)[0][0]
                for order in book.queue(side, tick):
                    fill = min(size, order.size)
                    book.execute(order.order_id, fill)
                    emit(EXECUTE, order.order_id, side, tick * TICK, fill)
                    size -= fill
                    if not size:
                        break
        elif not halted:  # a hidden order trades, inside the spread or at a quote
            bid, ask = book.best_bid, book.best_ask
            if bid is not None and ask is not None:
                tick = bid + int(rng.integers(ask - bid + 1))
                emit(TRADE, 0, side, tick * TICK, int(rng.choice(SIZES)))
    return check_events(np.array(rows, EVENT_DTYPE), "the synthetic day")


def features(events: NDArray[Any]) -> dict[str, int]:
    """How many of each thing the day is meant to hold it holds: each kind carried, partial
    and full executions, replaces, and times that are not whole microseconds (which the
    comparisons need to mean anything)."""
    kind = events["kind"]
    left: dict[int, int] = {}
    partial = full = 0
    for e in events[(kind == ADD) | (kind == CANCEL) | (kind == EXECUTE)].tolist():
        _, k, order_id, _, _, size, _ = e
        if k == ADD:
            left[order_id] = size
            continue
        left[order_id] -= size
        if k == EXECUTE:
            partial += left[order_id] > 0
            full += left[order_id] == 0
    counts = {KINDS[k]: int((kind == k).sum()) for k in CARRIED}
    return counts | {
        "partial executions": partial,
        "full executions": full,
        "replaces": len(_replaces(events)),
        "halt states": len(set(events["price"][kind == HALT].tolist())),
        "sub-microsecond times": int((events["time"] % 1000 != 0).sum()),
    }


def _replaces(events: NDArray[Any]) -> list[int]:
    """The indices of each DELETE that the next event, an ADD of another order at the same
    time on the same side, replaces (ITCH's 'U': both are one message)."""
    first, then = events[:-1], events[1:]
    pair = (
        (first["kind"] == DELETE)
        & (then["kind"] == ADD)
        & (first["time"] == then["time"])
        & (first["side"] == then["side"])
        & (first["order_id"] != then["order_id"])
    )
    return np.flatnonzero(pair).tolist()


# -- the writers -----------------------------------------------------------------------------
def _check_writable(events: NDArray[Any], fmt: str) -> None:
    check_events(events, f"events to write as {fmt}")
    other = ~np.isin(events["kind"], CARRIED)
    if other.any():
        at = int(np.argmax(other))
        raise ValueError(
            f"event {at}: a {KINDS[int(events['kind'][at])]!r} event; the {fmt} writer takes "
            f"only {', '.join(KINDS[k] for k in CARRIED)} (what all three formats carry)"
        )


def _clocks(events: NDArray[Any], date: datetime.date | None, fmt: str) -> NDArray[np.int64]:
    """Nanoseconds after midnight (UTC) of ``date`` (None: of the first event's day); a
    ValueError if an event is not on that day."""
    start = midnight(date) if date is not None else int(events["time"][0]) // DAY * DAY
    clock = events["time"] - start
    outside = (clock < 0) | (clock >= DAY)
    if outside.any():
        at = int(np.argmax(outside))
        raise ValueError(f"event {at}: not on the day of the {fmt} file (time {clock[at]} ns)")
    return clock


def lobster_name(symbol: str, date: datetime.date, events: NDArray[Any], levels: int = 10) -> str:
    """LOBSTER's name for a message file (``SEKA_2024-01-02_34200000_37800000_message_10.csv``):
    symbol, date, the window's start and end in milliseconds after midnight, levels."""
    clock = _clocks(events, date, "LOBSTER")
    start, end = int(clock[0]) // 1_000_000, int(clock[-1]) // 1_000_000 + 1
    return f"{symbol}_{date.isoformat()}_{start}_{end}_message_{levels}.csv"


def write_lobster(
    events: NDArray[Any],
    folder: str | os.PathLike[str],
    symbol: str,
    date: datetime.date,
    *,
    gz: bool = False,
) -> Path:
    """``events`` (of ``date``) as a LOBSTER message file in ``folder``, under LOBSTER's
    file name (``lobster_name``: ``lobster.date_of`` reads ``date`` back from it; ``.gz``
    added and the file gzipped if ``gz``); its path.

    One line per event: seconds after midnight with nine decimals (written from the integer
    nanoseconds, exactly), type (the kind: 1 to 7 are LOBSTER's types), order id, size,
    price, direction (1 buy, -1 sell; -1 for a halt, whose size and order id are 0). The file
    holds every event of the day, as a level-N file of a book never deeper than N would."""
    _check_writable(events, "LOBSTER")
    clock = _clocks(events, date, "LOBSTER")
    lines = [
        f"{t // NANOSECONDS}.{t % NANOSECONDS:09d},{kind},{order_id},{size},{price},"
        f"{1 if side == BUY else -1}"
        for t, (_, kind, order_id, side, price, size, _) in zip(
            clock.tolist(), events.tolist(), strict=True
        )
    ]
    path = Path(folder) / (lobster_name(symbol, date, events) + (".gz" if gz else ""))
    text = "\n".join(lines) + "\n"
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return path


def itch_name(date: datetime.date, *, gz: bool = False) -> str:
    """NASDAQ's name for a day's ITCH 5.0 file (``01022024.NASDAQ_ITCH50``), which
    ``read_itch`` takes the date from."""
    return f"{date:%m%d%Y}.NASDAQ_ITCH50" + (".gz" if gz else "")


def write_itch(events: NDArray[Any], path: str | os.PathLike[str], symbol: str) -> Path:
    """``events`` (all of one day, UTC) as a TotalView-ITCH 5.0 file of ``symbol`` at
    ``path`` (gzipped if it ends in ``.gz``); ``path``. Name it ``itch_name(date)`` for
    ``read_itch`` to take the date from it.

    System events 'O', 'S', 'Q' and the stock directory ('R', locate ``LOCATE``) open the
    file, 'M', 'E', 'C' close it; in between one message per event, its timestamp the
    event's nanoseconds after midnight: ``ADD`` 'A' ('F' with an MPID for ids divisible by
    5), ``CANCEL`` 'X', ``DELETE`` 'D' (which carries no size: the event's size must be what
    the order has left, a ValueError otherwise) or, with the next event an ``ADD`` of a new
    order at the same time on the same side, one 'U' for both, ``EXECUTE`` 'E' (every
    fourth 'C', executed at the resting order's price), ``TRADE`` 'P' (its order id in the
    reference field), ``HALT`` 'H' (state 'H' halted, 'Q' quoting, 'T' trading)."""
    _check_writable(events, "ITCH")
    clock = _clocks(events, None, "ITCH").tolist()
    first, last = clock[0], clock[-1]
    messages = [
        itch.system_event(min(first, 3 * 3600 * NANOSECONDS), "O"),
        itch.directory(LOCATE, symbol, min(first, 3 * 3600 * NANOSECONDS)),
        itch.system_event(min(first, 4 * 3600 * NANOSECONDS), "S"),
        itch.system_event(min(first, OPEN_TIME), "Q"),
    ]
    replaced = set(_replaces(events))
    left: dict[int, int] = {}  # each order's shares
    match = 0
    rows = events.tolist()
    k = 0
    while k < len(rows):
        _, kind, order_id, side, price, size, _ = rows[k]
        at, letter = clock[k], "B" if side == BUY else "S"
        if kind in (CANCEL, DELETE, EXECUTE) and order_id not in left:
            raise ValueError(f"event {k}: order {order_id} is not resting")
        if kind == ADD:
            mpid = "SEKA" if order_id % 5 == 0 else None
            messages.append(itch.add(LOCATE, at, order_id, letter, size, symbol, price, mpid))
            left[order_id] = size
        elif kind == DELETE:
            if size != left[order_id]:
                raise ValueError(
                    f"event {k}: a delete of {size} of order {order_id}, which has "
                    f"{left[order_id]} left: ITCH's delete takes what is left"
                )
            del left[order_id]
            if k in replaced:
                _, _, new_id, _, new_price, new_size, _ = rows[k + 1]
                messages.append(itch.replace(LOCATE, at, order_id, new_id, new_size, new_price))
                left[new_id] = new_size
                k += 1
            else:
                messages.append(itch.delete(LOCATE, at, order_id))
        elif kind in (CANCEL, EXECUTE):
            if size > left[order_id]:
                raise ValueError(f"event {k}: {size} off order {order_id}, which has less")
            left[order_id] -= size
            if kind == CANCEL:
                messages.append(itch.cancel(LOCATE, at, order_id, size))
            else:
                match += 1
                messages.append(
                    itch.executed_with_price(LOCATE, at, order_id, size, match, price)
                    if match % 4 == 0
                    else itch.executed(LOCATE, at, order_id, size, match)
                )
            if not left[order_id]:
                del left[order_id]
        elif kind == TRADE:
            match += 1
            messages.append(itch.trade(LOCATE, at, letter, size, symbol, price, match, order_id))
        else:  # HALT
            messages.append(itch.trading_action(LOCATE, symbol, _STATES[price], at))
        k += 1
    messages += [
        itch.system_event(max(last, 16 * 3600 * NANOSECONDS), "M"),
        itch.system_event(max(last, 20 * 3600 * NANOSECONDS), "E"),
        itch.system_event(max(last, 20 * 3600 * NANOSECONDS + 5 * 60 * NANOSECONDS), "C"),
    ]
    data = itch.frame(messages)
    path = Path(path)
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


def dbn_metadata(symbol: str, date: datetime.date, schema: str = "mbo") -> Any:
    """The DBN metadata of a day's file of ``schema`` ("mbo", "mbp-10") of ``symbol``
    (instrument ``INSTRUMENT_ID``, mapped for ``date``), as ``databento_dbn.Metadata``."""
    import databento_dbn as dbn

    start = midnight(date)
    interval = SimpleNamespace(
        start_date=date, end_date=date + datetime.timedelta(1), symbol=str(INSTRUMENT_ID)
    )
    return dbn.Metadata(
        dataset="XNAS.ITCH",
        start=start,
        end=start + DAY,
        stype_in=dbn.SType.RAW_SYMBOL,
        stype_out=dbn.SType.INSTRUMENT_ID,
        schema=dbn.Schema.from_str(schema),
        symbols=[symbol],
        mappings=[SimpleNamespace(raw_symbol=symbol, intervals=[interval])],
    )


def dbn_records(events: NDArray[Any]) -> list[Any]:
    """``events`` as Databento MBO records (``databento_dbn.MBOMsg``), as Databento writes a
    venue's feed: ``ADD`` an 'A'; ``CANCEL`` a 'C' of its size; ``DELETE`` a 'C' of the rest;
    ``EXECUTE`` the aggressor's trade print 'T' (other side, order id 0), the resting order's
    fill 'F' and the cancel 'C' of the filled size; ``TRADE`` (a hidden order) a 'T' and an
    'F' of the hidden order that no cancel follows; ``HALT`` nothing (MBO has no trading
    status). The events of one time are one packet: its last record has ``F_LAST``. Prices
    in 1e-9 units; ``ts_recv`` is ``ts_event`` plus ``RECV_DELAY``."""
    import databento_dbn as dbn

    plans: list[tuple[int, str, str, int, int, int]] = []  # time, action, side, id, price, size
    ends: list[int] = []  # the index of each packet's last record
    rows = [row for row in events.tolist() if row[1] != HALT]
    for k, (t, kind, order_id, side, price, size, _) in enumerate(rows):
        own, other = ("B", "A") if side == BUY else ("A", "B")
        if kind == ADD:
            plans.append((t, "A", own, order_id, price, size))
        elif kind in (CANCEL, DELETE):
            plans.append((t, "C", own, order_id, price, size))
        elif kind == EXECUTE:
            plans.append((t, "T", other, 0, price, size))
            plans.append((t, "F", own, order_id, price, size))
            plans.append((t, "C", own, order_id, price, size))
        else:  # TRADE
            plans.append((t, "T", other, 0, price, size))
            plans.append((t, "F", own, order_id, price, size))
        if k + 1 == len(rows) or rows[k + 1][0] != t:
            ends.append(len(plans) - 1)
    last = set(ends)
    return [
        dbn.MBOMsg(
            PUBLISHER_ID,
            INSTRUMENT_ID,
            t,
            order_id,
            price * 100_000,
            size,
            dbn.Action.from_str(action),
            dbn.Side.from_str(side),
            t + RECV_DELAY,
            flags=LAST if k in last else 0,
            sequence=k + 1,
        )
        for k, (t, action, side, order_id, price, size) in enumerate(plans)
    ]


def write_dbn_mbo(
    events: NDArray[Any], path: str | os.PathLike[str], symbol: str, date: datetime.date
) -> Path:
    """``events`` (of ``date``) as a Databento MBO file of ``symbol`` at ``path``, with
    databento-dbn's own record classes (``dbn_records``, ``dbn_metadata``): plain DBN, or
    Zstandard-compressed through its ``Transcoder`` if ``path`` ends in ``.zst``; ``path``."""
    _check_writable(events, "DBN")
    _clocks(events, date, "DBN")
    return write_dbn_file(dbn_metadata(symbol, date), dbn_records(events), path)


def write_dbn_file(
    metadata: Any, records: list[Any], path: str | os.PathLike[str], *, zstd: bool | None = None
) -> Path:
    """``metadata`` and ``records`` (databento-dbn's objects) as a DBN file at ``path``:
    plain, or Zstandard-compressed through databento-dbn's ``Transcoder`` if ``zstd`` (by
    default: if the name ends in ``.zst``); ``path``."""
    import databento_dbn as dbn

    plain = bytes(metadata) + b"".join(map(bytes, records))
    path = Path(path)
    if not (path.suffix == ".zst" if zstd is None else zstd):
        path.write_bytes(plain)
        return path
    out = io.BytesIO()
    transcoder = dbn.Transcoder(out, dbn.Encoding.DBN, dbn.Compression.ZSTD)
    transcoder.write(plain)
    transcoder.flush()
    transcoder.finish()
    path.write_bytes(out.getvalue())
    return path


def read_dbn_records(path: str | os.PathLike[str]) -> list[Any]:
    """The records of a DBN file (plain or ``.zst``), decoded by databento-dbn's own
    ``DBNDecoder`` (the metadata left out)."""
    import databento_dbn as dbn

    path = Path(path)
    compression = dbn.Compression.ZSTD if path.suffix == ".zst" else dbn.Compression.NONE
    decoder = dbn.DBNDecoder(compression=compression)
    decoder.write(path.read_bytes())
    return [r for r in decoder.decode() if not isinstance(r, dbn.Metadata)]


MBP_DEPTH = 10  # levels an MBP-10 record shows


def mbp10_records(mbo: list[Any]) -> list[Any]:
    """The MBP-10 records (``databento_dbn.MBP10Msg``) Databento derives from ``mbo``, one
    instrument's MBO records in order, by its documented rule for the schema ("every order
    book event across the top ten price levels ... includes every trade"): the records are
    applied to a book of orders by id (``A`` rests an order, ``C`` takes its size off it,
    ``M`` moves it to a new price and size, ``R`` clears the book; ``F`` and ``T`` change
    nothing) and there is one MBP-10 record after each record that changes the top ten
    levels of a side, and after each trade print ``T``. A fill ``F`` has none (MBP has no
    fill action: the book changes by the cancel that follows it), and neither has a change
    deeper than the tenth level. Each carries the MBO record's ``ts_event``, ``ts_recv``,
    ``sequence``, action, side, price and size, the ``depth`` of its price (levels better
    than it on its side; a trade's: on the resting side), and the top ten levels then:
    price, size and order count per side, best first, ``UNDEF_PRICE`` and 0 past the last
    level. ``F_LAST`` marks each packet's last MBP-10 record (the packets are the MBO's:
    up to a record with ``F_LAST``)."""
    import databento_dbn as dbn

    orders: dict[int, tuple[str, int, int]] = {}  # id -> side ("B"/"A"), price, size
    book: dict[str, dict[int, list[int]]] = {"B": {}, "A": {}}  # side -> price -> [size, count]

    def change(side: str, price: int, size: int, count: int) -> None:
        level = book[side].setdefault(price, [0, 0])
        level[0] += size
        level[1] += count
        if not level[1]:
            del book[side][price]

    def top(side: str) -> list[tuple[int, int, int]]:
        prices = sorted(book[side], reverse=side == "B")[:MBP_DEPTH]
        return [(p, *book[side][p]) for p in prices]

    def depth(side: str, price: int) -> int:
        better = (lambda p: p > price) if side == "B" else (lambda p: p < price)
        return sum(map(better, book[side]))

    out: list[Any] = []
    packet_start = 0  # the first MBP-10 record of the current packet
    for record in mbo:
        action, side = str(record.action), str(record.side)
        before = (top("B"), top("A"))
        if action == "A":
            orders[record.order_id] = (side, record.price, record.size)
            change(side, record.price, record.size, 1)
        elif action == "C":
            if record.order_id not in orders:
                raise ValueError(f"mbp10_records: a cancel of order {record.order_id}, not resting")
            side, price, size = orders[record.order_id]
            cut = min(record.size, size)
            left = size - cut
            change(side, price, -cut, 0 if left else -1)
            if left:
                orders[record.order_id] = (side, price, left)
            else:
                del orders[record.order_id]
        elif action == "M":
            if record.order_id in orders:
                old_side, price, size = orders.pop(record.order_id)
                change(old_side, price, -size, -1)
            if record.size:
                orders[record.order_id] = (side, record.price, record.size)
                change(side, record.price, record.size, 1)
        elif action == "R":
            orders.clear()
            book["B"].clear()
            book["A"].clear()
        elif action not in "FTN":
            raise ValueError(f"mbp10_records: unknown MBO action {action!r}")
        after = (top("B"), top("A"))
        if action == "T" or (action in "ACMR" and after != before):
            resting = {"B": "A", "A": "B"}.get(side, "B") if action == "T" else side
            levels = []
            bids, asks = after
            for k in range(MBP_DEPTH):
                bid = bids[k] if k < len(bids) else (dbn.UNDEF_PRICE, 0, 0)
                ask = asks[k] if k < len(asks) else (dbn.UNDEF_PRICE, 0, 0)
                levels.append(dbn.BidAskPair(bid[0], ask[0], bid[1], ask[1], bid[2], ask[2]))
            out.append(
                dbn.MBP10Msg(
                    record.publisher_id,
                    record.instrument_id,
                    record.ts_event,
                    record.price,
                    record.size,
                    record.action,
                    record.side,
                    0 if action == "R" else min(depth(resting, record.price), MBP_DEPTH - 1),
                    record.ts_recv,
                    flags=record.flags & ~LAST,
                    sequence=record.sequence,
                    levels=levels,
                )
            )
        if record.flags & LAST:
            if len(out) > packet_start:
                out[-1].flags = out[-1].flags | LAST
            packet_start = len(out)
    return out


def write_dbn_mbp10(
    records: list[Any], path: str | os.PathLike[str], symbol: str, date: datetime.date
) -> Path:
    """MBP-10 ``records`` (``mbp10_records``'s, possibly altered) as a Databento MBP-10 file
    of ``symbol`` on ``date`` at ``path`` (Zstandard-compressed if it ends in ``.zst``)."""
    return write_dbn_file(dbn_metadata(symbol, date, "mbp-10"), records, path)


def derive_mbp10(
    mbo_path: str | os.PathLike[str],
    path: str | os.PathLike[str],
    symbol: str = SYMBOL,
    date: datetime.date = DATE,
) -> Path:
    """The MBP-10 file Databento derives from the MBO file at ``mbo_path`` (its records
    decoded by databento-dbn, ``mbp10_records``), written at ``path``; ``path``."""
    return write_dbn_mbp10(mbp10_records(read_dbn_records(mbo_path)), path, symbol, date)


def write_day(
    folder: str | os.PathLike[str],
    *,
    seed: int = 0,
    n_events: int = 3_000,
    formats: tuple[str, ...] = FORMATS,
    compressed: bool = False,
) -> tuple[NDArray[Any], dict[str, Path]]:
    """The synthetic day (``synthetic_day(seed, n_events)``) and the paths of its files in
    ``folder``, one per format of ``formats`` ("lobster", "itch", "dbn"): LOBSTER's message
    file under its canonical name, NASDAQ's ``MMDDYYYY.NASDAQ_ITCH50`` and ``SEKA.mbo.dbn``;
    gzipped (``.gz``), and Zstandard-compressed for DBN (``.zst``), if ``compressed``."""
    unknown = set(formats) - set(FORMATS)
    if unknown:
        raise ValueError(f"formats must be among {FORMATS}, got {sorted(unknown)}")
    folder = Path(folder)
    events = synthetic_day(seed, n_events)
    paths: dict[str, Path] = {}
    if "lobster" in formats:
        paths["lobster"] = write_lobster(events, folder, SYMBOL, DATE, gz=compressed)
    if "itch" in formats:
        paths["itch"] = write_itch(events, folder / itch_name(DATE, gz=compressed), SYMBOL)
    if "dbn" in formats:
        name = f"{SYMBOL}.mbo.dbn" + (".zst" if compressed else "")
        paths["dbn"] = write_dbn_mbo(events, folder / name, SYMBOL, DATE)
    return events, paths


# -- reading back ----------------------------------------------------------------------------
def read_back(fmt: str, path: str | os.PathLike[str]) -> NDArray[Any]:
    """A file ``write_day`` wrote, read with sekai's reader of its format: LOBSTER through
    ``read_messages`` and ``to_events`` with the date its name gives, ITCH through
    ``read_itch`` (the date from its name), DBN through ``read_dbn(symbol=SYMBOL)``."""
    if fmt == "lobster":
        from sekai.finance.lob.lobster import date_of, read_messages, to_events

        return to_events(read_messages(path), date=date_of(path))
    if fmt == "itch":
        from sekai.finance.lob.itch import read_itch

        return read_itch(path, SYMBOL)
    if fmt == "dbn":
        from sekai.finance.lob.databento import read_dbn

        return read_dbn(path, symbol=SYMBOL)
    raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")


def as_read(fmt: str, events: NDArray[Any]) -> NDArray[Any]:
    """What reading ``events`` written as ``fmt`` must give (the module docstring's rules):
    the events themselves for LOBSTER and ITCH; for DBN, without the halts, each ``DELETE``
    a ``CANCEL``, and ``LAST`` on the last event of each time."""
    if fmt in ("lobster", "itch"):
        return events.copy()
    if fmt != "dbn":
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    read = events[events["kind"] != HALT].copy()
    read["kind"][read["kind"] == DELETE] = CANCEL
    ends = np.ones(len(read), bool)
    ends[:-1] = read["time"][1:] != read["time"][:-1]
    read["flags"][ends] |= LAST
    return read


def first_difference(got: NDArray[Any], want: NDArray[Any]) -> str | None:
    """Where two event arrays first differ, field by field (None if they are equal)."""
    if len(got) != len(want):
        return f"{len(got)} events, expected {len(want)}"
    for name in EVENT_DTYPE.names or ():
        differ = got[name] != want[name]
        if differ.any():
            at = int(np.argmax(differ))
            return f"event {at}: {name} {got[name][at]}, expected {want[name][at]} ({want[at]})"
    return None


# -- books -----------------------------------------------------------------------------------
def apply_event(book: OrderBook, event: tuple[int, ...]) -> None:
    """Apply one event (a row of ``EVENT_DTYPE`` as a tuple) to ``book`` by order id, one
    tick a cent: ``ADD`` rests the order under its id, ``CANCEL`` takes its size off it,
    ``DELETE`` removes it, ``EXECUTE`` executes it, ``TRADE`` goes on the tape, ``HALT``
    halts (``HALTED``, ``QUOTING``) or resumes the book."""
    _, kind, order_id, side, price, size, _ = event
    if kind == ADD:
        book.add(side, price // TICK, size, order_id=order_id)
    elif kind == CANCEL:
        book.cancel(order_id, size)
    elif kind == DELETE:
        book.cancel(order_id)
    elif kind == EXECUTE:
        book.execute(order_id, size)
    elif kind == TRADE:
        book.record_trade(price // TICK, size, 1 - side)
    elif kind == HALT:
        book.resume() if price == RESUMED else book.halt()
    else:
        raise ValueError(f"apply_event: a {KINDS.get(kind, kind)!r} event is not in the day")


Levels = tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...], bool]


def top_levels_after_each(events: NDArray[Any], levels: int = 5) -> tuple[list[Levels], OrderBook]:
    """The top ``levels`` levels of each side, (tick, lots) best first, and whether trading
    is halted, after each event applied to an empty ``OrderBook`` (``apply_event``); and
    the book at the end (its ``trades`` are the day's tape)."""
    book = OrderBook(N_TICKS)
    after = []
    for event in events.tolist():
        apply_event(book, event)
        after.append((tuple(book.depth(BUY, levels)), tuple(book.depth(SELL, levels)), book.halted))
    return after, book
