"""A day of depth-only data (``depth``: level updates and trades) replayed once into the arrays
every depth replay window indexes (``_depth_windows``), as ``_replay_day`` does for order
events: per message its kind, side, tick, lots (the level's new size, or the trade's) and the
level's size before it; the top levels before each message; per (side, tick) the messages that
set it and its size after each, for the queue an agent order joins.

The book is the sizes per side and tick the updates set (a level no update deleted keeps its
last size, shown or not), with the best prices kept as hftbacktest's market depth keeps them:
a new bid at or above the best ask moves the best ask up past it (and the same the other way),
so the book is never crossed, whatever the order of the updates within one timestamp. Trades
change no level. numba is imported here and there only."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob import events as _events
from sekai.finance.lob._replay_levels import scan_bounds
from sekai.finance.lob._search import search_after
from sekai.finance.lob.book import BUY, SELL

_jit = numba.njit(cache=True)  # type: ignore[call-overload]
LEVEL, TRADE = 0, 1  # the message kinds: a level's new size, a trade (side: the taker's)
TICK_MARGIN = 16  # ticks of room past the day's extreme prices, for agent quotes


class DepthDays:
    """One day of depth-only data as the tape the replay model indexes (``ReplayDays``'s
    attributes for a set of one day): ``depth`` level updates and ``trades`` (arrays of
    ``depth.DEPTH_DTYPE`` and ``depth.TRADE_DTYPE``) merged in time order, a trade before
    the updates of its timestamp (the feed reports the trade, then the book it left); prices
    to ticks as ``(price - price_offset) // tick``; ``levels`` top levels recorded."""

    def __init__(
        self,
        depth: NDArray[Any],
        trades: NDArray[Any],
        *,
        tick: int = 100,
        price_offset: int = 0,
        n_ticks: int | None = None,
        levels: int = 5,
    ) -> None:
        if len(depth) + len(trades) < 2:
            raise ValueError("depth and trades must hold at least 2 rows together")
        time = np.concatenate((trades["time"], depth["time"]))
        kinds = np.concatenate((np.full(len(trades), TRADE), np.full(len(depth), LEVEL)))
        order = np.lexsort((kinds == LEVEL, time))  # stable: each file's own order kept
        time, kinds = time[order], kinds[order].astype(np.int64)
        prices = np.concatenate((trades["price"], depth["price"]))[order]
        if len(prices) and prices.min() < price_offset:
            raise ValueError(f"a price ({int(prices.min())}) is below price_offset {price_offset}")
        ticks = ((prices - price_offset) // tick).astype(np.int64)
        highest = int(ticks.max()) + 1
        if n_ticks is None:
            n_ticks = highest + TICK_MARGIN
        elif n_ticks < highest:
            raise ValueError(f"n_ticks={n_ticks}, but a price lies at tick {highest - 1}")
        self.kinds = kinds
        self.sides = np.concatenate((trades["side"], depth["side"]))[order].astype(np.int64)
        self.ticks = ticks
        self.lots = np.concatenate((trades["size"], depth["size"]))[order].astype(np.int64)
        self.n_ticks, self.tick, self.price_offset = n_ticks, tick, price_offset
        n = len(time)
        self.top = np.empty((n + 1, 2, levels, 2), np.int64)
        self.prev = np.empty(n, np.int64)
        _replay(self.kinds, self.sides, self.ticks, self.lots, n_ticks, self.prev, self.top)
        self._best = np.ascontiguousarray(self.top[:, :, 0, 0])
        midnight = int(time[0]) // _events.DAY * _events.DAY
        self.time = (time - midnight) / _events.NANOSECONDS  # seconds after midnight
        self.halted = np.zeros(n + 1, bool)  # depth data has no trading states
        self.opening = np.zeros((2, n_ticks), np.int64)
        sets = np.flatnonzero(self.kinds == LEVEL)
        keys = self.sides[sets] * n_ticks + self.ticks[sets]
        by_level = np.argsort(keys, kind="stable")
        self.starts = np.searchsorted(keys[by_level], np.arange(2 * n_ticks + 1)).astype(np.int64)
        self.level_messages = sets[by_level].astype(np.int64)
        self.level_lots = self.lots[sets][by_level]
        self.trades = np.flatnonzero(self.kinds == TRADE)
        self.trade_signs = np.where(self.sides[self.trades] == BUY, 1, -1)
        self.trade_sizes = self.lots[self.trades]
        self.trade_floors = np.zeros(1, np.int64)
        self.first_times = self.time[:1].copy()
        self.last_times = self.time[-1:].copy()
        self.firsts = np.zeros(1, np.int64)
        self.ends = np.array([n], np.int64)
        self._bounds = scan_bounds(self.starts, self.opening)

    def __len__(self) -> int:
        return 1

    @property
    def best(self) -> NDArray[np.int64]:
        """The best bid and ask tick before each message (``[k, side]``, -1 for none), as
        ``ReplayDays.best``."""
        return self._best

    def use(self, needed: Any) -> None:
        """The one day is always on the tape: nothing moves."""
        return None

    def after(
        self,
        day: NDArray[np.int64],
        times: NDArray[np.float64],
        near: NDArray[np.int64] | None = None,
    ) -> NDArray[np.int64]:
        """The index of the first message stamped after ``times`` (``(W,)`` or ``(W, A)``),
        searched out from ``near``, as ``ReplayDays.after`` (``day`` is 0: one day)."""
        return search_after(self.time, self.firsts, self.ends, day, times, near)

    def tape(self, price: NDArray[np.float64]) -> tuple[Any, ...]:
        """The arrays ``_depth_windows`` reads, in its order, with ``price`` per tick. The
        places of the best ticks, ``price``, ``halted``, the level history, its scan bounds
        and the number of levels are those of ``ReplayDay.tape``, so the replay windows' rules
        for instructions apply as they are; the reconciliation's places are empty (depth data
        is not reconciled)."""
        unused = np.zeros(0, np.int64)
        return (
            self.kinds,
            self.sides,
            self.ticks,
            self.lots,
            self.prev,
            self._best,
            price,
            self.halted,
            self.starts,
            self.level_messages,
            self.level_lots,
            self.opening,
            *(unused,) * 5,
            self._bounds,
            self.top.shape[2],
        )


@_jit
def _replay(kinds, sides, ticks, lots, n_ticks, prev, top):  # type: ignore[no-untyped-def]
    """Set the levels message by message (hftbacktest's ``update_bid_depth`` and
    ``update_ask_depth`` rules for the best prices); write each level's size before its
    update into ``prev`` and the top levels before message k into ``top[k]``."""
    qty = np.zeros((2, n_ticks), np.int64)
    best_bid, best_ask = -1, n_ticks  # none
    low_bid, high_ask = n_ticks, -1  # the lowest bid and highest ask ever set
    _top(qty, best_bid, best_ask, low_bid, high_ask, top[0])
    for k in range(len(kinds)):
        prev[k] = 0
        if kinds[k] == LEVEL:
            side, tick, size = sides[k], ticks[k], lots[k]
            prev[k] = qty[side, tick]
            qty[side, tick] = size
            if side == BUY:
                if size == 0:
                    if tick == best_bid:
                        best_bid = _below(qty[BUY], best_bid, low_bid)
                        if best_bid < 0:
                            low_bid = n_ticks
                else:
                    if tick > best_bid:
                        best_bid = tick
                        if best_bid >= best_ask:
                            best_ask = _above(qty[SELL], best_bid, high_ask, n_ticks)
                    low_bid = min(low_bid, tick)
            elif size == 0:
                if tick == best_ask:
                    best_ask = _above(qty[SELL], best_ask, high_ask, n_ticks)
                    if best_ask == n_ticks:
                        high_ask = -1
            else:
                if tick < best_ask:
                    best_ask = tick
                    if best_bid >= best_ask:
                        best_bid = _below(qty[BUY], best_ask, low_bid)
                high_ask = max(high_ask, tick)
        _top(qty, best_bid, best_ask, low_bid, high_ask, top[k + 1])


@_jit
def _below(qty, start, end):  # type: ignore[no-untyped-def]
    """The highest tick in [end, start) holding lots, -1 if none."""
    for t in range(start - 1, max(end, 0) - 1, -1):
        if qty[t] > 0:
            return t
    return -1


@_jit
def _above(qty, start, end, n_ticks):  # type: ignore[no-untyped-def]
    """The lowest tick in (start, end] holding lots, ``n_ticks`` if none."""
    for t in range(start + 1, min(end, n_ticks - 1) + 1):
        if qty[t] > 0:
            return t
    return n_ticks


@_jit
def _top(qty, best_bid, best_ask, low_bid, high_ask, out):  # type: ignore[no-untyped-def]
    """The top levels (side, level, tick/lots; -1 and 0 past the last) from the best prices
    outwards."""
    out[:] = 0
    out[:, :, 0] = -1
    level, tick = 0, best_bid
    while level < out.shape[1] and tick >= 0 and tick >= low_bid:
        if qty[BUY, tick] > 0:
            out[BUY, level, 0], out[BUY, level, 1] = tick, qty[BUY, tick]
            level += 1
        tick -= 1
    level, tick = 0, best_ask
    while level < out.shape[1] and tick <= high_ask and tick < qty.shape[1]:
        if qty[SELL, tick] > 0:
            out[SELL, level, 0], out[SELL, level, 1] = tick, qty[SELL, tick]
            level += 1
        tick += 1


@_jit
def first_crossed(time, sides, index, sizes, n_prices):  # type: ignore[no-untyped-def]
    """The index of the last update of the first timestamp after which the plain book (the
    highest bid and lowest ask holding lots, ``index``: dense price ranks) is crossed or
    locked; -1 if it never is."""
    qty = np.zeros((2, n_prices), np.int64)
    best_bid, best_ask = -1, n_prices
    for k in range(len(time)):
        side, at, size = sides[k], index[k], sizes[k]
        qty[side, at] = size
        if side == BUY:
            if size > 0 and at > best_bid:
                best_bid = at
            elif size == 0 and at == best_bid:
                while best_bid >= 0 and qty[BUY, best_bid] == 0:
                    best_bid -= 1
        else:
            if size > 0 and at < best_ask:
                best_ask = at
            elif size == 0 and at == best_ask:
                while best_ask < n_prices and qty[SELL, best_ask] == 0:
                    best_ask += 1
        last = k == len(time) - 1 or time[k + 1] != time[k]
        if last and best_bid >= 0 and best_ask < n_prices and best_bid >= best_ask:
            return k
    return -1


@_jit
def level_changes(time, prices, sizes, out):  # type: ignore[no-untyped-def]
    """``depth.levels_to_depth``'s updates between level rows (``prices``, ``sizes``: (n, 2,
    N), side BUY/SELL, level best first, size 0 empty) into ``out`` (rows of time, side,
    price, size; at least 4 N rows a row); return how many. Per row and side: first the
    levels gone from inside the shown depth (size 0), in the last row's order, then the
    levels whose size changed, in this row's order."""
    depth = prices.shape[2]
    n_out = 0
    for r in range(len(time)):
        for side in (BUY, SELL):
            now_p, now_s = prices[r, side], sizes[r, side]
            shown, last = 0, 0
            for level in range(depth):
                if now_s[level] > 0:
                    shown += 1
                    p = now_p[level]
                    if shown == 1 or (p < last if side == BUY else p > last):
                        last = p
            if r > 0:
                for level in range(depth):
                    p = prices[r - 1, side, level]
                    if sizes[r - 1, side, level] == 0 or _size_at(now_p, now_s, p) > 0:
                        continue
                    if shown < depth or (p > last if side == BUY else p < last):
                        out[n_out, 0], out[n_out, 1], out[n_out, 2], out[n_out, 3] = (
                            time[r],
                            side,
                            p,
                            0,
                        )
                        n_out += 1
            for level in range(depth):
                s = now_s[level]
                if s == 0:
                    continue
                p = now_p[level]
                if r == 0 or _size_at(prices[r - 1, side], sizes[r - 1, side], p) != s:
                    out[n_out, 0], out[n_out, 1], out[n_out, 2], out[n_out, 3] = time[r], side, p, s
                    n_out += 1
    return n_out


@_jit
def _size_at(prices, sizes, price):  # type: ignore[no-untyped-def]
    """The size a row's side shows at ``price`` (0: none)."""
    for level in range(len(prices)):
        if sizes[level] > 0 and prices[level] == price:
            return sizes[level]
    return 0
