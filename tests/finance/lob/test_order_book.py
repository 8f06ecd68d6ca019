"""OrderBook: price-time priority, partial fills, cancels, modifies, self-trade prevention, and
a property test that checks every invariant after each message of random sequences."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sekai.finance import BUY, LEGACY, PUBLIC, SELL, OrderBook, TradingHalted


def fills(book: OrderBook, start: int = 0) -> list[tuple[int, int, int]]:
    """(maker id, price, size) of each trade from ``start`` on."""
    return [(t.maker_id, t.price, t.size) for t in book.trades[start:]]


def test_market_order_fills_by_price_then_time_across_levels() -> None:
    book = OrderBook(100)
    a = book.add(SELL, 51, 2)
    b = book.add(SELL, 50, 3)
    c = book.add(SELL, 50, 4)
    d = book.add(SELL, 52, 5)
    assert book.market(BUY, 10) == 10
    assert fills(book) == [(b, 50, 3), (c, 50, 4), (a, 51, 2), (d, 52, 1)]
    assert book.best_ask == 52 and book.order(d).size == 4
    assert a not in book and b not in book and c not in book


def test_crossing_limit_order_trades_up_to_its_price_and_rests_the_rest() -> None:
    book = OrderBook(100)
    book.add(SELL, 50, 2)
    far = book.add(SELL, 53, 2)
    bid = book.add(BUY, 51, 5)
    assert [t.price for t in book.trades] == [50]
    assert book.order(bid).size == 3 and book.best_bid == 51 and book.best_ask == 53
    assert book.order(far).size == 2
    assert not book.is_crossed()


def test_cancel_in_the_middle_of_a_queue_keeps_the_others_order() -> None:
    book = OrderBook(100)
    first, middle, last = (book.add(BUY, 40, size) for size in (1, 2, 3))
    book.cancel(middle)
    assert [o.order_id for o in book.queue(BUY, 40)] == [first, last]
    assert book.volume(BUY, 40) == 4
    book.market(SELL, 3)
    assert fills(book) == [(first, 40, 1), (last, 40, 2)]
    assert book.order(last).size == 1


def test_partial_cancel_keeps_priority_and_full_cancel_moves_the_best() -> None:
    book = OrderBook(100)
    a = book.add(SELL, 60, 5)
    b = book.add(SELL, 60, 1)
    book.cancel(a, 3)
    book.market(BUY, 2)
    assert fills(book) == [(a, 60, 2)]
    book.cancel(b)
    assert book.best_ask is None and len(book) == 0


def test_modify_down_keeps_priority_up_or_moved_goes_to_the_back() -> None:
    book = OrderBook(100)
    a = book.add(BUY, 30, 5)
    b = book.add(BUY, 30, 5)
    book.modify(a, size=4)
    assert [o.order_id for o in book.queue(BUY, 30)] == [a, b]
    book.modify(a, size=6)
    assert [o.order_id for o in book.queue(BUY, 30)] == [b, a]
    book.modify(b, price=31)
    assert book.best_bid == 31 and book.order(b).price == 31 and book.volume(BUY, 30) == 6


@pytest.mark.parametrize("policy", ["cancel_resting", "cancel_incoming"])
def test_self_trade_prevention(policy: str) -> None:
    book = OrderBook(100, self_trade=policy)  # type: ignore[arg-type]
    own = book.add(SELL, 50, 2, owner=7)
    other = book.add(SELL, 50, 2, owner=8)
    filled = book.market(BUY, 3, owner=7)
    assert all(t.maker_owner != t.taker_owner for t in book.trades)
    if policy == "cancel_resting":
        assert own not in book and filled == 2 and other not in book
    else:
        assert own in book and filled == 0 and book.order(other).size == 2


def test_public_owner_is_exempt_from_self_trade_prevention() -> None:
    book = OrderBook(100)
    book.add(SELL, 50, 1)
    assert book.market(BUY, 1) == 1
    assert book.trades[0].maker_owner == book.trades[0].taker_owner == PUBLIC


def test_sides_emptied_and_refilled_at_the_edges_of_the_grid() -> None:
    book = OrderBook(10)
    low, high = book.add(BUY, 0, 2), book.add(SELL, 9, 2)
    assert (book.best_bid, book.best_ask) == (0, 9)
    assert book.depth(BUY, 10) == [(0, 2)] and book.depth(SELL, 10) == [(9, 2)]
    assert book.market(SELL, 5) == 2 and book.market(BUY, 5) == 2
    assert book.best_bid is None and book.best_ask is None and low not in book
    assert book.depth(BUY, 10) == [] and book.depth(SELL, 10) == []
    book.add(BUY, 4, 1)
    book.add(BUY, 2, 1)
    book.add(SELL, 7, 1)
    book.cancel(book.add(SELL, 5, 1))  # the best ask goes back to 7, skipping empty 6
    assert (book.best_bid, book.best_ask) == (4, 7) and high not in book
    assert book.depth(BUY, 1) == [(4, 1)] and book.depth(BUY, 10) == [(4, 1), (2, 1)]
    assert book.add(SELL, 0, 3) and book.best_bid is None and book.best_ask == 0


def test_market_order_into_an_empty_side_fills_nothing() -> None:
    book = OrderBook(10)
    assert book.market(SELL, 5) == 0 and book.trades == []


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda b: b.add(2, 5, 1), "side must be BUY"),
        (lambda b: b.add(BUY, 10, 1), "price must be a tick in"),
        (lambda b: b.add(BUY, 5, 0), "size must be a positive"),
        (lambda b: b.market(SELL, -1), "size must be a positive"),
    ],
)
def test_bad_orders_are_value_errors(call, match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=match):
        call(OrderBook(10))


def test_unknown_order_is_a_key_error_and_duplicate_ids_are_refused() -> None:
    book = OrderBook(10)
    book.add(BUY, 3, 1, order_id=42)
    with pytest.raises(KeyError, match="order 7"):
        book.cancel(7)
    with pytest.raises(ValueError, match="order id 42"):
        book.add(SELL, 8, 1, order_id=42)


# -- property test ------------------------------------------------------------------------
N_TICKS = 12
messages = st.lists(
    st.one_of(
        st.tuples(
            st.just("add"),
            st.sampled_from([BUY, SELL]),
            st.integers(0, N_TICKS - 1),
            st.integers(1, 5),
            st.integers(0, 3),
        ),
        st.tuples(
            st.just("market"), st.sampled_from([BUY, SELL]), st.integers(1, 8), st.integers(0, 3)
        ),
        st.tuples(st.just("cancel"), st.integers(0, 40), st.one_of(st.none(), st.integers(1, 4))),
        st.tuples(
            st.just("modify"), st.integers(0, 40), st.integers(0, N_TICKS - 1), st.integers(1, 5)
        ),
    ),
    max_size=60,
)


class ReferenceBook:
    """The obvious, slow model: every resting order in one list, matched by sorting."""

    def __init__(self) -> None:
        self.orders: dict[int, list[int]] = {}  # id -> [side, price, size, owner, time]
        self.clock = 0
        self.filled = 0

    def match(self, side: int, size: int, limit: int | None, owner: int, policy: str) -> int:
        """Trade; return what is left to rest. ``self.filled`` is what traded."""
        self.filled = 0
        while size:
            makers = sorted(
                (o for o in self.orders.items() if o[1][0] != side),
                key=lambda o: (o[1][1] if side == BUY else -o[1][1], o[1][4]),
            )
            if not makers:
                break
            order_id, (_, price, resting, maker_owner, _) = makers[0]
            if limit is not None and (price > limit if side == BUY else price < limit):
                break
            if owner != PUBLIC and maker_owner == owner:
                if policy == "cancel_incoming":
                    return 0
                del self.orders[order_id]
                continue
            fill = min(size, resting)
            size -= fill
            self.filled += fill
            self.orders[order_id][2] -= fill
            if self.orders[order_id][2] == 0:
                del self.orders[order_id]
        return size


@settings(max_examples=150, deadline=None)
@given(messages, st.sampled_from(["cancel_resting", "cancel_incoming"]))
def test_random_message_sequences_keep_every_invariant(sequence, policy) -> None:  # type: ignore[no-untyped-def]
    book = OrderBook(N_TICKS, self_trade=policy)
    reference = ReferenceBook()
    positions: dict[int, int] = {}  # owner -> net shares from the tape
    for message in sequence:
        tape = len(book.trades)
        if message[0] == "add":
            _, side, price, size, owner = message
            left = reference.match(side, size, price, owner, policy)
            order_id = book.add(side, price, size, owner)
            if left:
                reference.clock += 1
                reference.orders[order_id] = [side, price, left, owner, reference.clock]
        elif message[0] == "market":
            _, side, size, owner = message
            reference.match(side, size, None, owner, policy)
            assert book.market(side, size, owner) == reference.filled
        elif message[0] == "cancel":
            _, order_id, size = message
            if order_id not in reference.orders:
                assert order_id not in book
                continue
            book.cancel(order_id, size)
            if size is None or size >= reference.orders[order_id][2]:
                del reference.orders[order_id]
            else:
                reference.orders[order_id][2] -= size
        else:
            _, order_id, price, size = message
            if order_id not in reference.orders:
                continue
            side, old_price, old_size, owner, _ = reference.orders[order_id]
            book.modify(order_id, price=price, size=size)
            if price == old_price and size <= old_size:
                reference.orders[order_id][2] = size
            else:
                del reference.orders[order_id]
                left = reference.match(side, size, price, owner, policy)
                if left:
                    reference.clock += 1
                    reference.orders[order_id] = [side, price, left, owner, reference.clock]

        # the book never crosses, and matches the reference order by order
        assert not book.is_crossed()
        assert {i: (o[0], o[1], o[2], o[3]) for i, o in reference.orders.items()} == {
            i: (book.order(i).side, book.order(i).price, book.order(i).size, book.order(i).owner)
            for i in reference.orders
        }
        assert len(book) == len(reference.orders)
        for side in (BUY, SELL):
            levels = book.depth(side, N_TICKS)
            prices = [p for p, _ in levels]
            assert prices == sorted(prices, reverse=side == BUY)
            for price, volume in levels:
                queue = book.queue(side, price)
                assert volume == sum(o.size for o in queue) > 0
                times = [reference.orders[o.order_id][4] for o in queue]
                assert times == sorted(times)  # time priority within the level
        # shares are conserved through matching: every trade moves them between two owners
        for trade in book.trades[tape:]:
            assert trade.size > 0
            assert trade.taker_owner == PUBLIC or trade.taker_owner != trade.maker_owner
            sign = 1 if trade.taker_side == BUY else -1
            positions[trade.taker_owner] = positions.get(trade.taker_owner, 0) + sign * trade.size
            positions[trade.maker_owner] = positions.get(trade.maker_owner, 0) - sign * trade.size
        assert sum(positions.values()) == 0


# -- bad input never corrupts a book ----------------------------------------------------------
def small_book() -> OrderBook:
    """Bids of 2 and 3 lots at 4, an ask of 2 at 6 (owner 7), legacy volume of 5 at 3."""
    book = OrderBook(10)
    book.add(BUY, 4, 2, order_id=1)
    book.add(BUY, 4, 3, owner=7, order_id=2)
    book.add(SELL, 6, 2, owner=7, order_id=3)
    book.add_legacy(BUY, 3, 5)
    return book


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda b: b.add(SELL, 3.5, 1), TypeError, "price must be an int, got 3.5"),
        (lambda b: b.add(BUY, 10.5, 1), TypeError, "price must be an int"),
        (lambda b: b.add(BUY, 5, 1.5), TypeError, "size must be an int, got 1.5"),
        (lambda b: b.add(BUY, 5, math.nan), TypeError, "size must be an int, got nan"),
        (lambda b: b.add(BUY, 5, True), TypeError, "size must be an int, got True"),
        (lambda b: b.add(BUY, 5, 0), ValueError, "size must be a positive int, got 0"),
        (lambda b: b.add(BUY, 5, -1), ValueError, "size must be a positive int, got -1"),
        (lambda b: b.add(2, 5, 1), ValueError, "side must be BUY"),
        (lambda b: b.add(SELL, 2, 1, owner=-1), ValueError, "owner must be PUBLIC"),
        (lambda b: b.add(SELL, 2, 1, owner=1.0), TypeError, "owner must be an int"),
        (lambda b: b.add(SELL, 2, 1, order_id=0), ValueError, "order id must be a positive"),
        (lambda b: b.add(SELL, 2, 1, order_id=9.0), TypeError, "order id must be an int"),
        (lambda b: b.add(SELL, 2, 1, order_id=1), ValueError, "order id 1 is already resting"),
        (lambda b: b.market(BUY, 1.5), TypeError, "size must be an int"),
        (lambda b: b.market(2, 1), ValueError, "side must be BUY"),
        (lambda b: b.market(SELL, 0), ValueError, "size must be a positive int"),
        (lambda b: b.cancel(1.0), TypeError, "order id must be an int"),
        (lambda b: b.cancel(99), KeyError, "order 99 is not resting"),
        (lambda b: b.cancel(1, 0), ValueError, "cancel size must be a positive int"),
        (lambda b: b.cancel(1, 1.5), TypeError, "cancel size must be an int"),
        (lambda b: b.modify(1, price=10.5), TypeError, "price must be an int"),
        (lambda b: b.modify(1, price=6.0, size=1), TypeError, "price must be an int"),
        (lambda b: b.modify(1, price=10), ValueError, "price must be a tick"),
        (lambda b: b.modify(1, size=0), ValueError, "size must be a positive int"),
        (lambda b: b.execute(1, 3), ValueError, "up to order 1's 2, got 3"),
        (lambda b: b.execute(99, 1), KeyError, "order 99 is not resting"),
        (lambda b: b.add_legacy(BUY, 6, 1), ValueError, "would cross the other side"),
        (lambda b: b.cancel_legacy(BUY, 3, math.nan), TypeError, "size must be an int"),
        (lambda b: b.record_trade(4, 1, 2), ValueError, "side must be BUY"),
    ],
)
def test_a_refused_call_leaves_the_book_untouched(call, error, match: str) -> None:  # type: ignore[no-untyped-def]
    book = small_book()
    before = copy.deepcopy(vars(book))
    with pytest.raises(error, match=match):
        call(book)
    assert vars(book) == before
    assert book.depth(BUY, 5) == [(4, 5), (3, 5)] and book.best_ask == 6 and book.trades == []


def test_numpy_integers_are_ints() -> None:
    book = OrderBook(10)
    order_id = book.add(np.int64(BUY), np.int32(4), np.int64(2), np.uint8(3), np.int64(50))
    assert order_id == 50 and type(book.order(50).price) is int
    book.cancel(np.int64(50), np.int16(1))
    assert book.order(50).size == 1
    assert book.market(np.int64(SELL), np.int64(5)) == 1


def test_execute_trades_the_named_order_whatever_rests_ahead() -> None:
    book = small_book()
    book.execute(2, 1)  # order 2 is behind order 1 at tick 4
    assert book.order(1).size == 2 and book.order(2).size == 2 and book.volume(BUY, 4) == 4
    book.execute(2, 2)
    assert 2 not in book and [o.order_id for o in book.queue(BUY, 4)] == [1]
    assert [(t.maker_id, t.price, t.size, t.taker_side, t.taker_id) for t in book.trades] == [
        (2, 4, 1, SELL, 0),
        (2, 4, 2, SELL, 0),
    ]
    book.execute(1, 2)  # the level empties: the best bid moves down to the legacy volume
    assert book.best_bid == 3


def test_legacy_volume_rests_ahead_of_every_order_at_its_level() -> None:
    book = OrderBook(10)
    early = book.add(SELL, 6, 2, owner=7)
    book.add_legacy(SELL, 6, 3)  # volume the records never announced: ahead of ``early``
    book.add_legacy(SELL, 6, 1)  # one legacy record per level
    assert [(o.order_id, o.owner, o.size) for o in book.queue(SELL, 6)] == [
        (0, LEGACY, 4),
        (early, 7, 2),
    ]
    assert len(book) == 1 and book.volume(SELL, 6) == 6
    # owner 7 trades with legacy volume (no self-trade prevention), then meets its own order
    assert book.market(BUY, 5, owner=7) == 4
    assert [(t.maker_id, t.maker_owner, t.size) for t in book.trades] == [(0, LEGACY, 4)]
    assert early not in book and book.best_ask is None


def test_legacy_volume_is_cancelled_and_executed_as_far_as_there_is_some() -> None:
    book = OrderBook(10)
    book.add_legacy(BUY, 4, 5)
    later = book.add(BUY, 4, 2)
    assert book.cancel_legacy(BUY, 4, 2) == 2 and book.volume(BUY, 4) == 5
    assert book.execute_legacy(BUY, 4, 10) == 3
    assert book.cancel_legacy(BUY, 4, 1) == 0 and book.execute_legacy(BUY, 5, 1) == 0
    assert [(o.order_id, o.size) for o in book.queue(BUY, 4)] == [(later, 2)]
    assert [(t.price, t.size, t.maker_owner, t.taker_side) for t in book.trades] == [
        (4, 3, LEGACY, SELL)
    ]
    book.add_legacy(BUY, 4, 1)  # comes back at the head
    assert [o.owner for o in book.queue(BUY, 4)] == [LEGACY, PUBLIC]


def test_a_halt_stops_traders_from_trading_until_resumed() -> None:
    book = small_book()
    book.halt()
    assert book.halted
    before = copy.deepcopy(vars(book))
    for call in (
        lambda: book.market(BUY, 1, owner=5),
        lambda: book.add(BUY, 6, 1, owner=5),
        lambda: book.modify(2, price=6),
        lambda: book.execute(3, 1),
    ):
        with pytest.raises(TradingHalted, match="trading is halted"):
            call()
        assert vars(book) == before
    assert isinstance(TradingHalted("x"), ValueError)
    resting = book.add(BUY, 5, 1, owner=5)  # quoting and cancelling go on
    book.cancel(resting)
    book.add(BUY, 6, 1)  # the public (a replayed feed) is not stopped
    book.resume()
    assert not book.halted and book.market(BUY, 1, owner=5) == 1


# a mix of good and bad values for each argument: ints in and out of range, floats, bools,
# NaN, numpy integers
N_BAD = 8
ticks = st.sampled_from([0, 3, 4, 5, 7, N_BAD - 1, -1, N_BAD, 4.5, True, np.int64(4), math.nan])
sizes = st.sampled_from([1, 2, 3, 5, 0, -1, 1.5, math.nan, True, np.int64(2)])
sides = st.sampled_from([BUY, SELL, 2, -1, True, 0.0, np.int64(1)])
owners = st.sampled_from([PUBLIC, 1, 2, -1, 1.0, False])
ids = st.sampled_from([1, 2, 3, 4, 5, 6, 8, 12, 0, -3, 2.0, None, np.int64(3)])
calls = st.lists(
    st.one_of(
        st.tuples(st.just("add"), sides, ticks, sizes, owners, ids),
        st.tuples(st.just("market"), sides, sizes, owners),
        st.tuples(st.just("cancel"), ids, st.one_of(st.none(), sizes)),
        st.tuples(st.just("modify"), ids, st.one_of(st.none(), ticks), st.one_of(st.none(), sizes)),
        st.tuples(st.just("execute"), ids, sizes),
        st.tuples(
            st.sampled_from(["add_legacy", "cancel_legacy", "execute_legacy", "record_trade"]),
            sides,
            ticks,
            sizes,
        ),
        st.tuples(st.sampled_from(["halt", "resume"])),
    ),
    max_size=40,
)


def call_book(book: OrderBook, call: tuple) -> None:  # type: ignore[type-arg]
    name, *args = call
    if name == "add":
        side, price, size, owner, order_id = args
        book.add(side, price, size, owner, order_id)
    elif name == "modify":
        order_id, price, size = args
        book.modify(order_id, price=price, size=size)
    elif name == "record_trade":
        side, price, size = args
        book.record_trade(price, size, side)
    else:
        getattr(book, name)(*args)


@settings(max_examples=200, deadline=None)
@given(calls, st.sampled_from(["cancel_resting", "cancel_incoming"]))
def test_random_good_and_bad_calls_never_corrupt_the_book(sequence, policy) -> None:  # type: ignore[no-untyped-def]
    book = OrderBook(N_BAD, self_trade=policy)
    for call in sequence:
        before = copy.deepcopy(vars(book))
        try:
            call_book(book, call)
        except (TypeError, ValueError, KeyError):
            # depth, every queue, the orders, the tape, the next id and the halt as they were
            assert vars(book) == before, call
            continue
        assert not book.is_crossed()
        for side in (BUY, SELL):
            for price, volume in book.depth(side, N_BAD):
                queue = book.queue(side, price)
                assert volume == sum(o.size for o in queue) > 0
                assert all(type(o.size) is int and type(o.price) is int for o in queue)
                assert all(o.owner == LEGACY for o in queue[:1] if o.order_id == 0)
        assert all(type(t.size) is int and t.size > 0 for t in book.trades)
