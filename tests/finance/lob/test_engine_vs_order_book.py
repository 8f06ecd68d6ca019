"""The compiled engine (``level_books``) against ``OrderBook``, the reference: the same random
public flow and trader orders go to both, and after every event the books agree on full depth,
each level's queue in priority order (the public's one-lot orders and the traders' orders, i.e.
queue positions), the fills, the tape of trades and every account."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from lob_checks import check_queue_positions

from sekai.finance import BUY, PUBLIC, SELL, FlowEvents, OrderBook
from sekai.finance.lob import level_books as engine
from sekai.finance.lob.flow import CANCEL, LIMIT, MARKET, apply_event, seed_book
from sekai.finance.lob.level_books import LevelBooks
from sekai.finance.lob.market import MarketConfig

TICKS = 24
TRADERS = 3


class Reference:
    """An OrderBook with the traders' instructions carried out as LimitOrderBookMarket did
    before it ran on the engine (post-only quotes, the inventory cap, the trader's opposite
    quote cancelled before its market order), and the accounts settled lot by lot."""

    def __init__(self, config: MarketConfig) -> None:
        self.config = config
        self.book = OrderBook(config.n_ticks)
        seed_book(self.book, config.initial_depth, config.first_bid)
        self.orders: list[list[int | None]] = [[None, None] for _ in range(TRADERS)]
        self.cash = {owner: config.initial_cash for owner in range(1, TRADERS + 1)}
        self.cash[PUBLIC] = 0.0
        self.shares = dict.fromkeys(self.cash, 0)
        self.tick_price = config.price(np.arange(config.n_ticks))
        self.read = 0  # trades settled so far
        self.unread: list[tuple[int, int, int, int]] = []  # their fills, since drain()

    def flow(self, kind: int, side: int, price: int, rank: int) -> None:
        apply_event(self.book, kind, side, price, rank)

    def take(self, trader: int, side: int, lots: int) -> None:
        """A trader's market order, with no quote cancelled first: self-trade prevention."""
        self.book.market(side, lots, trader + 1)

    def execute(self, trader: int, bid: int, ask: int, market: int) -> None:
        owner, size = trader + 1, self.config.order_size
        for side, instruction in ((BUY, bid), (SELL, ask)):
            order_id = self.resting(trader, side)
            if instruction == -1 or (
                order_id is not None and self.book.order(order_id).price == instruction
            ):
                continue
            if order_id is not None:
                self.book.cancel(order_id)
                self.orders[trader][side] = None
            best = self.book.best_ask if side == BUY else self.book.best_bid
            crosses = best is not None and (
                instruction >= best if side == BUY else instruction <= best
            )
            lots = min(size, self.room(trader, side))
            if instruction >= 0 and not crosses and lots > 0:
                self.orders[trader][side] = self.book.add(side, instruction, lots, owner)
        if market >= 0:
            own = self.resting(trader, 1 - market)
            if own is not None:
                self.book.cancel(own)
                self.orders[trader][1 - market] = None
            lots = min(size, self.room(trader, market))
            if lots > 0:
                self.book.market(market, lots, owner)
                self.settle()
                order_id = self.resting(trader, market)
                room = self.room(trader, market)
                if order_id is not None and room <= 0:
                    self.book.cancel(order_id)
                    self.orders[trader][market] = None
                elif order_id is not None and self.book.order(order_id).size > room:
                    self.book.cancel(order_id, self.book.order(order_id).size - room)

    def room(self, trader: int, side: int) -> int:
        held = self.shares[trader + 1]
        cap = self.config.max_inventory
        return cap - held if side == BUY else cap + held

    def resting(self, trader: int, side: int) -> int | None:
        order_id = self.orders[trader][side]
        if order_id is not None and order_id not in self.book:
            self.orders[trader][side] = order_id = None
        return order_id

    def drain(self) -> list[tuple[int, int, int, int]]:
        """Every trade since the last call, as one-lot fills, after booking them."""
        self.settle()
        fills, self.unread = self.unread, []
        return fills

    def settle(self) -> None:
        """Book the new trades to the accounts, lot by lot."""
        for trade in self.book.trades[self.read :]:
            value = self.tick_price[trade.price]
            buyer, seller = (
                (trade.taker_owner, trade.maker_owner)
                if trade.taker_side == BUY
                else (trade.maker_owner, trade.taker_owner)
            )
            for _ in range(trade.size):
                self.shares[buyer] += 1
                self.cash[buyer] -= value
                self.shares[seller] -= 1
                self.cash[seller] += value
                fill = (trade.price, trade.taker_side, trade.taker_owner, trade.maker_owner)
                self.unread.append(fill)
        self.read = len(self.book.trades)


def assert_same(books: LevelBooks, reference: Reference, seen: int, fills: list[Any]) -> int:
    """Compare after one event; return the engine's fill count."""
    view, book = books.book(0), reference.book
    assert (view.best_bid, view.best_ask) == (book.best_bid, book.best_ask)
    for side in (BUY, SELL):
        depth = book.depth(side, TICKS)
        assert view.depth(side, TICKS) == depth
        for price, _ in depth:
            expected = [(order.owner, order.size) for order in book.queue(side, price)]
            assert view.queue(side, price) == expected, (side, price)
    new = view.fill_count - seen
    assert new <= engine.TAPE
    recent = view.fills
    assert [tuple(fill) for fill in recent[len(recent) - new :]] == fills
    column = [*range(1, TRADERS + 1), PUBLIC]  # account column -> owner
    assert books.accounts_inventory[0].tolist() == [reference.shares[o] for o in column]
    assert books.accounts_cash[0].tolist() == [reference.cash[o] for o in column]
    check_queue_positions(books)
    assert [trade[:5] for trade in view.trades] == [
        (t.price, t.size, t.taker_side, t.taker_owner, t.maker_owner) for t in book.trades
    ]
    return view.fill_count


def draw_event(data: Any, reference: Reference) -> tuple[Any, ...]:
    """A random event aimed where the orders are: ticks near the quotes, and public cancels
    mostly of a lot that exists (any rank of a level holding public lots)."""
    book = reference.book
    bid = book.best_bid if book.best_bid is not None else TICKS // 2
    ask = book.best_ask if book.best_ask is not None else TICKS // 2 + 1
    near = st.integers(max(min(bid, ask) - 3, 0), min(max(bid, ask) + 3, TICKS - 1))
    sides = st.sampled_from([BUY, SELL])
    kind = data.draw(st.sampled_from(["limit", "market", "cancel", "trader", "take"]))
    if kind == "limit":
        return ("flow", LIMIT, data.draw(sides), data.draw(near), 0)
    if kind == "market":
        return ("flow", MARKET, data.draw(sides), -1, 0)
    if kind == "cancel":
        levels = [
            (side, price, sum(order.owner == PUBLIC for order in book.queue(side, price)))
            for side in (BUY, SELL)
            for price, _ in book.depth(side, TICKS)
        ]
        levels = [level for level in levels if level[2]]
        if not levels or data.draw(st.integers(0, 9)) == 0:
            return ("flow", CANCEL, data.draw(sides), data.draw(near), data.draw(st.integers(0, 3)))
        side, price, public = data.draw(st.sampled_from(levels))
        return ("flow", CANCEL, side, price, data.draw(st.integers(0, public)))
    trader = data.draw(st.integers(0, TRADERS - 1))
    if kind == "take":
        return ("take", trader, data.draw(sides), data.draw(st.integers(1, 4)))
    quote = st.one_of(st.integers(-2, -1), near, near)  # a tick; -1 keep, -2 cancel
    market = st.sampled_from([-1, -1, -1, BUY, SELL])
    return ("trader", trader, data.draw(quote), data.draw(quote), data.draw(market))


@settings(max_examples=300, deadline=None)
@given(
    depth=st.lists(st.integers(0, 3), min_size=1, max_size=5),
    order_size=st.integers(1, 3),
    max_inventory=st.integers(1, 4),
    events=st.integers(0, 150),
    data=st.data(),
)
def test_the_engine_matches_the_order_book_after_every_event(
    depth: list[int], order_size: int, max_inventory: int, events: int, data: Any
) -> None:
    none = np.zeros(0, np.int64)
    config = MarketConfig.build(
        TRADERS,
        n_ticks=TICKS,
        order_size=order_size,
        max_inventory=max_inventory,
        flow=FlowEvents(none.astype(float), none, none, none, none, initial_depth=tuple(depth)),
    )
    books, reference = LevelBooks(config, 1), Reference(config)
    seen = assert_same(books, reference, 0, [])
    for _ in range(events):
        event = draw_event(data, reference)
        if event[0] == "flow":
            books._make_room(1)  # the kernels write where the caller made room
            engine._apply(books._state, 0, *event[1:], 0.0)
            reference.flow(*event[1:])
        elif event[0] == "take":
            _, trader, side, lots = event
            books._make_room(lots)
            engine._take(books._state, 0, side, trader, lots, 0.0)
            reference.take(trader, side, lots)
        else:
            _, trader, bid, ask, market = event
            books.execute(trader, *(np.array([value]) for value in (bid, ask, market)))
            reference.execute(trader, bid, ask, market)
        seen = assert_same(books, reference, seen, reference.drain())
