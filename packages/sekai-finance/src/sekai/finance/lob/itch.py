"""NASDAQ TotalView-ITCH 5.0 files: one stock's order events (``events.EVENT_DTYPE``).

A file as NASDAQ publishes it (``MMDDYYYY.NASDAQ_ITCH50``, often gzipped) is a stream of
binary messages, each after a 2-byte big-endian length. A message starts with its type (1
byte), the stock locate (2), a tracking number (2) and a timestamp (6, nanoseconds since
midnight); the rest is fixed per type, integers big-endian, prices in 1e-4 dollars (the
events' own price units), stocks 8 characters padded with spaces. ``read_itch`` reads the
messages of one stock, found through its locate code in the stock directory ('R'), and maps
them to events:

- 'A', 'F' (add order): ``ADD``; 'U' (replace): ``DELETE`` of the original order, then ``ADD``
  of the new reference at the same time, on the original's side, with the new price and
  shares (a replace loses its place in the queue);
- 'E' (executed): ``EXECUTE`` at the resting order's side and price; 'C' (executed with
  price): the same, the resting order's price kept in ``price`` (the level the shares leave)
  while the execution price, which can differ, is dropped; 'X' (cancel): ``CANCEL`` of the
  shares cancelled; 'D' (delete): ``DELETE`` of the shares the order has left;
- 'P' (trade against a hidden order): ``TRADE``, its side as the message gives it; 'Q' (cross
  trade): ``CROSS``, side ``BUY`` as the schema needs one and a cross has none (a cross of 0
  shares traded nothing and yields no event);
- 'H' (trading action): ``HALT``, price ``HALTED`` for halted ('H') or paused ('P'),
  ``QUOTING`` for quotation only ('Q'), ``RESUMED`` for trading ('T');
- every other type of the specification is skipped.
"""

from __future__ import annotations

import datetime
import gzip
import os
import re
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.events import (
    ADD,
    CANCEL,
    CROSS,
    DAY,
    DELETE,
    EVENT_DTYPE,
    EXECUTE,
    HALT,
    HALTED,
    NO_SIDE,
    QUOTING,
    RESUMED,
    TRADE,
    check_events,
    midnight,
)
from sekai.finance.lob.lobster import _local_file

__all__ = ["MESSAGE_LENGTHS", "read_itch"]

# every message type of ITCH 5.0 and its length in bytes (without the 2-byte length prefix)
MESSAGE_LENGTHS = {
    "S": 12,  # system event
    "R": 39,  # stock directory
    "H": 25,  # stock trading action
    "Y": 20,  # Reg SHO short sale price test restriction
    "L": 26,  # market participant position
    "V": 35,  # MWCB decline levels
    "W": 12,  # MWCB status
    "K": 28,  # IPO quoting period update
    "J": 35,  # LULD auction collar
    "h": 21,  # operational halt
    "A": 36,  # add order, no MPID
    "F": 40,  # add order with MPID attribution
    "E": 31,  # order executed
    "C": 36,  # order executed with price
    "X": 23,  # order cancel
    "D": 19,  # order delete
    "U": 35,  # order replace
    "P": 44,  # trade (non-cross)
    "Q": 40,  # cross trade
    "B": 19,  # broken trade
    "I": 50,  # net order imbalance indicator
    "N": 20,  # retail price improvement indicator
    "O": 48,  # direct listing with capital raise price discovery
}
_LENGTH = np.zeros(256, np.int64)
for _type, _length in MESSAGE_LENGTHS.items():
    _LENGTH[ord(_type)] = _length
_READ = np.zeros(256, bool)  # the types read
_READ[list(b"AFECXDUPQH")] = True
_WIDTH = 44  # bytes gathered per message read: the longest type read ('P')
_FIELDS = [  # every field read: (name, format, offset), overlapping, each for some types
    ("clock", ">u8", 3),  # tracking number and timestamp: the timestamp is the low 6 bytes
    ("ref", ">u8", 11),  # the order reference (A F E C X D U P); a cross's shares (Q)
    ("side", "u1", 19),  # buy/sell (A F P); a trading action's state (H)
    ("shares19", ">u4", 19),  # shares executed or cancelled (E C X)
    ("new_ref", ">u8", 19),  # a replace's new reference (U)
    ("shares20", ">u4", 20),  # shares (A F P)
    ("shares27", ">u4", 27),  # a replace's shares (U); a cross's price (Q)
    ("p31", ">u4", 31),  # a replace's price (U)
    ("p32", ">u4", 32),  # price (A F P)
]
_ROW = np.dtype(
    {
        "names": [name for name, _, _ in _FIELDS],
        "formats": [form for _, form, _ in _FIELDS],
        "offsets": [offset for _, _, offset in _FIELDS],
        "itemsize": _WIDTH,
    }
)
_STOCK_AT = {"R": 11, "H": 11, "A": 24, "F": 24, "P": 24, "Q": 19}  # a stock field's offset
_CLOCK = (1 << 48) - 1  # the timestamp: the low 6 bytes of the 8 from offset 3
_NAME_DATE = re.compile(r"(\d{2})(\d{2})(\d{4})\.")  # NASDAQ's MMDDYYYY.NASDAQ_ITCH50
_SHOWN = 8  # symbols listed when the one asked for is not in the file


def read_itch(
    path: str | os.PathLike[str], symbol: str, *, date: datetime.date | str | None = None
) -> NDArray[Any]:
    """The events (``EVENT_DTYPE``) of ``symbol`` in a TotalView-ITCH 5.0 file, in file order.

    ``path`` is a local file, gzipped if its name ends in ``.gz``. ``time`` is the ITCH
    timestamp (nanoseconds since midnight, New York time) plus the midnight (UTC) of ``date``
    (a ``datetime.date`` or ``'YYYY-MM-DD'``), or of the date a NASDAQ file name starts with
    (``MMDDYYYY.``); with neither, the nanoseconds since midnight alone. The whole file is
    checked first: a truncated message, a type ITCH 5.0 does not have or a length that is not
    its type's, and, for the stock's messages, a side or trading state the specification does
    not have, an add of price or shares 0, time going backwards, an execution, cancel, delete
    or replace of an order reference never added before it (or deleted, replaced or used up
    already), more shares executed or cancelled than the order has left, or an order
    reference added twice: a ValueError naming the file, the message (counted from 1, with
    the byte its length prefix starts at) and the problem.
    """
    if not isinstance(symbol, str):
        raise TypeError(f"symbol must be a str, got {type(symbol).__name__}")
    stock = symbol.strip().encode("ascii", "replace")
    if not stock or len(stock) > 8:
        raise ValueError(f"symbol must be 1 to 8 characters, got {symbol!r}")
    day_start = midnight(date) if date is not None else None
    local = _local_file(path)
    if day_start is None:
        day_start = _name_midnight(local.name)
    buffer, size = _read(local)
    starts, types, locates = _frame(local, buffer, size)
    wanted = np.zeros(1 << 16, bool)
    wanted[_locates(local, buffer, starts, types, locates, stock)] = True
    messages = np.flatnonzero(_READ[types] & wanted[locates])
    rows = _gather(buffer, starts[messages])
    events = _events(local, rows, types[messages], messages, starts)
    if day_start is not None:
        events["time"] += day_start
    return check_events(events, path)


# -- reading and framing ---------------------------------------------------------------------
def _read(path: Path) -> tuple[NDArray[np.uint8], int]:
    """The file's bytes (decompressed if ``.gz``) with zeros after them, so that every message
    can be gathered ``_WIDTH`` bytes wide; and how many bytes are the file's."""
    if path.suffix.lower() == ".gz":
        with gzip.open(path, "rb") as file:
            data = file.read()
        buffer = np.zeros(len(data) + _WIDTH + 2, np.uint8)
        buffer[: len(data)] = np.frombuffer(data, np.uint8)
        return buffer, len(data)
    size = path.stat().st_size
    buffer = np.zeros(size + _WIDTH + 2, np.uint8)
    with open(path, "rb") as file:
        got = file.readinto(buffer[:size].data)
    if got != size:
        raise ValueError(f"{path}: read {got} bytes of {size}")
    return buffer, got


@numba.njit(cache=True)  # type: ignore[misc]
def _walk(
    buffer: NDArray[np.uint8],
    size: int,
    lengths: NDArray[np.int64],
    starts: NDArray[np.int64],
    types: NDArray[np.uint8],
    locates: NDArray[np.uint16],
) -> tuple[int, int]:
    """Follow the length prefixes from byte 0, writing each message's first byte (its type's),
    type and stock locate; stop after the first message whose length is not its type's (or
    that runs past ``size``). How many messages were written, and the first bad one (-1 if
    none). ``buffer`` must have 3 bytes past ``size``."""
    count, at = 0, 0
    while at < size:
        length = int(buffer[at]) << 8 | int(buffer[at + 1])
        start = at + 2
        starts[count] = start
        types[count] = buffer[start]
        locates[count] = int(buffer[start + 1]) << 8 | int(buffer[start + 2])
        count += 1
        if length == 0 or lengths[buffer[start]] != length or start + length > size:
            return count, count - 1
        at = start + length
    return count, -1


def _frame(
    path: Path, buffer: NDArray[np.uint8], size: int
) -> tuple[NDArray[np.int64], NDArray[np.uint8], NDArray[np.uint16]]:
    """Each message's offset (of its type byte: its length prefix is the 2 bytes before),
    type and stock locate; a ValueError for a message that runs past the end, has a type
    ITCH 5.0 lacks or the wrong length for its type."""
    room = size // (min(MESSAGE_LENGTHS.values()) + 2) + 1  # and one bad message
    starts, types = np.empty(room + 1, np.int64), np.empty(room + 1, np.uint8)
    locates = np.empty(room + 1, np.uint16)
    count, bad = _walk(buffer, size, _LENGTH, starts, types, locates)
    if bad < 0:
        return starts[:count], types[:count], locates[:count]
    start = int(starts[bad])
    length = int(buffer[start - 2]) << 8 | int(buffer[start - 1])
    kind, expected = chr(types[bad]), int(_LENGTH[types[bad]])
    if start + length > size:
        left = max(size - start, 0)
        what = f"truncated: its length prefix says {length} bytes, the file has {left} left"
    elif length == 0:
        what = "an empty message"
    elif expected == 0:
        what = f"unknown message type {kind!r} (byte {types[bad]})"
    else:
        what = f"{kind!r} messages are {expected} bytes long, this one is {length}"
    raise _bad(path, bad, starts, what)


def _gather(buffer: NDArray[np.uint8], offsets: NDArray[np.int64]) -> NDArray[Any]:
    """The ``_WIDTH`` bytes from each of ``offsets``, as records of ``_ROW``."""
    windows = np.lib.stride_tricks.sliding_window_view(buffer, _WIDTH)
    return windows[offsets].view(_ROW)[:, 0]


# -- the stock -------------------------------------------------------------------------------
def _locates(
    path: Path,
    buffer: NDArray[np.uint8],
    starts: NDArray[np.int64],
    types: NDArray[np.uint8],
    locates: NDArray[np.uint16],
    stock: bytes,
) -> NDArray[np.int64]:
    """The locate codes of ``stock``: from the stock directory ('R'), or, in a file without
    one, from every message that names a stock."""
    kinds = ["R"] if (types == ord("R")).any() else list(_STOCK_AT)
    found, names = [], []
    for kind in kinds:
        at = np.flatnonzero(types == ord(kind))
        windows = np.lib.stride_tricks.sliding_window_view(buffer, 8)
        stocks = windows[starts[at] + _STOCK_AT[kind]].view("S8")[:, 0]
        # padded with spaces, as the specification has it (or with zeros, which NumPy drops)
        found.append(locates[at][(stocks == stock.ljust(8)) | (stocks == stock)])
        names.append(np.unique(stocks))
    ours = np.unique(np.concatenate(found))
    if not len(ours):
        present = np.unique(np.char.rstrip(np.concatenate(names), b" "))
        listed = ", ".join(name.decode("ascii", "replace") for name in present[:_SHOWN])
        more = f" and {len(present) - _SHOWN} more" if len(present) > _SHOWN else ""
        where = "its stock directory lists" if kinds == ["R"] else "its messages name"
        raise ValueError(
            f"{path}: no stock {stock.decode()!r} in the file ({where} "
            f"{len(present)}: {listed}{more})"
            if len(present)
            else f"{path}: no stock {stock.decode()!r} in the file (it names no stock)"
        )
    return ours


# -- the events ------------------------------------------------------------------------------
_STATES = np.zeros(256, np.int64)  # a trading action's state as a halt's price
_STATES[[ord("H"), ord("P")]] = HALTED
_STATES[ord("Q")] = QUOTING
_STATES[ord("T")] = RESUMED
_SIDE = np.full(256, NO_SIDE, np.int8)  # a buy/sell indicator's side
_SIDE[ord("B")], _SIDE[ord("S")] = BUY, SELL
_STATE_OK = np.zeros(256, bool)
_STATE_OK[[ord(c) for c in "HPQT"]] = True
_KINDS = {"A": ADD, "F": ADD, "E": EXECUTE, "C": EXECUTE, "X": CANCEL, "D": DELETE}
_KINDS |= {"U": DELETE, "P": TRADE, "Q": CROSS, "H": HALT}
_KIND = np.zeros(256, np.int8)  # a type's event kind (a replace's first)
for _type, _kind in _KINDS.items():
    _KIND[ord(_type)] = _kind


def _events(
    path: Path,
    rows: NDArray[Any],
    types: NDArray[np.uint8],
    messages: NDArray[np.int64],
    starts: NDArray[np.int64],
) -> NDArray[Any]:
    """The events of the stock's messages: ``rows`` (of ``types``), the file's ``messages``."""
    is_ = {kind: types == ord(kind) for kind in _KINDS}
    adds, replaces, crosses, halts = is_["A"] | is_["F"], is_["U"], is_["Q"], is_["H"]
    takes = is_["E"] | is_["C"] | is_["X"]  # shares off an order
    clock = (rows["clock"] & _CLOCK).astype(np.int64)
    ref = rows["ref"].astype(np.int64)
    letter = rows["side"]  # or a trading action's state
    shares = np.where(adds | is_["P"], rows["shares20"], rows["shares19"]).astype(np.int64)
    shares[replaces] = rows["shares27"][replaces]
    shares[crosses] = rows["ref"][crosses]  # a cross's shares: 8 bytes at offset 11
    price = np.where(replaces, rows["p31"], rows["p32"]).astype(np.int64)
    price[crosses] = rows["shares27"][crosses]  # and its price: 4 bytes at offset 27
    sides = _SIDE[letter]

    # the orders: each add, and each replace's new reference, by reference
    opens = np.flatnonzero(adds | replaces)
    open_ref = np.where(replaces[opens], rows["new_ref"][opens].astype(np.int64), ref[opens])
    by_ref = np.argsort(open_ref, kind="stable")  # references mostly rise: near linear
    sorted_refs = open_ref[by_ref]
    twice = np.zeros(len(opens), bool)
    twice[by_ref[1:]] = sorted_refs[1:] == sorted_refs[:-1]
    # each message that refers to an order: which one, among those opened before it
    refers = np.flatnonzero(takes | is_["D"] | replaces)
    order = np.zeros(len(refers), np.int64)
    known = np.zeros(len(refers), bool)
    if len(opens):
        slot = np.minimum(np.searchsorted(sorted_refs, ref[refers]), len(opens) - 1)
        order = by_ref[slot]
        known = (sorted_refs[slot] == ref[refers]) & (opens[order] < refers)
        order[~known] = 0
    # a replace's order is on its original's side: follow each chain back to its add
    root = np.arange(len(opens))
    chained = replaces[refers] & known
    root[np.searchsorted(opens, refers[chained])] = order[chained]
    while (root[root] != root).any():
        root = root[root]
    open_side = sides[opens][root]
    # the shares an order has left before each message that refers to it, and whether a
    # delete or replace (which end it) came before
    taken = np.where(takes[refers], shares[refers], 0)
    ends = ~takes[refers]
    left = np.zeros(len(refers), np.int64)
    ended = np.zeros(len(refers), bool)
    if len(refers) and len(opens):  # (with no order, every reference is unknown)
        grouped = np.argsort(order, kind="stable")
        first = np.ones(len(refers), bool)
        first[1:] = order[grouped][1:] != order[grouped][:-1]
        group = np.cumsum(first) - 1
        before = np.cumsum(taken[grouped]) - taken[grouped]
        left[grouped] = shares[opens][order[grouped]] - (before - before[first][group])
        prior = np.cumsum(ends[grouped]) - ends[grouped]
        ended[grouped] = prior - prior[first][group] > 0

    everyone = np.arange(len(types))
    backwards = np.zeros(len(types), bool)
    backwards[1:] = clock[1:] < clock[:-1]
    live = known & ~ended
    problem = _first(
        (everyone, clock >= DAY, lambda k: f"timestamp {clock[k]} ns is past midnight"),
        (
            everyone,
            backwards,
            lambda k: f"time goes backwards ({clock[k]} ns after {clock[k - 1]})",
        ),
        (
            everyone,
            (adds | is_["P"]) & (_SIDE[letter] == NO_SIDE),
            lambda k: f"buy/sell indicator {chr(letter[k])!r} is not 'B' or 'S'",
        ),
        (
            everyone,
            halts & ~_STATE_OK[letter],
            lambda k: f"trading state {chr(letter[k])!r} is not 'H', 'P', 'Q' or 'T'",
        ),
        (everyone, (adds | replaces) & (price == 0), lambda k: "an order at price 0"),
        (
            everyone,
            (adds | replaces | takes | is_["P"]) & (shares == 0),
            lambda k: f"{chr(types[k])!r} message of 0 shares",
        ),
        (opens, twice, lambda k: f"order reference {open_ref[_index(opens, k)]} is added twice"),
        (
            refers,
            ~known,
            lambda k: f"order reference {ref[k]} is unknown (no add or replace made it before)",
        ),
        (refers, known & ended, lambda k: f"order reference {ref[k]} was deleted or replaced"),
        (refers, live & (left == 0), lambda k: f"order reference {ref[k]} has no shares left"),
        (
            refers,
            live & (left > 0) & (taken > left),
            lambda k: (
                f"{shares[k]} shares off order reference {ref[k]}, which has "
                f"{left[_index(refers, k)]} left"
            ),
        ),
    )
    if problem is not None:
        raise _bad(path, int(messages[problem[0]]), starts, problem[1])

    # one event per message, two per replace (the delete, then the new order), none for a
    # cross of 0 shares
    side, size, order_id, level = sides, shares.copy(), ref, price.copy()
    side[refers] = open_side[order]
    side[crosses] = BUY
    side[halts] = NO_SIDE
    level[refers] = price[opens][order]  # the resting order's price
    level[halts] = _STATES[letter[halts]]
    size[refers] = np.where(ends, left, shares[refers])  # a delete takes what is left
    size[halts] = 0
    order_id[crosses | halts] = 0
    kept = ~(crosses & (shares == 0))
    opened = np.searchsorted(opens, np.flatnonzero(replaces))
    events = np.empty(int(kept.sum() + replaces.sum()), EVENT_DTYPE)
    _fill(
        events,
        kept,
        replaces,
        (clock, _KIND[types], order_id, side, level, size),
        (open_ref[opened], open_side[opened], price[replaces], shares[replaces]),
    )
    return events


@numba.njit(cache=True)  # type: ignore[misc]
def _fill(
    events: NDArray[Any],
    kept: NDArray[np.bool_],
    replaces: NDArray[np.bool_],
    columns: tuple[NDArray[Any], ...],
    new: tuple[NDArray[Any], ...],
) -> None:
    """Write the events, one row at a time: each ``kept`` message's, from ``columns`` (time,
    kind, order id, side, price, size), and after each replace's the add of its new order,
    from ``new`` (order id, side, price, size of each replace in turn). One pass over the
    events, where NumPy would make two per field (a gather, then a strided write)."""
    time, kind, order_id, side, price, size = columns
    new_id, new_side, new_price, new_size = new
    at = replaced = 0
    for k in range(len(kept)):
        if not kept[k]:
            continue
        event = events[at]
        event.time, event.kind, event.order_id = time[k], kind[k], order_id[k]
        event.side, event.price, event.size, event.flags = side[k], price[k], size[k], 0
        at += 1
        if replaces[k]:
            event = events[at]
            event.time, event.kind, event.order_id = time[k], ADD, new_id[replaced]
            event.side, event.price = new_side[replaced], new_price[replaced]
            event.size, event.flags = new_size[replaced], 0
            at += 1
            replaced += 1


def _index(where: NDArray[np.int64], k: int) -> int:
    """The position of ``k`` in the sorted ``where``."""
    return int(np.searchsorted(where, k))


def _first(*checks: tuple[NDArray[np.int64], NDArray[np.bool_], Any]) -> tuple[int, str] | None:
    """The first message (its index in ``where``'s terms) any check's mask flags, and what
    that check says of it."""
    hits = [(int(where[np.argmax(mask)]), what) for where, mask, what in checks if mask.any()]
    if not hits:
        return None
    at, what = min(hits, key=lambda hit: hit[0])
    return at, what(at)


# -- dates and errors ------------------------------------------------------------------------
def _name_midnight(name: str) -> int | None:
    """The midnight of the date a NASDAQ file name starts with (``MMDDYYYY.``), if it does."""
    match = _NAME_DATE.match(name)
    if match is None:
        return None
    month, day, year = (int(part) for part in match.groups())
    try:
        return midnight(datetime.date(year, month, day))
    except ValueError:
        return None


def _bad(path: Path, at: int, starts: NDArray[np.int64], what: str) -> ValueError:
    return ValueError(f"{path}: message {at + 1} (byte {int(starts[at]) - 2}): {what}")
