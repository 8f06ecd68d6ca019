"""One order-event schema for every data vendor: what each reader yields and the replay reads.

An event array is a NumPy structured array of ``EVENT_DTYPE``, one order-level event a row,
in exchange-time order:

- ``time``: nanoseconds since the Unix epoch (UTC), the exchange's timestamp. A source that
  names no date (a LOBSTER file read without its file name's date) counts from 1970-01-01.
- ``kind``: one of the kinds below. 1 to 7 mean what LOBSTER's message types 1 to 7 mean.
- ``order_id``: the venue's order id (0 where the event names no order).
- ``side``: ``BUY`` (0) or ``SELL`` (1): the side of the order the event names (for a
  trade, the resting side); ``NO_SIDE`` (-1) for halts and clears.
- ``price``: an integer in ``PRICE_UNITS`` per currency unit (1e-4, as LOBSTER and ITCH write
  prices); for a halt, its state (``HALTED``, ``QUOTING``, ``RESUMED``).
- ``size``: lots: added (``ADD``), taken off (``CANCEL``, ``EXECUTE``), traded (``TRADE``,
  ``CROSS``), or the order's new size (``MODIFY``).
- ``flags``: ``SNAPSHOT`` marks the events of a start-of-day snapshot (the opening book, every
  order by id), ``LAST`` the last event of a venue packet; other bits are 0.

A ``MODIFY`` keeps the order's place in its queue when it only lowers the size at the same
price; a new price or a larger size sends it to the back of the new level (the rule Databento
documents for MBO, and the one ``OrderBook.modify`` follows). A ``CLEAR`` empties the book.
"""

from __future__ import annotations

import datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob.book import BUY, SELL

EVENT_DTYPE = np.dtype(
    [
        ("time", np.int64),
        ("kind", np.int8),
        ("order_id", np.int64),
        ("side", np.int8),
        ("price", np.int64),
        ("size", np.int64),
        ("flags", np.uint8),
    ]
)
ADD, CANCEL, DELETE, EXECUTE, TRADE, CROSS, HALT, MODIFY, CLEAR = range(1, 10)
KINDS = {
    ADD: "add",
    CANCEL: "cancel",
    DELETE: "delete",
    EXECUTE: "execute",
    TRADE: "trade",
    CROSS: "cross",
    HALT: "halt",
    MODIFY: "modify",
    CLEAR: "clear",
}
NO_SIDE = -1
HALTED, QUOTING, RESUMED = -1, 0, 1  # a halt's price: the state trading enters
SNAPSHOT, LAST = 1 << 5, 1 << 7  # flags (the bits Databento uses for them)
PRICE_UNITS = 10_000  # integer price units per currency unit
NANOSECONDS = 1_000_000_000
DAY = 86_400 * NANOSECONDS

__all__ = [
    "ADD",
    "CANCEL",
    "CLEAR",
    "CROSS",
    "DAY",
    "DELETE",
    "EVENT_DTYPE",
    "EXECUTE",
    "HALT",
    "HALTED",
    "KINDS",
    "LAST",
    "MODIFY",
    "NANOSECONDS",
    "NO_SIDE",
    "PRICE_UNITS",
    "QUOTING",
    "RESUMED",
    "SELL",
    "SNAPSHOT",
    "TRADE",
    "BUY",
    "check_events",
    "empty",
    "first_problem",
    "is_event_array",
    "midnight",
]


def empty(n: int) -> NDArray[Any]:
    """``n`` zeroed events, for a reader to fill field by field."""
    return np.zeros(n, EVENT_DTYPE)


def check_events(events: Any, source: object = "events") -> NDArray[Any]:
    """``events`` if it is a well-formed event array, else a ValueError (TypeError for another
    type) naming ``source``, the first bad event's index and what is wrong with it."""
    if not isinstance(events, np.ndarray) or events.dtype != EVENT_DTYPE:
        raise TypeError(
            f"{source}: expected an array of sekai.finance.lob.events.EVENT_DTYPE, got "
            f"{getattr(events, 'dtype', type(events).__name__)}"
        )
    # a quick look at each block (with the event before it, for time); the rules' own masks,
    # over the whole array, only once it finds something
    for start in range(0, len(events), _BLOCK):
        if _maybe_bad(events[max(start - 1, 0) : start + _BLOCK]):
            problem = first_problem(*_problems(events))
            if problem is not None:
                raise ValueError(f"{source}: event {problem[0]}: {problem[1]}")
    return events


def _problems(events: NDArray[Any]) -> tuple[tuple[NDArray[np.bool_], str], ...]:
    """Every rule of the schema: where ``events`` breaks it, and what it says."""
    kind, side, size = events["kind"], events["side"], events["size"]
    time, price = events["time"], events["price"]
    backwards = np.zeros(len(events), bool)
    backwards[1:] = time[1:] < time[:-1]
    on_book = (kind >= ADD) & (kind <= CROSS) | (kind == MODIFY)
    return (
        ((kind < ADD) | (kind > CLEAR), "unknown event kind"),
        (on_book & (side != BUY) & (side != SELL), "side must be BUY (0) or SELL (1)"),
        (((kind == HALT) | (kind == CLEAR)) & (side != NO_SIDE), "a halt or clear has no side"),
        (on_book & (kind != MODIFY) & (size <= 0), "size must be positive"),
        ((kind == MODIFY) & (size < 0), "a modify's new size must not be negative"),
        (on_book & (kind != TRADE) & (kind != CROSS) & (price <= 0), "price must be positive"),
        (
            (kind == HALT) & (price != HALTED) & (price != QUOTING) & (price != RESUMED),
            "a halt's price must be -1 (halted), 0 (quoting) or 1 (resumed)",
        ),
        (backwards, "time goes backwards"),
    )


# The same rules as tables by kind (its byte, 0 to 255), for a quick look at a block of
# events that reads each field once: a kind and side pair allowed (unknown kinds: none), and
# the least size, least price and greatest price a kind allows.
_BLOCK = 1 << 16  # events a block: its temporaries stay in the cache
_LOWEST, _HIGHEST = np.iinfo(np.int64).min, np.iinfo(np.int64).max
_KIND_SIDE = np.zeros(1 << 16, bool)  # by kind << 8 | side's byte
_LEAST_SIZE = np.full(256, _LOWEST, np.int64)
_LEAST_PRICE = np.full(256, _LOWEST, np.int64)
_MOST_PRICE = np.full(256, _HIGHEST, np.int64)
for _kind in (ADD, CANCEL, DELETE, EXECUTE, TRADE, CROSS, MODIFY):  # on the book
    _KIND_SIDE[[_kind << 8 | BUY, _kind << 8 | SELL]] = True
    _LEAST_SIZE[_kind] = 0 if _kind == MODIFY else 1
    _LEAST_PRICE[_kind] = _LOWEST if _kind in (TRADE, CROSS) else 1
for _kind in (HALT, CLEAR):
    _KIND_SIDE[_kind << 8 | NO_SIDE & 0xFF] = True
_LEAST_PRICE[HALT], _MOST_PRICE[HALT] = HALTED, RESUMED


def _maybe_bad(events: NDArray[Any]) -> bool:
    """Whether ``events`` breaks a rule of ``_problems``: the same rules, looked up by kind."""
    kind = events["kind"].view(np.uint8).astype(np.intp)
    bad = ~_KIND_SIDE.take(kind << 8 | events["side"].view(np.uint8))
    bad |= events["size"] < _LEAST_SIZE.take(kind)
    price = events["price"]
    bad |= (price < _LEAST_PRICE.take(kind)) | (price > _MOST_PRICE.take(kind))
    time = events["time"]
    return bool(bad.any() or (time[1:] < time[:-1]).any())


def first_problem(*conditions: tuple[Any, str]) -> tuple[int, str] | None:
    """The first row where any condition (a boolean mask) holds, and the first condition's
    text there: how every reader names the first bad record of a file."""
    hits = [(int(np.argmax(mask)), what) for mask, what in conditions if mask.any()]
    if not hits:
        return None
    return min(hits, key=lambda hit: hit[0])


def midnight(date: object) -> int:
    """Nanoseconds from the epoch to midnight (UTC) of ``date``, a ``datetime.date`` or a
    ``'YYYY-MM-DD'`` string: where a reader's day starts when its times count from midnight."""
    if isinstance(date, str):
        try:
            date = datetime.date.fromisoformat(date)
        except ValueError:
            raise ValueError(f"date must be 'YYYY-MM-DD', got {date!r}") from None
    if not isinstance(date, datetime.date):
        raise TypeError(f"date must be a datetime.date or 'YYYY-MM-DD', got {type(date).__name__}")
    day = datetime.date(date.year, date.month, date.day)
    return (day - datetime.date(1970, 1, 1)).days * DAY


def is_event_array(value: object) -> bool:
    """Whether ``value`` is an array of ``EVENT_DTYPE``."""
    return isinstance(value, np.ndarray) and value.dtype == EVENT_DTYPE
