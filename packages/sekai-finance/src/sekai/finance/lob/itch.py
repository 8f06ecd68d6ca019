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

from sekai.finance.lob._paths import local_file
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
_PAD = 3  # zero bytes after the file's: the walk reads a message's first 3 bytes
_STOCK_AT = {"R": 11, "H": 11, "A": 24, "F": 24, "P": 24, "Q": 19}  # a stock field's offset
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
    local = local_file(path)
    if day_start is None:
        day_start = _name_midnight(local.name)
    buffer, size = _read(local)
    starts, types, locates = _frame(local, buffer, size)
    wanted = np.zeros(1 << 16, bool)
    wanted[_locates(local, buffer, starts, types, locates, stock)] = True
    messages = np.flatnonzero(_READ[types] & wanted[locates])
    events = _events(local, buffer, starts, messages, np.bincount(types[messages], minlength=256))
    if day_start is not None:
        events["time"] += day_start
    return check_events(events, path)


# -- reading and framing ---------------------------------------------------------------------
def _read(path: Path) -> tuple[NDArray[np.uint8], int]:
    """The file's bytes (decompressed if ``.gz``) with ``_PAD`` zeros after them, and how many
    bytes are the file's."""
    if path.suffix.lower() == ".gz":
        with gzip.open(path, "rb") as file:
            data = file.read()
        buffer = np.zeros(len(data) + _PAD, np.uint8)
        buffer[: len(data)] = np.frombuffer(data, np.uint8)
        return buffer, len(data)
    size = path.stat().st_size
    buffer = np.zeros(size + _PAD, np.uint8)
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
_A, _F, _E, _C, _X, _D, _U, _P, _Q, _H = (ord(c) for c in "AFECXDUPQH")

# the problems the walk over the stock's messages finds, in the order it looks for them, and
# what each says of the (up to) three numbers it returns with it
_PAST_MIDNIGHT, _BACKWARDS, _NO_SIDE, _NO_STATE, _PRICE_0, _SHARES_0 = range(1, 7)
_TWICE, _UNKNOWN, _ENDED, _USED_UP, _TOO_MANY = range(7, 12)
_PROBLEMS = {
    _PAST_MIDNIGHT: lambda a, b, c: f"timestamp {a} ns is past midnight",
    _BACKWARDS: lambda a, b, c: f"time goes backwards ({a} ns after {b})",
    _NO_SIDE: lambda a, b, c: f"buy/sell indicator {chr(a)!r} is not 'B' or 'S'",
    _NO_STATE: lambda a, b, c: f"trading state {chr(a)!r} is not 'H', 'P', 'Q' or 'T'",
    _PRICE_0: lambda a, b, c: "an order at price 0",
    _SHARES_0: lambda a, b, c: f"{chr(a)!r} message of 0 shares",
    _TWICE: lambda a, b, c: f"order reference {a} is added twice",
    _UNKNOWN: lambda a, b, c: f"order reference {a} is unknown (no add or replace made it before)",
    _ENDED: lambda a, b, c: f"order reference {a} was deleted or replaced",
    _USED_UP: lambda a, b, c: f"order reference {a} has no shares left",
    _TOO_MANY: lambda a, b, c: f"{a} shares off order reference {b}, which has {c} left",
}
# the orders, by reference, in an open-addressing table (linear probing), a row a slot: the
# reference, the order's price, the shares it has left and its state (0: an empty slot)
_KEY, _PRICE, _LEFT, _STATE = range(4)
_OPEN, _SELL, _OVER = 1, 2, 4  # state bits: a slot in use, a sell order, deleted or replaced
_MIX = -7046029254386353131  # 0x9E3779B97F4A7C15 as an int64, for Fibonacci hashing


def _events(
    path: Path,
    buffer: NDArray[np.uint8],
    starts: NDArray[np.int64],
    messages: NDArray[np.int64],
    counts: NDArray[np.int64],
) -> NDArray[Any]:
    """The events of the file's ``messages`` (the stock's, of the types read; ``counts`` of
    them by type byte): one per message, two per replace (the delete, then the new order),
    none for a cross of 0 shares. A ValueError for the first message that breaks a rule."""
    orders = int(counts[_A] + counts[_F] + counts[_U])
    bits = max(4, (orders + orders // 2).bit_length())  # at most 2/3 full
    table = np.zeros((1 << bits, 4), np.int64)
    events = np.empty(len(messages) + int(counts[_U]), EVENT_DTYPE)
    written, bad, problem, a, b, c = _decode(buffer, starts, messages, table, bits, events)
    if bad >= 0:
        raise _bad(path, int(messages[bad]), starts, _PROBLEMS[problem](a, b, c))
    return events if written == len(events) else events[:written].copy()


@numba.njit(cache=True)  # type: ignore[misc]
def _big(buffer: NDArray[np.uint8], at: int, width: int) -> int:
    """The big-endian unsigned integer of ``width`` bytes from ``at``, as an int64 (an 8-byte
    one of 2**63 or more wraps around, as NumPy's cast does)."""
    value = 0
    for k in range(width):
        value = value << 8 | int(buffer[at + k])
    return value


@numba.njit(cache=True)  # type: ignore[misc]
def _slot(table: NDArray[np.int64], key: int, bits: int) -> int:
    """The slot of order reference ``key``, or the empty one where it would go. A reference's
    low bits, with its high bits folded in: references mostly rise, so the orders alive at
    once sit close in the table (the cache holds them), and references a power of two apart
    still spread over every slot."""
    mask = (1 << bits) - 1
    slot = (key ^ ((key >> bits) * _MIX) >> (64 - bits)) & mask
    while table[slot, _STATE] != 0 and table[slot, _KEY] != key:
        slot = (slot + 1) & mask
    return slot


@numba.njit(cache=True)  # type: ignore[misc]
def _decode(
    buffer: NDArray[np.uint8],
    starts: NDArray[np.int64],
    messages: NDArray[np.int64],
    table: NDArray[np.int64],
    bits: int,
    events: NDArray[Any],
) -> tuple[int, int, int, int, int, int]:
    """Decode the ``messages`` (offsets in ``starts`` into ``buffer``) in file order, follow
    their orders in ``table`` (empty, ``1 << bits`` rows) and write their events. Each message
    is checked as it comes, in the order the problems are numbered: the first that breaks a
    rule stops the walk. How many events were written, the first bad message (its position in
    ``messages``, -1 if none), its problem's code and up to three numbers the problem names."""
    at = 0
    last = 0
    for i in range(len(messages)):
        start = starts[messages[i]]
        kind = buffer[start]
        clock = _big(buffer, start + 5, 6)
        if clock >= DAY:
            return at, i, _PAST_MIDNIGHT, clock, 0, 0
        if i > 0 and clock < last:
            return at, i, _BACKWARDS, clock, last, 0
        last = clock
        ref = _big(buffer, start + 11, 8)  # a cross's shares
        side, price, shares, new_ref = NO_SIDE, 0, 0, 0
        if kind in (_A, _F, _P):
            letter = buffer[start + 19]
            side = _SIDE[letter]
            if side == NO_SIDE:
                return at, i, _NO_SIDE, letter, 0, 0
            shares, price = _big(buffer, start + 20, 4), _big(buffer, start + 32, 4)
        elif kind == _H:
            letter = buffer[start + 19]
            if not _STATE_OK[letter]:
                return at, i, _NO_STATE, letter, 0, 0
            price = _STATES[letter]
        elif kind == _U:
            new_ref = _big(buffer, start + 19, 8)
            shares, price = _big(buffer, start + 27, 4), _big(buffer, start + 31, 4)
        elif kind == _Q:
            shares, price = ref, _big(buffer, start + 27, 4)
        elif kind != _D:  # E, C, X: shares off an order
            shares = _big(buffer, start + 19, 4)
        adds = kind in (_A, _F)
        if (adds or kind == _U) and price == 0:
            return at, i, _PRICE_0, 0, 0, 0
        if kind != _D and kind != _Q and kind != _H and shares == 0:
            return at, i, _SHARES_0, kind, 0, 0
        slot = -1  # where a new order goes
        if adds or kind == _U:
            slot = _slot(table, new_ref if kind == _U else ref, bits)
            if table[slot, _STATE] != 0:
                return at, i, _TWICE, new_ref if kind == _U else ref, 0, 0
        event = events[at]
        event.time, event.kind, event.order_id, event.flags = clock, _KIND[kind], ref, 0
        if kind in (_E, _C, _X, _D, _U):
            order = _slot(table, ref, bits)
            state, left = table[order, _STATE], table[order, _LEFT]
            if state == 0:
                return at, i, _UNKNOWN, ref, 0, 0
            if state & _OVER:
                return at, i, _ENDED, ref, 0, 0
            if left == 0:
                return at, i, _USED_UP, ref, 0, 0
            side = (state & _SELL) // _SELL  # BUY 0, SELL 1
            event.side, event.price = side, table[order, _PRICE]
            if kind in (_D, _U):  # the shares it has left go
                event.size = left
                table[order, _STATE] = state | _OVER
            else:
                if shares > left:
                    return at, i, _TOO_MANY, shares, ref, left
                event.size = shares
                table[order, _LEFT] = left - shares
            at += 1
            if kind == _U:  # the new order, on the old one's side
                event = events[at]
                event.time, event.kind, event.order_id, event.flags = clock, ADD, new_ref, 0
                event.side, event.price, event.size = side, price, shares
                at += 1
        elif kind == _Q:
            if shares != 0:  # a cross of 0 shares traded nothing
                event.order_id, event.side, event.price, event.size = 0, BUY, price, shares
                at += 1
        elif kind == _H:
            event.order_id, event.side, event.price, event.size = 0, NO_SIDE, price, 0
            at += 1
        else:  # A, F, P
            event.side, event.price, event.size = side, price, shares
            at += 1
        if slot >= 0:  # an add or a replace's new order
            table[slot, _KEY] = new_ref if kind == _U else ref
            table[slot, _PRICE], table[slot, _LEFT] = price, shares
            table[slot, _STATE] = _OPEN | (_SELL if side == SELL else 0)
    return at, -1, 0, 0, 0, 0


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
