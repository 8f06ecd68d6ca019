"""A set of days as one tape for the replay windows (``_replay_windows``, unchanged).

Order ids and times restart every day, so the raw events are never concatenated: each day is
replayed once on its own (``ReplayDay``), on one tick grid for the set, and the replayed tapes
are joined, the arrival indices offset by the day's first message. One padding message, which
no window replays, lies between two days, so that the book after a day's last message has an
index of its own. Windows never cross a day's end: every lookup of a message by time is
confined to the window's day (``ReplayDays.after``).

Days given as data are all replayed at once. Days of a Parquet store (``ReplayDays.stored``)
are replayed when a window first needs them: the tape joins the days in use only
(``resident``), and ``use`` swaps days in and out, saying how far each kept day's messages
moved so that the windows' indices can follow. A day's replay makes several times the
memory it keeps in passing: after days are replayed, the memory freed is given back to the
system (``_give_back``), so that the process holds about what the tape holds."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob import events as _events
from sekai.finance.lob._replay_day import TICK_MARGIN, ReplayDay, highest_tick, load_day
from sekai.finance.lob._replay_levels import TopLevels, narrow
from sekai.finance.lob._search import search_after

PADDING = 0  # the padding message's type: with 0 lots, the windows' kernel ignores it


class ReplayDays:
    """``messages``: one day (what ``load_day`` takes: events, LOBSTER messages or a LOBSTER
    file's path) or a list or tuple of days; ``orderbook``: None, or what ``ReplayDay`` takes
    for one day, or (with a list of days) a list of one item per day, each None, a path or
    rows. Every day is replayed once by ``ReplayDay`` on one grid of ``n_ticks`` ticks (by
    default the highest tick of any day plus ``TICK_MARGIN``). ``self[d]`` is day d's
    ``ReplayDay``; the attributes are the joined arrays ``_replay_windows`` reads (see
    ``tape``), with day d's messages at ``firsts[d]:ends[d]`` (its book after the last one
    at ``top[ends[d]]``; ``top`` is looked up when indexed, as ``ReplayDay``'s)."""

    def __init__(
        self,
        messages: Any,
        orderbook: Any = None,
        *,
        symbol: str | None = None,
        tick: int = 100,
        price_offset: int = 0,
        n_ticks: int | None = None,
        levels: int = 5,
    ) -> None:
        sources = _sources(messages, orderbook)
        several = isinstance(messages, list | tuple)
        loaded = []
        for d, (day_messages, day_orderbook) in enumerate(sources):
            with _naming(d, day_messages, several):
                loaded.append(load_day(day_messages, day_orderbook, symbol))
        if n_ticks is None:
            n_ticks = TICK_MARGIN + max(
                highest_tick(day.stream, day.rows, tick, price_offset) for day in loaded
            )
        days = []
        for d, day in enumerate(loaded):
            with _naming(d, sources[d][0], several):
                days.append(
                    ReplayDay(
                        day,
                        tick=tick,
                        price_offset=price_offset,
                        n_ticks=n_ticks,
                        levels=levels,
                    )
                )
        self.n_ticks, self.tick, self.price_offset = n_ticks, tick, price_offset
        self.levels = levels
        self.first_times = np.array([day.time[0] for day in days])
        self.last_times = np.array([day.time[-1] for day in days])
        self._replayed: dict[int, ReplayDay] = dict(enumerate(days))
        self._loaders: Sequence[Callable[[], ReplayDay]] = ()
        self.dates: list[Any] = [None] * len(days)  # a stored day's date
        self._join()

    @classmethod
    def stored(
        cls,
        root: str | os.PathLike[str],
        symbol: str,
        dates: Any = None,
        *,
        tick: int = 100,
        price_offset: int = 0,
        n_ticks: int | None = None,
        levels: int = 5,
    ) -> ReplayDays:
        """``symbol``'s days of the Parquet event store at ``root`` (``lob.store``): all of
        them, a list of dates, or a ``(first, last)`` tuple of dates, both included. Only the
        files' statistics are read here; a day is read and replayed when ``use`` needs it."""
        from sekai.finance.lob import store

        chosen = _chosen_dates(store.days(root, symbol), dates, root, symbol)
        spans = [store.day_span(root, symbol, date) for date in chosen]
        if n_ticks is None:
            highest = max(span.highest_price for span in spans)
            n_ticks = TICK_MARGIN + max((highest - price_offset) // tick, 0) + 1
        self = cls.__new__(cls)
        self.n_ticks, self.tick, self.price_offset = n_ticks, tick, price_offset
        self.levels = levels
        # seconds after each day's midnight, as its replay's times count (ReplayStream)
        first, last = (
            np.array([getattr(s, f) for s in spans]) for f in ("first_time", "last_time")
        )
        midnight = first // _events.DAY * _events.DAY
        self.first_times = (first - midnight) / _events.NANOSECONDS
        self.last_times = (last - midnight) / _events.NANOSECONDS

        def loader(date: Any) -> Callable[[], ReplayDay]:
            def load() -> ReplayDay:
                events = store.read_day(root, symbol, date)
                return ReplayDay(
                    events, tick=tick, price_offset=price_offset, n_ticks=n_ticks, levels=levels
                )

            return load

        self._loaders = [loader(date) for date in chosen]
        self._replayed = {}
        self.dates = chosen
        self.firsts = np.full(len(chosen), -1, np.int64)  # no day on the tape yet
        self.use([0])
        return self

    @property
    def resident(self) -> list[int]:
        """The days the tape holds now, in order."""
        return sorted(self._replayed)

    def use(self, needed: Any) -> NDArray[np.int64] | None:
        """Make the tape hold exactly the days ``needed`` (day indices), replaying those it
        lacks and dropping the others; None if it holds them already, else per day how far
        its messages moved on the tape (0 for a day not held before or after)."""
        wanted = sorted({int(d) for d in np.ravel(needed)})
        if not self._loaders or wanted == self.resident:
            return None
        before = self.firsts.copy()
        replayed = {d: self._replayed[d] for d in wanted if d in self._replayed}
        for d in wanted:
            if d not in replayed:
                with _naming(d, self.dates[d], True):
                    replayed[d] = self._loaders[d]()
        # only now, every day replayed: a day that fails to load leaves the tape as it was
        self._replayed = replayed
        self._join()
        _give_back()
        return np.where((before >= 0) & (self.firsts >= 0), self.firsts - before, 0)

    def __len__(self) -> int:
        return len(self.first_times)

    def __getitem__(self, d: int) -> ReplayDay:
        """Day ``d`` replayed (a stored day not on the tape is replayed for the asking)."""
        if d in self._replayed:
            return self._replayed[d]
        if not 0 <= d < len(self):
            raise IndexError(f"day {d} of a set of {len(self)}")
        return self._loaders[d]()

    def __iter__(self) -> Iterator[ReplayDay]:
        return (self[d] for d in range(len(self)))

    def _join(self) -> None:
        """The joined arrays of the days on the tape; ``firsts``/``ends`` per day of the set
        (-1 for a day not on it)."""
        numbers = self.resident
        days = [self._replayed[d] for d in numbers]
        lengths = np.array([len(day) for day in days], np.int64)
        joined_firsts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1])).astype(np.int64)
        self.firsts = np.full(len(self), -1, np.int64)
        self.ends = np.full(len(self), -1, np.int64)
        self.firsts[numbers] = joined_firsts
        self.ends[numbers] = joined_firsts + lengths
        firsts = joined_firsts

        def parts(name: str) -> list[NDArray[Any]]:
            return [getattr(day, name) for day in days]

        # per message, a padding entry between days (the padding message's type and lots: 0)
        self.kinds, self.sides, self.ticks, self.lots = (
            _concat(parts(name), pad=PADDING) for name in ("kinds", "sides", "ticks", "lots")
        )
        self.time = _concat(parts("time"), pad=np.inf)  # no window's search reaches the padding
        self.arrival = _concat(parts("arrival"), firsts, pad=-1)
        # per message and after the day's last: n + 1 a day, the padding's row the day's last
        self.best, self.halted = _concat(parts("best")), _concat(parts("halted"))
        self.fix_after = _concat(parts("fix_after"), firsts)
        self.fix_sides, self.fix_ticks, self.fix_lots = (
            _concat(parts(name)) for name in ("fix_sides", "fix_ticks", "fix_lots")
        )
        self.fix_arrival = _concat(parts("fix_arrival"), firsts)
        self.trades = _concat(parts("trades"), firsts)
        self.trade_signs, self.trade_sizes = (
            _concat(parts("trade_signs")),
            _concat(parts("trade_sizes")),
        )
        self.trade_floors = np.full(len(self), 0, np.int64)
        self.trade_floors[numbers] = np.searchsorted(self.trades, firsts)
        self.opening = days[0].opening
        self.starts, self.level_messages, self.level_lots = _joined_levels(days, firsts)
        self.top = TopLevels(
            self.best, self.starts, self.level_messages, self.level_lots, self.opening, self.levels
        )

    def after(
        self,
        day: NDArray[np.int64],
        times: NDArray[np.float64],
        near: NDArray[np.int64] | None = None,
    ) -> NDArray[np.int64]:
        """Per window of day ``day[w]``, the index of the first message of that day stamped
        after ``times[w]`` (``(W,)`` or ``(W, A)``): the day's first message before it starts,
        ``ends[day]`` past its last message. ``near[w]``, a message of the window's day the
        answers lie close to (its cursor, say), makes the search gallop out from there: a
        window steps through a few messages, a binary search over the day costs a cache
        miss a halving."""
        return search_after(self.time, self.firsts, self.ends, day, times, near)

    fix_starts = ReplayDay.fix_starts  # the joined tape's, computed when asked

    def tape(self, price: NDArray[np.float64]) -> tuple[Any, ...]:
        """The joined arrays ``_replay_windows`` reads, in ``ReplayDay.tape``'s order (the
        layout is written once, there), with ``price`` per tick."""
        return ReplayDay.tape(self, price)  # type: ignore[arg-type]


def _sources(messages: Any, orderbook: Any) -> list[tuple[Any, Any]]:
    """(messages, orderbook) per day, from one day or lists of days."""
    if not isinstance(messages, list | tuple):
        if isinstance(orderbook, list | tuple):
            raise ValueError(
                f"orderbook is a list of {len(orderbook)} but messages is one day: give "
                "messages as a list of days too, one orderbook per day"
            )
        return [(messages, orderbook)]
    if not messages:
        raise ValueError("messages is an empty list: give at least one day")
    if orderbook is None:
        return [(day, None) for day in messages]
    if not isinstance(orderbook, list | tuple) or len(orderbook) != len(messages):
        given = f"a list of {len(orderbook)}" if isinstance(orderbook, list | tuple) else "one"
        raise ValueError(
            f"messages is a list of {len(messages)} days but orderbook is {given}: give one "
            "orderbook per day (None for a day without one), or none at all"
        )
    return list(zip(messages, orderbook, strict=True))


def _concat(
    parts: list[NDArray[Any]], offsets: NDArray[np.int64] | None = None, pad: float | None = None
) -> NDArray[Any]:
    """The days' ``parts`` as one array (one day's: itself), each part's indices (entries
    >= 0; -1 stays) moved on by its ``offsets`` entry (then as narrow as they fit), and one
    ``pad`` entry between parts."""
    if len(parts) == 1:
        return parts[0]
    if offsets is not None:
        parts = [np.where(p >= 0, p + o, p) for p, o in zip(parts, offsets, strict=True)]
    if pad is not None:
        padding = np.full((1, *parts[0].shape[1:]), pad, parts[0].dtype)
        parts = [*(part for p in parts[:-1] for part in (p, padding)), parts[-1]]
    joined = np.concatenate(parts)
    return narrow(joined) if offsets is not None else joined


def _give_back() -> None:
    """Return freed memory to the system: what pyarrow's pool holds unused (reading a stored
    day goes through it) and, on glibc, the free pages of malloc's heaps (``malloc_trim``).
    Without them a process keeps the transients of a day's replay, ten times what the day
    holds (``benchmarks/replay_store.py`` measures it)."""
    arrow = sys.modules.get("pyarrow")
    if arrow is not None:
        arrow.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``; None where the C library has none (musl, macOS, Windows)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


@contextlib.contextmanager
def _naming(d: int, source: Any, several: bool) -> Iterator[None]:
    """Errors about day ``d`` of a list of days name it (and its path, unless they do)."""
    try:
        yield
    except (ValueError, TypeError, OSError) as error:
        if not several:
            raise
        what = f"day {d}"
        if isinstance(source, str | os.PathLike) and os.fspath(source) not in str(error):
            what += f" ({os.fspath(source)})"
        raise type(error)(f"{what}: {error}") from error


def _joined_levels(
    days: list[ReplayDay], firsts: NDArray[np.int64]
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """The per-level history (``ReplayDay``'s ``starts``, ``level_messages``, ``level_lots``)
    of the joined tape over day 0's opening book: each day's, its message indices offset, and
    at the padding before day d, the levels where d's opening book differs from the book at
    the end of the day before."""
    if len(days) == 1:
        return days[0].starts, days[0].level_messages, days[0].level_lots
    keys, after, lots = [], [], []
    closing = None
    for day, first in zip(days, firsts, strict=True):
        n_keys = len(day.starts) - 1
        day_keys = np.repeat(np.arange(n_keys), np.diff(day.starts))
        opening = day.opening.reshape(-1)
        if closing is not None:
            reset = np.flatnonzero(opening != closing)
            keys.append(reset)
            after.append(np.full(len(reset), first - 1))
            lots.append(opening[reset])
        keys.append(day_keys)
        after.append(day.level_messages + first)
        lots.append(day.level_lots)
        closing = opening.copy()
        changed = np.diff(day.starts) > 0
        closing[changed] = day.level_lots[day.starts[1:][changed] - 1]
    keys_, after_, lots_ = (np.concatenate(x).astype(np.int64) for x in (keys, after, lots))
    order = np.lexsort((after_, keys_))  # stable: a message's own move before its corrections
    keys_, after_, lots_ = keys_[order], after_[order], lots_[order]
    starts = np.searchsorted(keys_, np.arange(len(days[0].starts))).astype(np.int64)
    return starts, narrow(after_), narrow(lots_)


def _chosen_dates(held: list[Any], dates: Any, root: object, symbol: str) -> list[Any]:
    """The store's dates ``dates`` asks for: None, all; a list, those; a ``(first, last)``
    tuple, the held dates between them. A date not held, or a range holding none, is a
    ValueError naming what the store holds."""
    from sekai.finance.lob import store

    span = f"{len(held)} days, {held[0]} to {held[-1]}" if held else "no days"
    if dates is None:
        chosen = held
    elif isinstance(dates, tuple):
        if len(dates) != 2:
            raise ValueError(f"days: a tuple is a (first, last) range, got {len(dates)} items")
        first, last = (store._as_date(d, "days") for d in dates)
        chosen = [d for d in held if first <= d <= last]
    elif isinstance(dates, list):
        chosen = [store._as_date(d, "days") for d in dates]
        missing = [str(d) for d in chosen if d not in held]
        if missing:
            raise ValueError(f"{root}: {symbol} has no day {missing[0]} (the store holds {span})")
    else:
        raise TypeError(
            "days must be None, a list of dates or a (first, last) tuple, got "
            f"{type(dates).__name__}"
        )
    if not chosen:
        raise ValueError(f"{root}: no day of {symbol} in {dates} (the store holds {span})")
    return chosen
