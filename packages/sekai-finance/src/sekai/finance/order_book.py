"""OrderBook: a limit order book with price-time priority on an integer tick grid.

Prices are tick indices ``0 .. n_ticks - 1`` (convert with your own tick size); sizes are
positive integers (lots). Each price level holds a FIFO queue of order records; a cancelled
order is only marked empty and skipped when matching reaches it, so a cancel in the middle of a
queue costs O(1). Per-level volumes live in plain lists and which levels are non-empty in a
bytearray per side, so the next best price is one C-level byte search (``find``/``rfind``),
never a Python loop over empty ticks nor a sort.

Owners are integers: owner 0 is the anonymous public (background flow), exempt from self-trade
prevention; any other owner never trades with itself.
"""

from __future__ import annotations

from collections import deque
from typing import Literal, NamedTuple

BUY = 0
SELL = 1
PUBLIC = 0  # the anonymous owner: background flow, replayed messages

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


class Order(NamedTuple):
    """A resting order as ``OrderBook.order`` reports it."""

    order_id: int
    owner: int
    side: int
    price: int
    size: int


class OrderBook:
    """A price-time priority limit order book with partial fills, cancels, modifies, market
    orders, self-trade prevention and a trade tape (``trades``).

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
        """The live orders at one level, in priority order."""
        return [_as_order(o) for o in self._queues[side][price] or () if o[_SIZE]]

    def order(self, order_id: int) -> Order:
        """The resting order ``order_id``; KeyError if it is not resting."""
        return _as_order(self._live(order_id))

    def __contains__(self, order_id: object) -> bool:
        return order_id in self._orders

    def __len__(self) -> int:
        """How many orders are resting."""
        return len(self._orders)

    # -- events -----------------------------------------------------------------------------
    def add(
        self, side: int, price: int, size: int, owner: int = PUBLIC, order_id: int | None = None
    ) -> int:
        """Submit a limit order; return its id. The part that crosses the spread trades at
        once (best price first), the rest rests at ``price`` behind the orders already there."""
        if not 0 <= price < self.n_ticks:
            raise ValueError(f"price must be a tick in [0, {self.n_ticks}), got {price!r}")
        if size <= 0:
            raise ValueError(f"size must be a positive int, got {size!r}")
        if order_id is None:
            order_id = self._next_id
            self._next_id = order_id + 1
        elif order_id in self._orders:
            raise ValueError(f"order id {order_id} is already resting")
        elif order_id >= self._next_id:
            self._next_id = order_id + 1
        if side == BUY:
            if price >= self._ask:
                size = self._match(BUY, size, price, owner, order_id)
                if not size:
                    return order_id
            if price > self._bid:
                self._bid = price
        elif side == SELL:
            if price <= self._bid:
                size = self._match(SELL, size, price, owner, order_id)
                if not size:
                    return order_id
            if price < self._ask:
                self._ask = price
        else:
            raise _bad_side(side)
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
        if side == BUY:
            limit = self.n_ticks - 1
        elif side == SELL:
            limit = 0
        else:
            raise _bad_side(side)
        if size <= 0:
            raise ValueError(f"size must be a positive int, got {size!r}")
        order_id = self._next_id
        self._next_id = order_id + 1
        if owner == PUBLIC:  # no self-trade prevention: what is not left has traded
            return size - self._match(side, size, limit, owner, order_id)
        tape = len(self.trades)  # "cancel_incoming" may drop the rest: count it on the tape
        self._match(side, size, limit, owner, order_id)
        return sum(trade.size for trade in self.trades[tape:])

    def cancel(self, order_id: int, size: int | None = None) -> None:
        """Cancel ``size`` of a resting order (keeping its place in the queue), or all of it."""
        try:
            order = self._orders[order_id]
        except KeyError:
            raise _not_resting(order_id) from None
        if size is not None and size < order[_SIZE]:
            if size <= 0:
                raise ValueError(f"cancel size must be a positive int or None, got {size!r}")
            order[_SIZE] -= size
            self._volume[order[_SIDE]][order[_PRICE]] -= size
            return
        del self._orders[order_id]
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

    def modify(self, order_id: int, *, price: int | None = None, size: int | None = None) -> None:
        """Change a resting order. Reducing its size keeps its priority; a new price or a larger
        size re-queues it behind the level (and may trade, as ``add``), keeping its id."""
        order = self._live(order_id)
        new_price = order[_PRICE] if price is None else price
        new_size = order[_SIZE] if size is None else size
        if new_size <= 0:
            raise ValueError(f"size must be a positive int, got {size!r}")
        if new_price == order[_PRICE] and new_size <= order[_SIZE]:
            if new_size < order[_SIZE]:
                self.cancel(order_id, order[_SIZE] - new_size)
            return
        if not 0 <= new_price < self.n_ticks:
            raise ValueError(f"price must be a tick in [0, {self.n_ticks}), got {price!r}")
        self.cancel(order_id)
        self.add(order[_SIDE], new_price, new_size, order[_OWNER], order_id)

    def is_crossed(self) -> bool:
        """True if the best bid reaches the best ask (never, after any event)."""
        return self._bid >= self._ask

    # -- internals --------------------------------------------------------------------------
    def _live(self, order_id: int) -> list[int]:
        try:
            return self._orders[order_id]
        except KeyError:
            raise _not_resting(order_id) from None

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
                    del orders[order[_ID]]
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


def _bad_side(side: object) -> ValueError:
    return ValueError(f"side must be BUY (0) or SELL (1), got {side!r}")


def _not_resting(order_id: object) -> KeyError:
    return KeyError(f"order {order_id!r} is not resting in the book")


def _as_order(record: list[int]) -> Order:
    fields = (record[_ID], record[_OWNER], record[_SIDE], record[_PRICE], record[_SIZE])
    return _tuple_new(Order, fields)
