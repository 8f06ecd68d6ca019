"""OrderBook: a limit order book with price-time priority on an integer tick grid.

Prices are tick indices ``0 .. n_ticks - 1`` (convert with your own tick size); sizes are
positive integers (lots). Each price level holds a FIFO queue of order records; a cancelled
order is only marked empty and skipped when matching reaches it, so a cancel in the middle of a
queue costs O(1). Per-level volumes live in plain lists and which levels are non-empty in a
bytearray per side, so the next best price is one C-level byte search (``find``/``rfind``),
never a Python loop over empty ticks nor a sort.

Owners are integers: owner 0 is the anonymous public (background flow), exempt from self-trade
prevention; any other owner never trades with itself. Legacy volume (owner LEGACY, id 0) stands
for orders that rested before the book's records begin: one record per level at the head of its
queue, so it is ahead of every later order there.

Every event checks all its arguments before it changes anything: a refused call (TypeError for
a float or a bool where an int belongs, ValueError for a bad value, KeyError for an unknown
order, TradingHalted for a trader's trade during a halt) leaves the book as it was.
"""

from __future__ import annotations

import numbers
from collections import deque
from typing import Literal, NamedTuple

BUY = 0
SELL = 1
PUBLIC = 0  # the anonymous owner: background flow, replayed messages
LEGACY = -1  # the owner of legacy volume: orders resting before the book's records begin
_LEGACY_ID = 0  # the id of legacy volume on the tape; orders have positive ids

SelfTradePolicy = Literal["cancel_resting", "cancel_incoming"]
_SELF_TRADE_POLICIES = ("cancel_resting", "cancel_incoming")

# An order record is a list [order_id, owner, size, price, side]; these index it.
_ID, _OWNER, _SIZE, _PRICE, _SIDE = range(5)
_Queue = deque[list[int]]  # one price level's records, oldest first
# builds a Trade or an Order from a tuple without the Python-level NamedTuple __new__ (its
# frame costs more than the rest of a fill)
_tuple_new = tuple.__new__


class Trade(NamedTuple):
    """One fill on the tape: the taker (incoming order) traded ``size`` at ``price``."""

    price: int
    size: int
    taker_side: int  # BUY or SELL
    taker_id: int
    maker_id: int
    taker_owner: int
    maker_owner: int


class TradingHalted(ValueError):
    """A trader's order would trade while the book is halted (``OrderBook.halted``)."""


class Order(NamedTuple):
    """A resting order as ``OrderBook.order`` reports it."""

    order_id: int
    owner: int
    side: int
    price: int
    size: int


class OrderBook:
    """A price-time priority limit order book with partial fills, cancels, modifies, market
    orders, self-trade prevention and a trade tape (``trades``); for replaying a feed, also
    executions of a given order, legacy volume and trading halts.

    ``self_trade``: when an owner's incoming order meets its own resting order,
    ``"cancel_resting"`` cancels the resting order and goes on matching; ``"cancel_incoming"``
    cancels what is left of the incoming order.
    """

    def __init__(self, n_ticks: int, *, self_trade: SelfTradePolicy = "cancel_resting") -> None:
        if isinstance(n_ticks, bool) or not isinstance(n_ticks, int) or n_ticks < 2:
            raise ValueError(f"n_ticks must be an int of at least 2, got {n_ticks!r}")
        if self_trade not in _SELF_TRADE_POLICIES:
            raise ValueError(
                f"self_trade must be one of {_SELF_TRADE_POLICIES}, got {self_trade!r}"
            )
        self.n_ticks = n_ticks
        self.self_trade: SelfTradePolicy = self_trade
        self.trades: list[Trade] = []
        # a level's queue is made when an order first rests there: thousands of empty queues
        # made up front cost time per book and are young objects for the garbage collector to
        # walk and promote while the book is in use
        self._queues: tuple[list[_Queue | None], list[_Queue | None]] = (
            [None] * n_ticks,
            [None] * n_ticks,
        )
        self._volume = ([0] * n_ticks, [0] * n_ticks)
        # occupied[side][price] is 1 exactly where volume[side][price] > 0. The ask side has a
        # set sentinel at n_ticks, so a search up from any ask finds n_ticks ("no asks") at
        # worst; a search down the bids finds -1 ("no bids") by itself.
        self._occupied = (bytearray(n_ticks), bytearray(n_ticks) + b"\x01")
        self._orders: dict[int, list[int]] = {}
        self._bid = -1  # best bid tick, -1 when no bids
        self._ask = n_ticks  # best ask tick, n_ticks when no asks
        self._next_id = 1
        self._halted = False

    # -- queries ----------------------------------------------------------------------------
    @property
    def best_bid(self) -> int | None:
        """The highest bid tick, or None when there are no bids."""
        return self._bid if self._bid >= 0 else None

    @property
    def best_ask(self) -> int | None:
        """The lowest ask tick, or None when there are no asks."""
        return self._ask if self._ask < self.n_ticks else None

    def volume(self, side: int, price: int) -> int:
        """Total resting size on ``side`` at ``price``."""
        return self._volume[side][price]

    def depth(self, side: int, levels: int) -> list[tuple[int, int]]:
        """Up to ``levels`` non-empty levels of ``side`` from the best: (price, volume) pairs."""
        volume, occupied = self._volume[side], self._occupied[side]
        result: list[tuple[int, int]] = []
        if side == BUY:
            price = self._bid
            while price >= 0 and len(result) < levels:
                result.append((price, volume[price]))
                price = occupied.rfind(1, 0, price)
        else:
            price = self._ask
            while price < self.n_ticks and len(result) < levels:
                result.append((price, volume[price]))
                price = occupied.find(1, price + 1)
        return result

    def queue(self, side: int, price: int) -> list[Order]:
        """The live orders at one level, in priority order (legacy volume first, as an Order
        with id 0 and owner LEGACY)."""
        return [_as_order(o) for o in self._queues[side][price] or () if o[_SIZE]]

    def order(self, order_id: int) -> Order:
        """The resting order ``order_id``; KeyError if it is not resting."""
        return _as_order(self._live(order_id))

    def __contains__(self, order_id: object) -> bool:
        return order_id in self._orders

    def __len__(self) -> int:
        """How many orders are resting (legacy volume is not an order)."""
        return len(self._orders)

    # -- events -----------------------------------------------------------------------------
    # Every event checks all its arguments before it changes anything, so a refused call
    # leaves the book as it was. Plain ints take the fast path (one ``type(x) is int``).
    def add(
        self, side: int, price: int, size: int, owner: int = PUBLIC, order_id: int | None = None
    ) -> int:
        """Submit a limit order; return its id. The part that crosses the spread trades at
        once (best price first), the rest rests at ``price`` behind the orders already there."""
        if (
            type(side) is not int
            or type(price) is not int
            or type(size) is not int
            or type(owner) is not int
            or not (0 <= side <= 1 and 0 <= price < self.n_ticks and size > 0 and owner >= 0)
        ):
            side, price, size, owner = self._order_args(side, price, size, owner)
        if order_id is None:
            order_id = self._next_id
        elif type(order_id) is not int or order_id <= 0 or order_id in self._orders:
            order_id = self._new_id(order_id)
        if self._halted and owner != PUBLIC and self._crosses(side, price):
            raise TradingHalted(f"trading is halted: owner {owner}'s order would trade")
        return self._add(side, price, size, owner, order_id)

    def _add(self, side: int, price: int, size: int, owner: int, order_id: int) -> int:
        """``add`` once its arguments are known to be good: ``lobster.replay`` checks a
        whole stream at once with numpy, then submits through here."""
        if order_id >= self._next_id:
            self._next_id = order_id + 1
        if side == BUY:
            if price >= self._ask:
                size = self._match(BUY, size, price, owner, order_id)
                if not size:
                    return order_id
            if price > self._bid:
                self._bid = price
        else:
            if price <= self._bid:
                size = self._match(SELL, size, price, owner, order_id)
                if not size:
                    return order_id
            if price < self._ask:
                self._ask = price
        order = [order_id, owner, size, price, side]
        queue = self._queues[side][price]
        if queue is None:
            queue = self._queues[side][price] = deque()
        queue.append(order)
        self._volume[side][price] += size
        self._occupied[side][price] = 1
        self._orders[order_id] = order
        return order_id

    def market(self, side: int, size: int, owner: int = PUBLIC) -> int:
        """A market order: trade up to ``size`` against the other side; return the size filled.
        What finds no liquidity is dropped."""
        if type(side) is not int:
            side = _whole("side", side)
        if type(size) is not int:
            size = _whole("size", size)
        if type(owner) is not int:
            owner = _whole("owner", owner)
        if side == BUY:
            limit = self.n_ticks - 1
        elif side == SELL:
            limit = 0
        else:
            raise _bad_side(side)
        if size <= 0:
            raise ValueError(f"size must be a positive int, got {size!r}")
        if owner < 0:
            raise ValueError(f"owner must be PUBLIC (0) or a positive int, got {owner!r}")
        if self._halted and owner != PUBLIC:
            raise TradingHalted(f"trading is halted: owner {owner}'s market order would trade")
        order_id = self._next_id
        self._next_id = order_id + 1
        if owner == PUBLIC:  # no self-trade prevention: what is not left has traded
            return size - self._match(side, size, limit, owner, order_id)
        tape = len(self.trades)  # "cancel_incoming" may drop the rest: count it on the tape
        self._match(side, size, limit, owner, order_id)
        return sum(trade.size for trade in self.trades[tape:])

    def cancel(self, order_id: int, size: int | None = None) -> None:
        """Cancel ``size`` of a resting order (keeping its place in the queue), or all of it."""
        if type(order_id) is not int or (size is not None and (type(size) is not int or size <= 0)):
            order_id = _whole("order id", order_id)
            if size is not None:
                size = _whole("cancel size", size)
                if size <= 0:
                    raise ValueError(f"cancel size must be a positive int or None, got {size!r}")
        try:
            order = self._orders[order_id]
        except KeyError:
            raise _not_resting(order_id) from None
        if size is not None and size < order[_SIZE]:
            order[_SIZE] -= size
            self._volume[order[_SIDE]][order[_PRICE]] -= size
            return
        del self._orders[order_id]
        self._drop(order)

    def modify(self, order_id: int, *, price: int | None = None, size: int | None = None) -> None:
        """Change a resting order. Reducing its size keeps its priority; a new price or a larger
        size re-queues it behind the level (and may trade, as ``add``), keeping its id."""
        if type(order_id) is not int:
            order_id = _whole("order id", order_id)
        if price is not None and type(price) is not int:
            price = _whole("price", price)
        if size is not None and type(size) is not int:
            size = _whole("size", size)
        order = self._live(order_id)
        new_price = order[_PRICE] if price is None else price
        new_size = order[_SIZE] if size is None else size
        if new_size <= 0:
            raise ValueError(f"size must be a positive int, got {size!r}")
        if not 0 <= new_price < self.n_ticks:
            raise ValueError(f"price must be a tick in [0, {self.n_ticks}), got {price!r}")
        if new_price == order[_PRICE] and new_size <= order[_SIZE]:
            if new_size < order[_SIZE]:
                self.cancel(order_id, order[_SIZE] - new_size)
            return
        side, owner = order[_SIDE], order[_OWNER]
        if self._halted and owner != PUBLIC and self._crosses(side, new_price):
            raise TradingHalted(f"trading is halted: owner {owner}'s order would trade")
        self.cancel(order_id)
        self.add(side, new_price, new_size, owner, order_id)

    def execute(self, order_id: int, size: int) -> None:
        """The feed reports ``size`` of resting order ``order_id`` executed: that order trades
        with an anonymous incoming order (taker id 0, owner PUBLIC), whatever rests ahead of it.
        """
        if type(order_id) is not int or type(size) is not int:
            order_id, size = _whole("order id", order_id), _whole("size", size)
        try:
            order = self._orders[order_id]
        except KeyError:
            raise _not_resting(order_id) from None
        resting, owner = order[_SIZE], order[_OWNER]
        if not 0 < size <= resting:
            raise ValueError(
                f"execution size must be a positive int up to order {order_id}'s "
                f"{resting}, got {size!r}"
            )
        if owner != PUBLIC and self._halted:
            raise TradingHalted(f"trading is halted: owner {owner}'s order would trade")
        side, price = order[_SIDE], order[_PRICE]
        trade = (price, size, 1 - side, 0, order_id, PUBLIC, owner)
        self.trades.append(_tuple_new(Trade, trade))
        if size < resting:
            order[_SIZE] = resting - size
            self._volume[side][price] -= size
            return
        del self._orders[order_id]
        self._drop(order)

    def add_legacy(self, side: int, price: int, size: int) -> None:
        """Rest ``size`` lots of legacy volume at a level: orders that rested before the
        book's records begin (the opening book of a replayed day, or a level that comes into
        view with volume the records never announced). It is ahead of every other order at
        its level, has owner LEGACY and id 0, and is not counted by ``len(book)``."""
        side, price, size = self._level_args(side, price, size)
        if price >= self._ask if side == BUY else price <= self._bid:
            raise ValueError(f"legacy volume at tick {price} would cross the other side")
        queue = self._queues[side][price]
        if queue is None:
            queue = self._queues[side][price] = deque()
        if queue and queue[0][_OWNER] == LEGACY:  # a level keeps one legacy record, at its head
            queue[0][_SIZE] += size
        else:
            queue.appendleft([_LEGACY_ID, LEGACY, size, price, side])
        self._volume[side][price] += size
        self._occupied[side][price] = 1
        if side == BUY:
            if price > self._bid:
                self._bid = price
        elif price < self._ask:
            self._ask = price

    def cancel_legacy(self, side: int, price: int, size: int) -> int:
        """Cancel up to ``size`` lots of the legacy volume at a level (a delete of an order
        from before the records); return how many there were to cancel."""
        side, price, size = self._level_args(side, price, size)
        return self._take_legacy(side, price, size)

    def execute_legacy(self, side: int, price: int, size: int) -> int:
        """Execute up to ``size`` lots of the legacy volume at a level against an anonymous
        incoming order (on the tape as maker id 0, owner LEGACY); return the size executed."""
        side, price, size = self._level_args(side, price, size)
        taken = self._take_legacy(side, price, size)
        if taken:
            trade = (price, taken, 1 - side, 0, _LEGACY_ID, PUBLIC, LEGACY)
            self.trades.append(_tuple_new(Trade, trade))
        return taken

    def record_trade(self, price: int, size: int, taker_side: int) -> None:
        """Put on the tape a trade that changes nothing in the book (a hidden order's
        execution, a cross trade): maker and taker id 0, both owners PUBLIC."""
        taker_side, price, size = self._level_args(taker_side, price, size)
        trade = (price, size, taker_side, 0, 0, PUBLIC, PUBLIC)
        self.trades.append(_tuple_new(Trade, trade))

    def halt(self) -> None:
        """Halt trading: until ``resume``, an order of a trader (any owner but PUBLIC) that
        would trade raises TradingHalted; resting and cancelling orders go on."""
        self._halted = True

    def resume(self) -> None:
        """Resume trading after ``halt``."""
        self._halted = False

    @property
    def halted(self) -> bool:
        """True between ``halt`` and ``resume``: traders' orders cannot trade."""
        return self._halted

    def is_crossed(self) -> bool:
        """True if the best bid reaches the best ask (never, after any event)."""
        return self._bid >= self._ask

    # -- internals --------------------------------------------------------------------------
    def _crosses(self, side: int, price: int) -> bool:
        """True if an order of ``side`` at ``price`` would trade on arrival."""
        return price >= self._ask if side == BUY else price <= self._bid

    def _live(self, order_id: int) -> list[int]:
        try:
            return self._orders[order_id]
        except KeyError:
            raise _not_resting(order_id) from None

    def _order_args(
        self, side: object, price: object, size: object, owner: object
    ) -> tuple[int, int, int, int]:
        """An order's side, price, size and owner as ints; an error for the first bad one."""
        side, price, size = self._level_args(side, price, size)
        owner = _whole("owner", owner)
        if owner < 0:
            raise ValueError(f"owner must be PUBLIC (0) or a positive int, got {owner!r}")
        return side, price, size, owner

    def _new_id(self, order_id: object) -> int:
        """``order_id`` as an int for a new order; an error if it is not a positive int or
        already rests."""
        order_id = _whole("order id", order_id)
        if order_id <= 0:
            raise ValueError(f"order id must be a positive int, got {order_id!r}")
        if order_id in self._orders:
            raise ValueError(f"order id {order_id} is already resting")
        return order_id

    def _level_args(self, side: object, price: object, size: object) -> tuple[int, int, int]:
        """``side``, ``price`` and ``size`` checked as a side, a tick and a positive size."""
        side, price, size = _whole("side", side), _whole("price", price), _whole("size", size)
        if side != BUY and side != SELL:
            raise _bad_side(side)
        if not 0 <= price < self.n_ticks:
            raise ValueError(f"price must be a tick in [0, {self.n_ticks}), got {price!r}")
        if size <= 0:
            raise ValueError(f"size must be a positive int, got {size!r}")
        return side, price, size

    def _take_legacy(self, side: int, price: int, size: int) -> int:
        """Take up to ``size`` lots off the legacy record at a level; return how many."""
        queue = self._queues[side][price]
        if not queue or queue[0][_OWNER] != LEGACY or not queue[0][_SIZE]:
            return 0
        record = queue[0]
        taken = min(size, record[_SIZE])
        if taken < record[_SIZE]:
            record[_SIZE] -= taken
            self._volume[side][price] -= taken
        else:
            self._drop(record)
        return taken

    def _drop(self, order: list[int]) -> None:
        """Take a whole record (already out of ``_orders``) off its level, emptying the level
        and moving the best price if it was the last."""
        side, price = order[_SIDE], order[_PRICE]
        volume = self._volume[side]
        left = volume[price] = volume[price] - order[_SIZE]
        order[_SIZE] = 0
        queue = self._queues[side][price]
        assert queue is not None  # the order rested there
        if left:
            if len(queue) > 2 * left + 16:  # mostly dead records (a live one has a lot)
                live = [o for o in queue if o[_SIZE]]
                queue.clear()
                queue.extend(live)
            return
        queue.clear()
        occupied = self._occupied[side]
        occupied[price] = 0
        if side == BUY:
            if price == self._bid:
                self._bid = occupied.rfind(1, 0, price)
        elif price == self._ask:
            self._ask = occupied.find(1, price)

    def _match(self, side: int, size: int, limit: int, owner: int, taker_id: int) -> int:
        """Trade an incoming order against the other side up to ``limit`` (a tick that
        exists); return what is left to rest (0 when self-trade prevention cancelled it)."""
        maker_side = SELL if side == BUY else BUY
        queues = self._queues[maker_side]
        volume = self._volume[maker_side]
        occupied = self._occupied[maker_side]
        orders = self._orders
        record = self.trades.append
        guard = owner != PUBLIC
        price = self._ask if side == BUY else self._bid
        while price <= limit if side == BUY else price >= limit:  # false past an empty side
            queue = queues[price]
            assert queue is not None  # the level holds orders
            while queue:
                order = queue[0]
                resting = order[_SIZE]
                if not resting:
                    queue.popleft()
                    continue
                if guard and order[_OWNER] == owner:
                    if self.self_trade == "cancel_incoming":
                        return 0
                    queue.popleft()
                    del orders[order[_ID]]
                    volume[price] -= resting
                    order[_SIZE] = 0
                    continue
                if size < resting:
                    fill = size
                    order[_SIZE] = resting - size
                else:
                    fill = resting
                    queue.popleft()
                    orders.pop(order[_ID], None)  # legacy volume is in no dict
                    order[_SIZE] = 0
                volume[price] -= fill
                trade = (price, fill, side, taker_id, order[_ID], owner, order[_OWNER])
                record(_tuple_new(Trade, trade))
                size -= fill
                if not size:
                    break
            if volume[price]:
                return 0  # the incoming order is filled and the level lives on
            queue.clear()
            occupied[price] = 0
            if side == BUY:
                price = self._ask = occupied.find(1, price)
            else:
                price = self._bid = occupied.rfind(1, 0, price)
            if not size:
                return 0
        return size


def _whole(name: str, value: object) -> int:
    """``value`` as an int (numpy integers are fine); a TypeError for anything else, bools
    and floats included (a size of 1.5 or a price of 10.5 is a caller's mistake)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {value!r}")
    return int(value)


def _bad_side(side: object) -> ValueError:
    return ValueError(f"side must be BUY (0) or SELL (1), got {side!r}")


def _not_resting(order_id: object) -> KeyError:
    return KeyError(f"order {order_id!r} is not resting in the book")


def _as_order(record: list[int]) -> Order:
    fields = (record[_ID], record[_OWNER], record[_SIDE], record[_PRICE], record[_SIZE])
    return _tuple_new(Order, fields)
