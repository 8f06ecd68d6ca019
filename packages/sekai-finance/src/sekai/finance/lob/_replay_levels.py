"""The replayed book at any message of a tape, from what the tape keeps instead of the book:
each message's best bid and ask tick, and the per-level history (per (side, tick) the
messages that changed that level and the lots there after each, over the opening book).

The top levels before message k are the best tick, then the next filled ticks outward, each
one's lots looked up in its level's history: the same levels the replay's own scan of its
book finds (``_engine.top_levels``), at 8 bytes a message for the best ticks instead of 16
a level for the levels themselves. The lookups are compiled; numba is imported here and in
the kernels only.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob._engine import PARALLEL_FROM, inline, jit
from sekai.finance.lob._search import gallop
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.events import ADD as SUBMIT
from sekai.finance.lob.events import EXECUTE


def level_history(
    kinds: NDArray[Any],
    sides: NDArray[Any],
    ticks: NDArray[Any],
    lots: NDArray[Any],
    opening: NDArray[np.int64],
    changes: NDArray[np.int64],
) -> tuple[NDArray[np.int64], NDArray[Any], NDArray[Any]]:
    """Per (side, tick), key ``side * n_ticks + tick``: ``starts[key]:starts[key + 1]`` in
    the other two arrays are the messages that changed that level, in order, and the lots
    there after each. The messages' own moves (``lots`` put on by a submission, taken off by
    a cancel, delete or execution) and ``changes``, rows (after message, side, tick, lots
    added or taken) the messages' moves do not show (a reconciliation's corrections, what a
    crossing submission traded): a message index appears again for each change after it.
    The message indices and lots are as narrow as they fit (``narrow``)."""
    n_ticks = opening.shape[1]
    moves = np.flatnonzero((kinds <= EXECUTE) & (lots > 0))
    after = np.concatenate((moves, changes[:, 0]))
    keys = np.concatenate((sides[moves], changes[:, 1])) * n_ticks + np.concatenate(
        (ticks[moves], changes[:, 2])
    )
    delta = np.concatenate(
        (np.where(kinds[moves] == SUBMIT, lots[moves], -lots[moves]), changes[:, 3])
    )
    order = np.lexsort((after, keys))  # stable: a message's own move before its changes
    after, keys, delta = after[order], keys[order], delta[order]
    starts = np.searchsorted(keys, np.arange(2 * n_ticks + 1)).astype(np.int64)
    running = np.cumsum(delta)
    before_group = np.concatenate(([0], running))[starts[keys]]
    level_lots = opening.reshape(-1)[keys] + running - before_group
    return starts, narrow(after), narrow(level_lots)


def narrow(values: NDArray[Any]) -> NDArray[Any]:
    """Integer ``values`` as int32 if every one fits, else as int64. (Not narrower where the
    values allow: every distinct set of dtypes on a tape compiles the windows' kernel anew,
    so a tape's dtypes follow from its grid, not from each day's values.)"""
    limits = np.iinfo(np.int32)
    fits = not len(values) or (values.min() >= limits.min and values.max() <= limits.max)
    return values.astype(np.int32 if fits else np.int64)


def tick_dtype(n_ticks: int) -> type[np.signedinteger[Any]]:
    """The dtype of ticks on a grid of ``n_ticks``: int16 where they fit, else int32."""
    return np.int16 if n_ticks <= np.iinfo(np.int16).max else np.int32


def scan_bounds(starts: NDArray[np.int64], opening: NDArray[np.int64]) -> NDArray[np.int64]:
    """(2,): the lowest tick where bids ever rest and the highest where asks do (the opening
    book's, or a level with history); the scans for levels stop there. ``n_ticks`` and -1
    for a side that never holds lots."""
    n_ticks = opening.shape[1]
    held = (np.diff(starts) > 0).reshape(2, n_ticks) | (opening != 0)
    bids, asks = np.flatnonzero(held[BUY]), np.flatnonzero(held[SELL])
    return np.array([bids[0] if len(bids) else n_ticks, asks[-1] if len(asks) else -1], np.int64)


@inline
def lots_at(starts, messages, level_lots, opening, side, tick, k):  # type: ignore[no-untyped-def]
    """The lots at (side, tick) before message k: after the last change before k (a binary
    search in the level's history), else the opening book's."""
    key = side * opening.shape[1] + tick
    first = starts[key]
    place = gallop(messages, first, starts[key + 1], -1, k - 1)  # the first change at k or on
    return opening[side, tick] if place == first else level_lots[place - 1]


@inline
def _lots_near(starts, messages, level_lots, opening, side, tick, k, hints):  # type: ignore[no-untyped-def]
    """``lots_at`` (side, tick) before message k, and the place in the level's history it
    was read at: searched out from the place ``hints`` (side, slot, then tick and place)
    holds for the tick, if it holds one."""
    start = -1
    for j in range(hints.shape[1]):
        if hints[side, j, 0] == tick:
            start = hints[side, j, 1]
            break
    key = side * opening.shape[1] + tick
    first = starts[key]
    place = gallop(messages, first, starts[key + 1], start, k - 1)
    return (opening[side, tick] if place == first else level_lots[place - 1]), place


@jit
def top_near(best, starts, messages, level_lots, opening, bounds, k, out, hints):  # type: ignore[no-untyped-def]
    """``top_at``, each level's lots searched for out from where ``hints`` says its tick's
    history was read last (a window's levels move little from one step to the next); the
    levels read go to ``hints`` (any hint is only a starting point: a stale one costs time,
    never a wrong answer)."""
    for side in (BUY, SELL):
        step = -1 if side == BUY else 1
        tick = best[k, side]
        level = 0
        while level < out.shape[1] and tick >= 0:
            lots, place = _lots_near(starts, messages, level_lots, opening, side, tick, k, hints)
            if level == 0 or lots != 0:  # the best tick, then the next ticks holding lots
                out[side, level, 0], out[side, level, 1] = tick, lots
                hints[side, level, 0], hints[side, level, 1] = tick, place
                level += 1
            tick += step
            if (tick < bounds[BUY]) if side == BUY else (tick > bounds[SELL]):
                break
        while level < out.shape[1]:
            out[side, level, 0] = -1
            out[side, level, 1] = 0
            level += 1


@jit
def next_level(starts, messages, level_lots, opening, bounds, side, tick, k):  # type: ignore[no-untyped-def]
    """The first tick from ``tick`` outward (down for bids, up for asks) holding lots before
    message k; -1 if none does up to the side's bound (``scan_bounds``)."""
    if side == BUY:
        while tick >= bounds[BUY]:
            if lots_at(starts, messages, level_lots, opening, side, tick, k) != 0:
                return tick
            tick -= 1
    else:
        while tick <= bounds[SELL]:
            if lots_at(starts, messages, level_lots, opening, side, tick, k) != 0:
                return tick
            tick += 1
    return -1


@jit
def top_at(best, starts, messages, level_lots, opening, bounds, k, out):  # type: ignore[no-untyped-def]
    """The top levels before message k into ``out`` (side, level, tick/lots; tick -1 and 0
    lots past the last level), from the best ticks ``best[k]`` (-1: an empty side)."""
    for side in (BUY, SELL):
        step = -1 if side == BUY else 1
        tick = best[k, side]
        level = 0
        while level < out.shape[1] and tick >= 0:
            out[side, level, 0] = tick
            out[side, level, 1] = lots_at(starts, messages, level_lots, opening, side, tick, k)
            level += 1
            if level < out.shape[1]:  # the next level only if it is read
                tick = next_level(
                    starts, messages, level_lots, opening, bounds, side, tick + step, k
                )
        while level < out.shape[1]:
            out[side, level, 0] = -1
            out[side, level, 1] = 0
            level += 1


@jit
def _tops(best, starts, messages, level_lots, opening, bounds, rows, out):  # type: ignore[no-untyped-def]
    for j in range(len(rows)):
        top_at(best, starts, messages, level_lots, opening, bounds, rows[j], out[j])


@numba.njit(cache=True, parallel=True, _nrt=False)  # type: ignore[call-overload,misc]
def _tops_parallel(best, starts, messages, level_lots, opening, bounds, rows, out):  # type: ignore[no-untyped-def]
    for j in numba.prange(len(rows)):
        top_at(best, starts, messages, level_lots, opening, bounds, rows[j], out[j])


@jit
def _tops_near(best, starts, messages, level_lots, opening, bounds, rows, out, hints):  # type: ignore[no-untyped-def]
    for j in range(len(rows)):
        top_near(best, starts, messages, level_lots, opening, bounds, rows[j], out[j], hints[j])


@numba.njit(cache=True, parallel=True, _nrt=False)  # type: ignore[call-overload,misc]
def _tops_near_parallel(best, starts, messages, level_lots, opening, bounds, rows, out, hints):  # type: ignore[no-untyped-def]
    for j in numba.prange(len(rows)):
        top_near(best, starts, messages, level_lots, opening, bounds, rows[j], out[j], hints[j])


class TopLevels:
    """The top ``levels`` levels before every message of a tape (row n: after the last), as
    an array of shape ``(n + 1, 2, levels, 2)`` reads (side BUY/SELL, level best first, then
    tick and lots; tick -1 and 0 lots past the last level), computed when indexed from the
    best ticks ``best`` ``(n + 1, 2)`` and the level history (``level_history``'s arrays over
    the ``opening`` lots). Indexing takes the rows first (an int, a slice or an array of
    them), then the rest as NumPy does on those rows; it returns int64 arrays."""

    def __init__(
        self,
        best: NDArray[Any],
        starts: NDArray[np.int64],
        messages: NDArray[Any],
        level_lots: NDArray[Any],
        opening: NDArray[np.int64],
        levels: int,
    ) -> None:
        self.best, self.levels = best, levels
        self.bounds = scan_bounds(starts, opening)
        self._history = (starts, messages, level_lots, opening, self.bounds)

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return (len(self.best), 2, self.levels, 2)

    def __len__(self) -> int:
        return len(self.best)

    def __getitem__(self, index: Any) -> NDArray[np.int64]:
        first, rest = (index[0], index[1:]) if isinstance(index, tuple) else (index, ())
        rows = self._rows(first)
        levels = self.levels
        if len(rest) >= 2 and rest[0] == slice(None) and _leading(rest[1]):
            # both sides' first levels only (``top[rows, :, :n]``): read no more than those
            levels = min(levels, rest[1].stop)
            rest = (rest[0], slice(None), *rest[2:])
        out = np.empty((rows.size, 2, levels, 2), np.int64)
        read = _tops_parallel if rows.size >= PARALLEL_FROM else _tops
        read(self.best, *self._history, rows.reshape(-1), out)
        shaped = out.reshape(rows.shape + out.shape[1:])
        return shaped[(*(slice(None),) * rows.ndim, *rest)]  # type: ignore[no-any-return]

    def near(
        self, rows: NDArray[np.int64], levels: int, hints: NDArray[np.int64]
    ) -> NDArray[np.int64]:
        """``self[rows, :, :levels]``, each row's levels searched for out from ``hints[j]``
        ((side, level, then tick and place in its history) as the last read of the same
        window left them, -1 for none; updated here), one row per window. Laid out so that
        each side's ticks and lots, ``out[:, side, :, field]``, are contiguous arrays: a
        trader's view (``TraderView.of``) takes them as they are, without a copy."""
        out = np.empty((2, 2, len(rows), levels), np.int64).transpose(2, 0, 3, 1)
        read = _tops_near_parallel if len(rows) >= PARALLEL_FROM else _tops_near
        read(self.best, *self._history, rows, out, hints)
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> NDArray[Any]:
        whole = self[:]
        return whole if dtype is None else whole.astype(dtype)

    def _rows(self, first: Any) -> NDArray[np.int64]:
        """The message indices ``first`` selects (an int: a 0-d array)."""
        n = len(self)
        if isinstance(first, slice):
            return np.arange(*first.indices(n), dtype=np.int64)
        rows = np.asarray(first)
        if rows.dtype == np.bool_:
            if rows.shape != (n,):
                raise IndexError(f"a boolean index of shape {rows.shape} for {n} rows")
            return np.flatnonzero(rows)
        if not np.issubdtype(rows.dtype, np.integer):
            raise IndexError(f"rows are indexed by ints, slices or arrays of them, got {first!r}")
        if rows.size and (rows.min() < -n or rows.max() >= n):
            raise IndexError(f"a row index out of range for {n} rows")
        return np.where(rows < 0, rows + n, rows).astype(np.int64)


def _leading(index: Any) -> bool:
    """Whether ``index`` is a slice of the first n entries, ``:n`` (n >= 0)."""
    return (
        isinstance(index, slice)
        and index.start in (None, 0)
        and index.step in (None, 1)
        and isinstance(index.stop, int)
        and index.stop >= 0
    )
