"""The replay market's observation of every window and its mark, compiled: per agent, the view's
observation (``MarketConfig.observation``'s, from ``_trader_rows``), its quotes' places in their
queues, and the last trades it sees; per window, the mid of its book. One pass over the windows
each, where array operations took a dozen; from ``PARALLEL_FROM`` windows on, spread over every
core. numba is imported here and in the other kernels only.
"""

from __future__ import annotations

import numba
import numpy as np

from sekai.finance.lob._engine import inline
from sekai.finance.lob._search import gallop
from sekai.finance.lob._trader_rows import observe_row
from sekai.finance.lob.book import BUY, SELL


@numba.njit(cache=True, _nrt=False)  # type: ignore[call-overload,misc]
def observe(view, price, time_left, orders, trades, seen, floors, out):  # type: ignore[no-untyped-def]
    """Agent observations into ``out`` (W, size): the view's (4K + 7 values), then per side
    (bid, ask) its quote's lots ahead and ticks behind the best it sees (0 and -1 with no
    quote; -1 behind an empty side), then the last trades before message ``seen[w]`` and from
    ``floors[w]`` on (the window's day's), oldest first, as price and signed size (0 and 0
    before the first). ``orders`` (W, 2, 4): the agent's quotes (tick or -1, size, lots
    ahead, joined at); ``trades`` = (the messages' ticks, and per trade its message, sign and
    size)."""
    for w in range(len(out)):
        _observe_window(view, price, time_left, orders, trades, seen, floors, out, w)


@numba.njit(cache=True, parallel=True, _nrt=False)  # type: ignore[call-overload,misc]
def observe_parallel(view, price, time_left, orders, trades, seen, floors, out):  # type: ignore[no-untyped-def]
    """``observe`` with the windows spread over every core."""
    for w in numba.prange(len(out)):
        _observe_window(view, price, time_left, orders, trades, seen, floors, out, w)


@inline
def _observe_window(view, price, time_left, orders, trades, seen, floors, out, w):  # type: ignore[no-untyped-def]
    base = 4 * view[0].shape[1] + 7
    row = out[w]
    observe_row(view, w, price, time_left[w], row)
    for j in range(2):
        side = BUY if j == 0 else SELL
        best = view[0][w, 0] if side == BUY else view[2][w, 0]
        tick = orders[w, side, 0]
        behind = best - tick if side == BUY else tick - best
        row[base + 2 * j] = orders[w, side, 2] if tick >= 0 else 0
        row[base + 2 * j + 1] = behind if tick >= 0 and best >= 0 else -1
    _last_trades(trades, seen[w], floors[w], price, row[base + 4 :])


@inline
def _last_trades(trades, seen, floor, price, out):  # type: ignore[no-untyped-def]
    """The ``len(out) // 2`` last trades before message ``seen``, from trade ``floor`` on."""
    ticks, messages, signs, sizes = trades
    lo = gallop(messages, 0, len(messages), -1, seen - 1)  # the trades before message seen
    n = len(out) // 2
    for i in range(n):
        pick = lo - n + i
        if pick >= floor:
            out[2 * i] = price[ticks[messages[pick]]]
            out[2 * i + 1] = signs[pick] * sizes[pick]
        else:
            out[2 * i] = out[2 * i + 1] = 0.0


@numba.njit(cache=True, _nrt=False)  # type: ignore[call-overload,misc]
def mark(best, price, windows, mid, day, firsts, ticks):  # type: ignore[no-untyped-def]
    """The mid of window ``windows[j]`` from the best ticks ``best[j]`` (bid, ask) of its
    book now, into ``mid`` (one per window); kept where a side is empty, and before the
    first two-sided book the price of its day's first message (``firsts[day[w]]``;
    ``ticks`` per message)."""
    for j in range(len(windows)):
        w = windows[j]
        bid, ask = best[j, BUY], best[j, SELL]
        if bid >= 0 and ask >= 0:
            mid[w] = (price[bid] + price[ask]) / 2
        elif np.isnan(mid[w]):
            mid[w] = price[ticks[firsts[day[w]]]]
