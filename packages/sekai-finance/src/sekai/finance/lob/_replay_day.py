"""A day of order events (any reader's; LOBSTER messages are converted) replayed once into
the arrays every replay window indexes (see ``_replay_windows``): per replay message
(``_replay_stream``) its kind, side, tick, lots moved and the arrival of the order it names;
the best bid and ask ticks and the halt state before each message; per (side, tick) the
messages there and the lots after each (``_replay_levels``), from which the top levels before
any message and the depth an agent order joins behind are looked up (``_replay_levels``).
Each array is as narrow as it can be (``_replay_levels.narrow``): a day holds about 37 bytes
a message, about its event table (35 bytes an event)."""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob import events as _events
from sekai.finance.lob._replay_kernel import FIX_FIELDS, replay_record
from sekai.finance.lob._replay_levels import TopLevels, level_history, narrow, tick_dtype
from sekai.finance.lob._replay_stream import (
    ReplayStream,
    opening_lots,
    replay_stream,
    rows_by_time,
    stream_ticks,
)
from sekai.finance.lob.book import BUY
from sekai.finance.lob.events import EXECUTE, HALT, RESUMED
from sekai.finance.lob.events import TRADE as EXECUTE_HIDDEN
from sekai.finance.lob.files import format_of, read_events
from sekai.finance.lob.lobster import (
    MESSAGE_DTYPE,
    read_orderbook,
    to_events,
)

TICK_MARGIN = 16  # ticks of room past the day's extreme prices, for agent quotes


class LoadedDay(NamedTuple):
    """A day read (``load_day``): its replay stream, and the level rows it is reconciled
    with (None: none) and which events they check (None: every event)."""

    stream: ReplayStream
    rows: NDArray[Any] | None
    checked: NDArray[np.bool_] | None


class ReplayDay:
    """``messages`` (events, LOBSTER messages or a file's path, see ``load_day``) replayed
    from an empty book, or with ``orderbook`` rows one per event (LOBSTER's), from the
    opening book the first row gives, with ``levels`` top levels recorded before every
    replay message (``top``, looked up when indexed). Prices map to ticks as ``lobster.replay``'s
    (``(price - price_offset) // tick``); ``n_ticks`` defaults to the highest tick of the day
    plus ``TICK_MARGIN``. With ``orderbook``, the replay is reconciled with its rows after
    every message as ``lobster.replay(..., orderbook=...)`` is: ``reconciliations`` counts
    the messages that needed it (0 without rows), and the corrections reach the windows'
    queues (``fix_*``: per correction, the message it follows, the side, tick, lots and the
    arrival of the order cancelled, -1 for legacy; those after message k at
    ``fix_starts[k]:fix_starts[k + 1]``)."""

    def __init__(
        self,
        messages: Any,
        orderbook: Any = None,
        *,
        tick: int = 100,
        price_offset: int = 0,
        n_ticks: int | None = None,
        levels: int = 5,
    ) -> None:
        stream, orderbook, checked = load_day(messages, orderbook)
        if n_ticks is None:
            n_ticks = highest_tick(stream, orderbook, tick, price_offset) + TICK_MARGIN
        stream_ticks(stream, tick, price_offset, n_ticks)  # before the opening book reads them
        opening = np.zeros((2, n_ticks), np.int64)
        if orderbook is not None and checked is None:
            opening = opening_lots(stream, orderbook, tick, price_offset, n_ticks)
        record = replay_record(
            stream,
            opening,
            n_ticks=n_ticks,
            tick=tick,
            price_offset=price_offset,
            levels=1,
            orderbook=orderbook,
            checked=checked,
        )
        self.n_ticks, self.tick, self.price_offset = n_ticks, tick, price_offset
        self.levels = levels
        self.time = stream.time
        self.kinds = record.kinds.astype(np.int8)
        self.sides = record.sides.astype(np.int32)  # int32: side * n_ticks + tick stays exact
        self.ticks = record.ticks.astype(tick_dtype(n_ticks))  # a halt's state fits too
        self.best = record.top[:, :, 0, 0].astype(tick_dtype(n_ticks))  # (n + 1, 2)
        self.lots = narrow(np.where(record.kinds == EXECUTE_HIDDEN, stream.sizes, record.lots))
        self.arrival = narrow(record.arrival)
        self.halted = _halted(record.kinds, record.ticks)
        self.opening = opening
        self.reconciliations = record.reconciliations
        self.crossings = len(record.crossings)  # levels a submission crossing the book took
        fixes = record.fixes
        self.fix_after, self.fix_sides, self.fix_ticks, self.fix_lots, self.fix_arrival = (
            np.ascontiguousarray(fixes[:, column]) for column in range(FIX_FIELDS)
        )
        # message indices as ``ReplayDays`` joins them (``_concat``): one day's tape and many
        # days' have the same dtypes, so the windows' kernels compile once for both
        self.fix_after, self.fix_arrival = narrow(self.fix_after), narrow(self.fix_arrival)
        changes = np.concatenate((fixes, record.crossings))
        self.starts, self.level_messages, self.level_lots = level_history(
            self.kinds, self.sides, self.ticks, self.lots, opening, changes
        )
        self.top = TopLevels(
            self.best, self.starts, self.level_messages, self.level_lots, opening, levels
        )
        trades = np.flatnonzero((record.kinds >= EXECUTE) & (record.kinds < HALT))
        # the side that took liquidity: the other side of the executed order
        self.trade_signs = np.where(self.sides[trades] == BUY, -1, 1).astype(np.int8)
        self.trade_sizes = narrow(stream.sizes[trades])
        self.trades = narrow(trades)

    @property
    def fix_starts(self) -> NDArray[np.int64]:
        """(n + 1,): the corrections after message k are ``fix_starts[k]:fix_starts[k + 1]``
        (computed when asked: the windows walk ``fix_after`` instead)."""
        return np.searchsorted(self.fix_after, np.arange(len(self.kinds) + 1))

    def __len__(self) -> int:
        return len(self.time)

    def tape(self, price: NDArray[np.float64]) -> tuple[Any, ...]:
        """The arrays ``_replay_windows`` reads, in its order, with ``price`` per tick."""
        return (
            self.kinds,
            self.sides,
            self.ticks,
            self.lots,
            self.arrival,
            self.best,
            price,
            self.halted,
            self.starts,
            self.level_messages,
            self.level_lots,
            self.opening,
            self.fix_after,
            self.fix_sides,
            self.fix_ticks,
            self.fix_lots,
            self.fix_arrival,
            self.top.bounds,
            self.levels,
        )


def load_day(messages: Any, orderbook: Any, symbol: str | None = None) -> LoadedDay:
    """A day read from files where paths are given. ``messages`` is an event array
    (``events.EVENT_DTYPE``, any reader's), an array of LOBSTER messages
    (``lobster.MESSAGE_DTYPE``), or the path of a file ``files.read_events`` reads
    (``symbol``: the instrument of a file of several). ``orderbook`` is None, level rows one
    per event (``lobster.read_orderbook``'s) or a LOBSTER orderbook file's path, or rows
    stamped with their own times: Databento MBP-1/MBP-10 (``databento.read_dbn_levels``'s,
    or a ``.dbn``/``.dbn.zst`` path), which check the book at the end of each timestamp
    (``_replay_stream.rows_by_time``)."""
    if isinstance(messages, LoadedDay):
        return messages
    if isinstance(messages, str | os.PathLike):
        events = read_events(messages, symbol=symbol)
    elif isinstance(messages, np.ndarray) and messages.dtype == MESSAGE_DTYPE:
        events = to_events(messages)
    elif _events.is_event_array(messages):
        events = messages
    else:
        raise TypeError(
            "messages must be an array of sekai.finance.lob.events.EVENT_DTYPE, a file's path "
            "(LOBSTER, ITCH, DBN) or an array of sekai.finance.lob.lobster.MESSAGE_DTYPE, "
            f"got {type(messages).__name__}"
        )
    if len(events) < 2:
        raise ValueError(f"messages must hold at least 2 messages, got {len(events)}")
    stream = replay_stream(events)
    if isinstance(orderbook, str | os.PathLike):
        if format_of(orderbook) != "dbn":
            return LoadedDay(stream, read_orderbook(orderbook), None)
        from sekai.finance.lob.databento import read_dbn_levels

        orderbook = read_dbn_levels(orderbook, symbol=symbol)
    from sekai.finance.lob.databento import DbnLevels

    if isinstance(orderbook, DbnLevels):
        rows, checked = rows_by_time(events["time"], orderbook.time, orderbook.rows, stream.source)
        return LoadedDay(stream, rows, checked)
    return LoadedDay(stream, orderbook, None)


def highest_tick(
    stream: ReplayStream, orderbook: NDArray[Any] | None, tick: int, price_offset: int
) -> int:
    """The highest tick a day's messages or orderbook rows name, plus one (at least 1)."""
    prices = stream.prices[stream.kinds < HALT]
    highest = int(prices.max(initial=price_offset))
    if orderbook is not None:
        for name in ("ask", "bid"):
            full = orderbook[name + "_size"] > 0
            highest = max(highest, int(orderbook[name + "_price"][full].max(initial=0)))
    return max((highest - price_offset) // tick, 0) + 1


def _halted(kinds: NDArray[np.int64], ticks: NDArray[np.int64]) -> NDArray[np.bool_]:
    """(n + 1,): whether trading is halted before message k (a halt message's price is kept
    as its tick: -1 halt and 0 quoting halt trading, 1 resumes it)."""
    halts = np.flatnonzero(kinds == HALT)
    state = np.zeros(len(kinds) + 1, np.int8)  # 0: no halt message yet
    marks = np.zeros(len(kinds) + 1, np.int64)
    marks[halts + 1] = halts + 1
    np.maximum.accumulate(marks, out=marks)
    state[halts + 1] = np.where(ticks[halts] == RESUMED, 1, 2)
    return state[marks] == 2  # type: ignore[no-any-return]
