"""The limit order book engine: many books in array form and the compiled loops that move
them, for LimitOrderBookMarket (one book) and LimitOrderBookVecEnv (many).

Each book is a fixed array of lots per tick and side; the public (background) lots of a level
are anonymous one-lot orders, and each trader's resting order carries its queue position: the
public lots ahead of it (traders' orders ahead are found by their placement sequence). That is
enough to reproduce price-time priority exactly for the one-lot public flow. The traders'
queue (which of their orders is first at a level, and the public lots ahead of it), the
self-trade policy, the flow and the traders' instructions are written here, as numba-compiled
loops over books and events, one call per step, over the rules every LOB user shares (levels,
best prices, top levels, accounts, and the matching walk of a level, which reads this queue:
``sekai.finance.lob._engine``); NumPy reads the arrays for views and values. ``cache=True``
compiles each kernel once per machine. ``sekai.finance.OrderBook`` is the reference they are tested
against (tests/finance/lob/test_engine_vs_order_book.py).
"""

from __future__ import annotations

import itertools
import math
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob._engine import (
    add_anonymous,
    after_removal,
    improve_best,
    inline,
    jit,
    match_level,
    room,
    settle,
    take_anonymous,
    top_levels,
)
from sekai.finance.lob.book import BUY, PUBLIC, SELL
from sekai.finance.lob.flow import (
    CANCEL,
    MARKET,
    ContStoikovTalreja,
    FlowEvents,
    _event_tables,
)
from sekai.finance.lob.market import MarketConfig, TraderView

# fields of a trader's resting order, the last axis of ``LevelBooks.orders``
PRICE, SIZE, AHEAD, SEQ = range(4)  # tick (-1: none), lots, public lots ahead, placement number
# fields of a trade on the tape, the last axis of ``LevelBooks.tape`` (its time is in tape_time)
TAKER_SIDE, TAKER, MAKER = 2, 3, 4  # after PRICE (tick) and SIZE (lots); owners as OrderBook's
TAPE = 64  # lots ``BookView.fills`` lists: the last TAPE
_TAPE_ROWS = 128  # trades each book's tape holds at first; it doubles when one more might not fit
_TAPE_FIELDS = ("price", "size", "taker_side", "taker_owner", "maker_owner")  # tape columns
# a trade on the tape as ``LevelBooks.trades`` returns it
TRADE_DTYPE = np.dtype([("time", np.float64)] + [(name, np.int64) for name in _TAPE_FIELDS])


class Fill(NamedTuple):
    """One lot traded: owners as ``OrderBook`` numbers them (PUBLIC 0, trader i is i + 1)."""

    price: int
    taker_side: int
    taker_owner: int
    maker_owner: int


class BookTrade(NamedTuple):
    """One trade on a book's tape, as ``OrderBook.trades`` records one (the taker traded
    ``size`` lots at ``price`` with one resting order), without order ids and with the session
    time in seconds. Owners as ``OrderBook`` numbers them (PUBLIC 0, trader i is i + 1)."""

    price: int
    size: int
    taker_side: int
    taker_owner: int
    maker_owner: int
    time: float


class LevelBooks:
    """The books, the traders' resting orders, every participant's account and each book's
    tape of trades.

    Accounts have one column per trader and a last one for the public (the background flow).
    """

    def __init__(self, config: MarketConfig, num_books: int) -> None:
        self.config = config
        n, traders, ticks = num_books, config.n_traders, config.n_ticks
        self.n = n
        # Lots per (side, tick, book): the books' lots at one tick are neighbours in memory,
        # and np.zeros maps pages lazily, so memory is touched only near the ticks the books
        # reach (a fresh set of books costs little, however wide the grid).
        self._lots = np.zeros((2, ticks, n), np.int64)
        self._public_lots = np.zeros((2, ticks, n), np.int64)  # the public's lots alone
        # the lowest and highest tick any lot was placed at, in any book: where reset() clears
        # (none yet: the zeros are fresh)
        self._touched = np.array([ticks, -1], np.int64)
        self.best = np.empty((n, 2), np.int64)  # best bid, best ask; -1 / ticks when empty
        self.ref = np.empty((n, 2), np.int64)  # the last best of each side, for an empty side
        self.orders = np.empty((n, 2, traders, 4), np.int64)
        self.placed = np.empty(n, np.int64)  # traders' orders placed so far, for queue order
        self.accounts_cash = np.empty((n, traders + 1))
        self.accounts_inventory = np.empty((n, traders + 1), np.int64)
        self.mid = np.empty(n)
        # each book's tape: trade k of book b is tape[b, k] (price, size, taker side, taker and
        # maker owner) at session time tape_time[b, k], for k < trade_count[b]. The kernels
        # allocate nothing, so the caller makes room first (_make_room) and the flow kernel
        # stops where a tape is full, to go on once it has grown (run_flow).
        self.tape = np.zeros((n, _TAPE_ROWS, 5), np.int64)
        self.tape_time = np.zeros((n, _TAPE_ROWS))
        self.trade_count = np.zeros(n, np.int64)
        self._most_trades = np.zeros(1, np.int64)  # trade_count.max(), kept by the kernels
        self._flow_position = np.zeros(2)  # where run_flow's kernel stopped: book, clock
        self._levels: NDArray[np.int64] | None = None  # (n, 2, K, 2): see view()
        self._tick_price = np.asarray(config.price(np.arange(ticks)), np.float64)
        self._state = (
            self._lots,
            self._public_lots,
            self.best,
            self.ref,
            self.orders,
            self.placed,
            self.accounts_cash,
            self.accounts_inventory,
            self._tick_price,
            self._touched,
            self.tape,
            self.tape_time,
            self.trade_count,
            self._most_trades,
        )
        self.reset()

    def reset(self) -> None:
        """Back to the opening book and accounts, in the same arrays (a new session): lots
        are cleared only between the lowest and highest tick placed at, so a reset costs
        what the last session reached rather than the whole grid."""
        config, ticks = self.config, self.config.n_ticks
        low, high = self._touched
        for lots in (self._lots, self._public_lots):
            lots[:, low : high + 1] = 0
        depth = np.asarray(config.initial_depth, np.int64)[:, None]
        first = config.first_bid
        for lots in (self._lots, self._public_lots):
            lots[BUY, first - np.arange(len(depth))] = depth
            lots[SELL, first + 1 + np.arange(len(depth))] = depth
        self._touched[:] = first + 1 - len(depth), first + len(depth)
        filled = np.flatnonzero(depth)  # levels from the best out that hold lots
        self.best[:] = (first - filled[0], first + 1 + filled[0]) if len(filled) else (-1, ticks)
        self.ref[:] = first, first + 1  # the flow's reference for an empty side
        self.orders[:] = 0
        self.orders[..., PRICE] = -1
        self.placed[:] = 0
        self.accounts_cash[:] = config.initial_cash
        self.accounts_cash[:, -1] = 0.0
        self.accounts_inventory[:] = 0
        self.trade_count[:] = 0
        self._most_trades[:] = 0
        self.mid[:] = config.initial_price
        self._levels = None

    # -- views of the state -----------------------------------------------------------------
    @property
    def volume(self) -> NDArray[np.int64]:
        """(n, 2, ticks) lots per book, side and tick."""
        return self._lots.transpose(2, 0, 1)

    @property
    def public(self) -> NDArray[np.int64]:
        """(n, 2, ticks) the public's lots per book, side and tick."""
        return self._public_lots.transpose(2, 0, 1)

    @property
    def cash(self) -> NDArray[np.float64]:
        """(n, T) the traders' cash."""
        return self.accounts_cash[:, :-1]

    @property
    def inventory(self) -> NDArray[np.int64]:
        """(n, T) the traders' lots."""
        return self.accounts_inventory[:, :-1]

    @property
    def public_cash(self) -> NDArray[np.float64]:
        return self.accounts_cash[:, -1]

    @property
    def public_inventory(self) -> NDArray[np.int64]:
        return self.accounts_inventory[:, -1]

    @property
    def order_price(self) -> NDArray[np.int64]:
        """(n, 2, T) each trader's resting tick per side, -1 for none."""
        return self.orders[..., PRICE]

    @property
    def order_size(self) -> NDArray[np.int64]:
        return self.orders[..., SIZE]

    # -- queries ----------------------------------------------------------------------------
    def values(self) -> NDArray[np.float64]:
        """Marked-to-market value of each trader (n, T) at the mid (the last one if a side
        is empty)."""
        bid, ask = self.best[:, BUY], self.best[:, SELL]
        both = (bid >= 0) & (ask < self.config.n_ticks)
        self.mid = np.where(both, self.config.price((bid + ask) / 2), self.mid)
        return self.cash + self.inventory * self.mid[:, None]

    def view(self, trader: int, window: int) -> TraderView:
        """Trader ``trader``'s view of every book: the top levels within ``window`` ticks."""
        if self._levels is None:  # the same for every trader until the next event
            self._levels = np.empty((self.n, 2, self.config.book_levels, 2), np.int64)
            _top_levels(self._lots, self.best, window, self._levels)
        levels = self._levels
        own = [self.orders[:, side, trader, PRICE : SIZE + 1] for side in (BUY, SELL)]
        return TraderView.of(
            levels[:, BUY, :, 0],
            levels[:, BUY, :, 1],
            levels[:, SELL, :, 0],
            levels[:, SELL, :, 1],
            self.inventory[:, trader],
            self.cash[:, trader],
            own[0],
            own[1],
        )

    def book(self, b: int) -> BookView:
        """Book ``b`` read as an order book: levels, queues and its tape of trades."""
        return BookView(self, b)

    def trades(self, b: int) -> NDArray[np.void]:
        """Book ``b``'s tape since the session began, oldest first: a new array of
        ``TRADE_DTYPE`` records (time, price, size, taker_side, taker_owner, maker_owner)."""
        count = self._tape_length(b)
        out = np.empty(count, TRADE_DTYPE)
        out["time"] = self.tape_time[b, :count]
        for column, name in enumerate(_TAPE_FIELDS):
            out[name] = self.tape[b, :count, column]
        return out

    def _tape_length(self, b: int) -> int:
        """Trades on book ``b``'s tape; RuntimeError if a kernel had no room to write some."""
        count = int(self.trade_count[b])
        if count > self.tape.shape[1]:
            raise RuntimeError(
                f"book {b}'s tape lost trades: {count} made, room for {self.tape.shape[1]}"
            )
        return count

    def _make_room(self, trades: int) -> None:
        """Grow the tapes unless each has room for ``trades`` more."""
        if int(self._most_trades[0]) + trades > self.tape.shape[1]:
            self._grow(trades)

    def _grow(self, trades: int) -> None:
        """Give the tapes twice their rows, or room for ``trades`` more if that is more."""
        used = int(self._most_trades[0])
        rows = max(2 * self.tape.shape[1], used + trades)
        tape = np.zeros((self.n, rows, 5), np.int64)
        tape_time = np.zeros((self.n, rows))
        tape[:, :used] = self.tape[:, :used]
        tape_time[:, :used] = self.tape_time[:, :used]
        self.tape, self.tape_time = tape, tape_time
        self._state = (*self._state[:10], tape, tape_time, *self._state[12:])

    # -- events -----------------------------------------------------------------------------
    def execute(
        self,
        trader: int,
        bid: NDArray[Any],
        ask: NDArray[Any],
        market: NDArray[Any],
        time: float = 0.0,
    ) -> None:
        """Carry out trader ``trader``'s decoded decision in every book at session time
        ``time``: bid/ask tick, -1 keep or -2 cancel; market side or -1 (see
        ``MarketConfig.decode``), within the inventory cap."""
        self._levels = None
        self._make_room(self.config.order_size)  # a market order trades one lot per trade
        _execute(
            self._state,
            trader,
            np.ascontiguousarray(bid, np.int64),
            np.ascontiguousarray(ask, np.int64),
            np.ascontiguousarray(market, np.int64),
            self.config.order_size,
            self.config.max_inventory,
            float(time),
        )

    def run_flow(self, model: ContStoikovTalreja, rng: Any, start: float, until: float) -> int:
        """Every book's live flow from ``start`` up to (not including) ``until``; returns how
        many events were applied, summed over books."""
        kind, side, distance = _event_tables(model.levels)
        self._levels = None
        # the state-free rates' running sum, as sample_event adds them; the kernel adds the
        # cancel rates to it (scratch space: the kernels allocate nothing)
        cumulative = np.zeros(len(distance))
        fixed = list(itertools.accumulate(model._fixed_rates_list))
        cumulative[: len(fixed)] = fixed
        theta = np.asarray(model.cancel_rates, np.float64)
        queues = np.empty((2, model.levels), np.int64)
        position = self._flow_position
        position[:] = 0, start
        applied = 0
        while True:  # the kernel stops where a tape is full: grow it and go on from there
            applied += _run_flow(
                self._state,
                rng,
                theta,
                kind,
                side,
                distance,
                float(start),
                float(until),
                cumulative,
                queues,
                position,
            )
            if position[0] >= self.n:
                return applied
            self._grow(1)

    def replay(self, flow: FlowEvents, first: int, stop: int) -> None:
        """Events ``first`` up to ``stop`` of a given flow, in every book."""
        self._levels = None
        self._make_room(stop - first)  # each event trades one lot at most
        _replay(
            self._state,
            np.ascontiguousarray(flow.kind, np.int64),
            np.ascontiguousarray(flow.side, np.int64),
            np.ascontiguousarray(flow.price, np.int64),
            np.ascontiguousarray(flow.rank, np.int64),
            np.ascontiguousarray(flow.time, np.float64),
            first,
            stop,
        )


class BookView:
    """One book of a ``LevelBooks`` read as an order book, as ``OrderBook`` reports its own:
    prices are ticks, owners ``PUBLIC`` (0) and trader i as i + 1. It reads the arrays when
    asked, so it follows the book."""

    def __init__(self, books: LevelBooks, b: int) -> None:
        self._books = books
        self._b = b

    @property
    def best_bid(self) -> int | None:
        """The highest bid tick, or None when there are no bids."""
        bid = int(self._books.best[self._b, BUY])
        return bid if bid >= 0 else None

    @property
    def best_ask(self) -> int | None:
        """The lowest ask tick, or None when there are no asks."""
        ask = int(self._books.best[self._b, SELL])
        return ask if ask < self._books.config.n_ticks else None

    def volume(self, side: int, price: int) -> int:
        """Lots resting on ``side`` at ``price``."""
        return int(self._books.volume[self._b, side, price])

    def depth(self, side: int, levels: int) -> list[tuple[int, int]]:
        """Up to ``levels`` non-empty levels of ``side`` from the best: (price, lots) pairs."""
        lots = self._books.volume[self._b, side]
        ticks = np.flatnonzero(lots)
        ticks = ticks[::-1][:levels] if side == BUY else ticks[:levels]
        return [(int(tick), int(lots[tick])) for tick in ticks]

    def queue(self, side: int, price: int) -> list[tuple[int, int]]:
        """The level's orders in priority order as (owner, lots): the public's one-lot orders
        and the traders' resting orders where their queue positions put them."""
        books, b = self._books, self._b
        orders = books.orders[b, side]
        traders = sorted(np.flatnonzero(orders[:, PRICE] == price), key=lambda u: orders[u, SEQ])
        queue: list[tuple[int, int]] = []
        public_before = 0
        for u in traders:
            ahead = int(orders[u, AHEAD])
            queue += [(PUBLIC, 1)] * (ahead - public_before)
            public_before = max(public_before, ahead)
            queue.append((int(u) + 1, int(orders[u, SIZE])))
        return queue + [(PUBLIC, 1)] * (int(books.public[b, side, price]) - public_before)

    @property
    def trades(self) -> list[BookTrade]:
        """The tape: every trade since the session began, oldest first, as ``OrderBook.trades``
        lists them (one per resting order a taker traded with), each with its session time.
        Built from the arrays on each read (``LevelBooks.trades`` gives them as an array)."""
        books, b = self._books, self._b
        count = books._tape_length(b)
        rows = books.tape[b, :count].tolist()
        times = books.tape_time[b, :count].tolist()
        return [BookTrade._make((*row, time)) for row, time in zip(rows, times, strict=True)]

    @property
    def fills(self) -> list[Fill]:
        """The last lots traded (at most ``TAPE``), one per lot, oldest first; ``fill_count``
        counts them all."""
        books, b = self._books, self._b
        count = books._tape_length(b)
        last = books.tape[b, max(0, count - TAPE) : count]
        lots = np.repeat(last, last[:, SIZE], axis=0)[-TAPE:]
        return [Fill(p, side, taker, maker) for p, _, side, taker, maker in lots.tolist()]

    @property
    def fill_count(self) -> int:
        """Lots traded in this book since the session began."""
        books, b = self._books, self._b
        return int(books.tape[b, : books._tape_length(b), SIZE].sum())

    def is_crossed(self) -> bool:
        """True if the best bid reaches the best ask (never, after any event)."""
        return bool(self._books.best[self._b, BUY] >= self._books.best[self._b, SELL])


# -- compiled kernels: one book ``b`` at a time ------------------------------------------------
# ``state`` is LevelBooks._state: lots and public lots (side, tick, book), best, ref, orders,
# placed, cash, inventory, tick_price, touched (the lowest and highest tick a lot was placed at),
# tape, tape_time, trade_count, and the largest trade_count (one cell).
# Owners are trader columns; the public is the last column of the accounts. The kernels are
# compiled with reference counting off (``_engine.jit``), and small helpers are inlined
# into the loops that call them.
@inline
def _public(state: Any) -> int:
    """The public's account column: the one after the traders'."""
    return state[4].shape[2]


@inline
def _mark_touched(touched: Any, price: int) -> None:
    """Widen the range of ticks that ``LevelBooks.reset`` clears to hold ``price``."""
    if price < touched[0]:
        touched[0] = price
    if price > touched[1]:
        touched[1] = price


@jit
def _take(state: Any, b: int, side: int, taker: int, lots: int, time: float) -> None:
    """A market order of ``lots`` (``side`` is the taker's) at session time ``time``, lot by
    lot against the best opposite level, matched by the engine's rule (``match_level``) over
    the traders' queue positions, until it is filled or that side is empty. A trader meeting
    its own order first cancels it and goes on (self-trade prevention, OrderBook's
    ``"cancel_resting"``); the public trades with itself. The tape needs room for ``lots``
    trades."""
    volume, public, best = state[0], state[1], state[2]
    maker_side = 1 - side
    queue = (state, taker, state[12][b], time)  # the order's trades start at that tape row
    for _ in range(lots):
        while True:
            price = best[b, maker_side]
            if price < 0 or price >= volume.shape[1]:
                return
            if taker == _public(state):
                break
            first, ahead, _ = _first_order(queue, b, maker_side, price, 0)
            if first != taker or ahead > 0:
                break
            _cancel_order(state, b, taker, maker_side)
        match_level(volume, public, b, maker_side, price, 1, queue, _first_order, _fill, _leave)
        after_removal(volume, best, b, maker_side, price)


# The traders' queue as ``match_level`` reads it: ``queue`` is (state, taker, the tape row
# where the taker's order began trading, time).
@inline
def _first_order(queue: Any, b: int, side: int, price: int, public: int) -> Any:
    """The level's first trader order (the lowest placement number there; -1: none), the
    public lots ahead of it (``public``, all of them, if none) and its lots."""
    orders = queue[0][4]
    first = -1
    for u in range(orders.shape[2]):
        if orders[b, side, u, PRICE] == price and (
            first < 0 or orders[b, side, u, SEQ] < orders[b, side, first, SEQ]
        ):
            first = u
    if first < 0:
        return -1, public, 0
    return first, orders[b, side, first, AHEAD], orders[b, side, first, SIZE]


@inline
def _fill(queue: Any, b: int, side: int, price: int, maker: int, lots: int) -> None:
    """``lots`` of trader ``maker``'s order (-1: the public lots at the head) traded with the
    taker: the orders behind public lots move up, the accounts settle, and the tape records
    one trade per public lot, one per trader's order (lots of the order the taker's order
    traded with last add to its trade)."""
    state, taker, since, time = queue
    orders, cash, inventory = state[4], state[6], state[7]
    if maker < 0:
        maker = _public(state)
        for _ in range(lots):
            _public_gone(orders, b, side, price, 0)
    else:
        orders[b, side, maker, SIZE] -= lots
    value = state[8][price]
    buyer, seller = (maker, taker) if side == BUY else (taker, maker)
    settle(cash, inventory, b, buyer, BUY, lots, value, 0.0)
    settle(cash, inventory, b, seller, SELL, lots, value, 0.0)
    tape, count = state[10], state[12]
    taker_owner = _owner(state, taker)
    if maker == _public(state):
        for _ in range(lots):
            _record(state, b, price, 1, 1 - side, taker_owner, PUBLIC, time)
        return
    last = count[b] - 1
    if last >= since and tape[b, last, MAKER] == maker + 1 and tape[b, last, PRICE] == price:
        tape[b, last, SIZE] += lots
    else:
        _record(state, b, price, lots, 1 - side, taker_owner, maker + 1, time)


@inline
def _owner(state: Any, column: int) -> int:
    """The ``OrderBook`` owner of an account column: PUBLIC (0), trader i as i + 1."""
    return PUBLIC if column == _public(state) else column + 1


@inline
def _record(
    state: Any, b: int, price: int, size: int, side: int, taker: int, maker: int, time: float
) -> None:
    """A trade at the end of book ``b``'s tape. The caller made room for it; were there none,
    the trade is counted but not written (``LevelBooks.trades`` then refuses to read)."""
    tape, count = state[10], state[12]
    row = count[b]
    if row < tape.shape[1]:
        tape[b, row, PRICE] = price
        tape[b, row, SIZE] = size
        tape[b, row, TAKER_SIDE] = side
        tape[b, row, TAKER] = taker
        tape[b, row, MAKER] = maker
        state[11][b, row] = time
    count[b] = row + 1
    if row >= state[13][0]:
        state[13][0] = row + 1


@inline
def _leave(queue: Any, b: int, side: int, price: int, maker: int) -> None:
    """Trader ``maker``'s emptied order out of the queue."""
    queue[0][4][b, side, maker, PRICE] = -1


@inline
def _rest_public(state: Any, b: int, side: int, price: int) -> bool:
    """One public lot resting at ``price`` unless it is off the grid; False if it crosses
    (then it takes the best opposite lot instead: see :func:`_apply`)."""
    volume, public, best = state[0], state[1], state[2]
    if price < 0 or price >= volume.shape[1]:
        return True
    if price >= best[b, SELL] if side == BUY else price <= best[b, BUY]:
        return False
    add_anonymous(volume, public, b, side, price, 1)
    improve_best(best, b, side, price)
    _mark_touched(state[9], price)
    return True


@inline
def _cancel_public(state: Any, b: int, side: int, price: int, rank: int) -> None:
    """Cancel the ``rank``-th public lot of a level, where there is one."""
    volume, public, best, orders = state[0], state[1], state[2], state[4]
    if price < 0 or price >= volume.shape[1] or rank >= public[side, price, b]:
        return
    take_anonymous(volume, public, b, side, price, 1)
    _public_gone(orders, b, side, price, rank)
    after_removal(volume, best, b, side, price)


@inline
def _public_gone(orders: Any, b: int, side: int, price: int, rank: int) -> None:
    """The traders' queue positions after the ``rank``-th public lot of a level left it:
    the orders it was ahead of move up one."""
    for u in range(orders.shape[2]):
        if orders[b, side, u, PRICE] == price and orders[b, side, u, AHEAD] > rank:
            orders[b, side, u, AHEAD] -= 1


@inline
def _apply(state: Any, b: int, kind: int, side: int, price: int, rank: int, time: float) -> None:
    """One flow event in book ``b`` at session time ``time``: a limit order that crosses and a
    market order both take one lot (one call site, so the compiled loops hold one copy of
    :func:`_take`). The tape needs room for one trade."""
    if kind == CANCEL:
        _cancel_public(state, b, side, price, rank)
    elif kind == MARKET or not _rest_public(state, b, side, price):
        _take(state, b, side, _public(state), 1, time)


@inline
def _cancel_order(state: Any, b: int, trader: int, side: int) -> None:
    """Cancel trader ``trader``'s resting order on ``side`` if there is one."""
    volume, best, orders = state[0], state[2], state[4]
    price = orders[b, side, trader, PRICE]
    if price < 0:
        return
    volume[side, price, b] -= orders[b, side, trader, SIZE]
    orders[b, side, trader, PRICE] = -1
    orders[b, side, trader, SIZE] = 0
    after_removal(volume, best, b, side, price)


@inline
def _place(state: Any, b: int, trader: int, side: int, price: int, size: int) -> None:
    """Trader ``trader``'s new order (that does not cross) at the back of its level."""
    volume, public, best, orders, placed = state[0], state[1], state[2], state[4], state[5]
    orders[b, side, trader, AHEAD] = public[side, price, b]
    volume[side, price, b] += size
    orders[b, side, trader, PRICE] = price
    orders[b, side, trader, SIZE] = size
    placed[b] += 1
    orders[b, side, trader, SEQ] = placed[b]
    improve_best(best, b, side, price)
    _mark_touched(state[9], price)


@inline
def _cut_to_room(state: Any, b: int, trader: int, side: int, cap: int) -> None:
    """Cut ``trader``'s resting order on ``side`` to the room the cap leaves (it keeps its
    place in the queue), or cancel it if there is none."""
    volume, orders = state[0], state[4]
    price = orders[b, side, trader, PRICE]
    left = room(state[7][b, trader], side, cap)
    if price < 0 or orders[b, side, trader, SIZE] <= left:
        return
    if left <= 0:
        _cancel_order(state, b, trader, side)
    else:
        volume[side, price, b] -= orders[b, side, trader, SIZE] - left
        orders[b, side, trader, SIZE] = left


@jit
def _execute(
    state: Any, trader: int, bid: Any, ask: Any, market: Any, size: int, cap: int, time: float
) -> None:
    """Trader ``trader``'s decisions in every book at session time ``time`` (the tapes need
    room for ``size`` trades), as LimitOrderBookMarket carries them out:
    a new quote replaces the resting one (one already at that tick keeps its place); post-only,
    a quote that would cross is dropped; a market order first cancels the trader's own opposite
    quote (self-trade prevention). The inventory cap ``cap`` is hard: new quotes and market
    orders are cut to the room it leaves, and after a market order the trader's quote on its
    side is cut to the room left."""
    best, orders = state[2], state[4]
    for b in range(len(bid)):
        for side in range(2):
            instruction = bid[b] if side == BUY else ask[b]
            if instruction == -1 or instruction == orders[b, side, trader, PRICE]:
                continue
            _cancel_order(state, b, trader, side)
            if instruction >= 0:
                crosses = (
                    instruction >= best[b, SELL] if side == BUY else instruction <= best[b, BUY]
                )
                lots = min(size, room(state[7][b, trader], side, cap))
                if not crosses and lots > 0:
                    _place(state, b, trader, side, instruction, lots)
        if market[b] >= 0:
            side = market[b]
            _cancel_order(state, b, trader, 1 - side)
            lots = min(size, room(state[7][b, trader], side, cap))
            if lots > 0:
                _take(state, b, side, trader, lots, time)
                _cut_to_room(state, b, trader, side, cap)


@jit
def _run_flow(
    state: Any,
    rng: Any,
    theta: Any,
    kinds: Any,
    sides: Any,
    distances: Any,
    start: float,
    until: float,
    cumulative: Any,
    queues: Any,
    position: Any,
) -> int:
    """Each book's live flow from ``start`` to ``until``, book after book: the same draws and
    floating-point operations as :func:`sekai.finance.lob.flow.sample_event`, so the same
    events as the single env given the same generator. ``cumulative`` (4D + 2,) starts with
    the running sum of the 2D + 2 state-free rates; it and ``queues`` (2, D) are scratch.
    ``position`` is (book, clock): where to begin; if a book's tape is full before an event,
    the kernel stops there, before its draws, and leaves that book and its clock in
    ``position`` to go on from once the tape has grown; else book = the number of books."""
    volume, public, best, ref = state[0], state[1], state[2], state[3]
    ticks = volume.shape[1]
    levels = len(theta)
    events = len(kinds)
    fixed = events - 2 * levels
    fixed_total = cumulative[fixed - 1]
    applied = 0
    first = int(position[0])
    rows, count = state[10].shape[1], state[12]
    for b in range(first, volume.shape[2]):
        clock = position[1] if b == first else start
        while True:
            if count[b] >= rows:
                position[0], position[1] = b, clock
                return applied
            if best[b, BUY] >= 0:
                ref[b, BUY] = best[b, BUY]
            if best[b, SELL] < ticks:
                ref[b, SELL] = best[b, SELL]
            for i in range(levels):  # public lots 1 .. D ticks from the opposite reference
                price = ref[b, SELL] - 1 - i
                queues[BUY, i] = public[BUY, price, b] if 0 <= price < ticks else 0
                price = ref[b, BUY] + 1 + i
                queues[SELL, i] = public[SELL, price, b] if 0 <= price < ticks else 0
            u0, u1, u2 = rng.random(), rng.random(), rng.random()
            total = fixed_total
            k = fixed
            for side in range(2):
                for i in range(levels):
                    total += queues[side, i] * theta[i]
                    cumulative[k] = total
                    k += 1
            clock += -math.log1p(-u0) / total if total > 0 else math.inf
            if clock >= until:
                break
            threshold = u1 * total  # the event: the first whose running sum exceeds it
            choice = 0 if threshold < fixed_total else fixed
            while choice < events - 1 and cumulative[choice] <= threshold:
                choice += 1
            kind, side, distance = kinds[choice], sides[choice], distances[choice]
            price, rank = -1, 0
            if kind != MARKET:
                price = (ref[b, SELL] if side == BUY else ref[b, BUY]) + distance
            if kind == CANCEL:
                rank = math.floor(u2 * queues[side, abs(distance) - 1])
            _apply(state, b, kind, side, price, rank, clock)
            applied += 1
    position[0] = volume.shape[2]
    return applied


@jit
def _top_levels(volume: Any, best: Any, window: int, levels: Any) -> None:
    """(n, 2, K, 2) each book's first K filled levels of each side within ``window`` ticks of
    its best, best first, as tick and lots; tick -1 and 0 lots past the last one."""
    for b in range(volume.shape[2]):
        bid_limit = max(best[b, BUY] - window, -1)
        ask_limit = min(best[b, SELL] + window, volume.shape[1])
        top_levels(volume, best, b, bid_limit, ask_limit, levels[b])


@jit
def _replay(
    state: Any,
    kinds: Any,
    sides: Any,
    prices: Any,
    ranks: Any,
    times: Any,
    first: int,
    stop: int,
) -> None:
    for b in range(state[0].shape[2]):
        for j in range(first, stop):
            _apply(state, b, kinds[j], sides[j], prices[j], ranks[j], times[j])


__all__ = ["LevelBooks"]
