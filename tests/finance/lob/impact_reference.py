"""An independent reference for the replay with market impact: one window's book order by
order, on ``OrderBook``, stepping a replayed day's messages with the adaptation rules of
docs/limit-order-book.md ("Market impact"), and one agent's orders beside it.

The book holds the replayed orders the window still has (ids: their submission's message
index + 1) with the lots it has of each; the agent's orders are kept apart, each with the
message index at which it joined its level: it stands behind every order at its level that
arrived before then. Nothing here reads deficits or queue positions: the compiled windows
(``sekai.finance.lob._impact_windows``) must agree with it exactly. Imported by
test_replay_impact.py.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from sekai.finance import BUY, SELL, OrderBook
from sekai.finance.lob.events import ADD as SUBMIT
from sekai.finance.lob.events import CANCEL, DELETE, EXECUTE
from sekai.finance.lob.events import TRADE as HIDDEN

KEEP, CANCEL_ORDER, NO_MARKET = -1, -2, -1


class RealBook:
    """The replayed day's book without an agent, message by message (what each window
    starts from)."""

    def __init__(self, days: Any) -> None:
        self.kinds, self.sides, self.ticks, self.lots, self.arrival = (
            getattr(days, name).tolist() for name in ("kinds", "sides", "ticks", "lots", "arrival")
        )
        self.halted = days.halted.tolist()
        self.book = OrderBook(days.n_ticks)
        self.k = 0

    def advance(self, stop: int) -> None:
        """Replay messages up to ``stop`` (a new day, at its first message, starts empty)."""
        while self.k < stop:
            kind, lots = self.kinds[self.k], self.lots[self.k]
            order_id = self.arrival[self.k] + 1
            if kind == SUBMIT and lots:
                self.book.add(self.sides[self.k], self.ticks[self.k], lots, order_id=order_id)
            elif kind in (CANCEL, DELETE) and lots:
                self.book.cancel(order_id, lots)
            elif kind == EXECUTE and lots:
                self.book.execute(order_id, lots)
            self.k += 1

    def window(
        self, start: int, terms: tuple[Any, ...], price: Any, levels: int, cash: float
    ) -> Window:
        """A window starting at message ``start``, on a copy of the book there."""
        if start < self.k:  # earlier: again from the (one) day's start
            self.book, self.k = OrderBook(self.book.n_ticks), 0
        self.advance(start)
        return Window(self, copy.deepcopy(self.book), start, terms, price, levels, cash)


class Window:
    """One window with impact: its book, its agent's orders and account."""

    def __init__(
        self,
        real: RealBook,
        book: OrderBook,
        start: int,
        terms: tuple[Any, ...],
        price: Any,
        levels: int,
        cash: float,
    ) -> None:
        self.real, self.book, self.k = real, book, start
        self.order_size, self.cap, self.maker_fee, self.taker_fee = terms
        self.price, self.levels = price, levels
        self.quotes: list[list[int] | None] = [None, None]  # [tick, size, joined] per side
        self.cash, self.fees = cash, 0.0
        self.inventory = 0
        self.fills: list[tuple[int, int, int, int, int]] = []
        # how often each adaptation happened: a cancel or execution naming lost lots, a walk
        # into the next level, a submission trading with the agent's quote
        self.adapted = {"cancel": 0, "execution": 0, "next level": 0, "submission": 0}

    # -- the agent ---------------------------------------------------------------------------
    def room(self, side: int) -> int:
        return self.cap - self.inventory if side == BUY else self.cap + self.inventory

    def account(self, side: int, tick: int, lots: int, maker: bool) -> None:
        if lots <= 0:
            return
        fee = self.maker_fee if maker else self.taker_fee
        if side == BUY:  # in the compiled accounts' order of operations (``_engine.settle``)
            self.inventory += lots
            self.cash -= self.price[tick] * lots
        else:
            self.inventory -= lots
            self.cash += self.price[tick] * lots
        self.cash -= fee * lots
        self.fees += fee * lots
        self.fills.append((0, side, tick, lots, 1 if maker else 0))

    def fill(self, side: int, lots: int) -> int:
        """The agent's quote on ``side`` trades up to ``lots`` as the maker; return how many
        (the quote goes once nothing of it, or no room, is left)."""
        quote = self.quotes[side]
        assert quote is not None
        size = min(lots, quote[1], self.room(side))
        if size > 0:
            self.account(side, quote[0], size, True)
            quote[1] -= size
        if min(quote[1], self.room(side)) <= 0:
            self.quotes[side] = None
        return max(size, 0)

    def ahead(self, side: int) -> int:
        """The lots the window holds ahead of the agent's quote on ``side``."""
        quote = self.quotes[side]
        assert quote is not None
        return sum(o.size for o in self.book.queue(side, quote[0]) if o.order_id - 1 < quote[2])

    def best(self, side: int) -> int:
        found = self.book.best_bid if side == BUY else self.book.best_ask
        return -1 if found is None else found

    def instruct(self, bid: int, ask: int, market: int) -> None:
        if self.real.halted[self.k] and (bid >= 0 or ask >= 0 or market != NO_MARKET):
            bid, ask, market = min(bid, KEEP), min(ask, KEEP), NO_MARKET
        for side, tick in ((BUY, bid), (SELL, ask)):
            quote = self.quotes[side]
            if tick == KEEP or (quote is not None and tick == quote[0]):
                continue
            self.quotes[side] = None
            if tick < 0:
                continue
            other = self.best(1 - side)
            if other >= 0 and (tick >= other if side == BUY else tick <= other):
                continue
            size = min(self.order_size, self.room(side))
            if size > 0:
                self.quotes[side] = [tick, size, self.k]
        if market == NO_MARKET:
            return
        maker = 1 - market
        self.quotes[maker] = None
        left = min(self.order_size, self.room(market))
        for tick, _ in self.book.depth(maker, self.levels):
            if left == 0:
                break
            taken = 0  # one fill a level, as the compiled windows book it
            for order in self.book.queue(maker, tick):
                take = min(left - taken, order.size)
                self.book.execute(order.order_id, take)
                taken += take
                if taken == left:
                    break
            self.account(market, tick, taken, False)
            left -= taken
        quote = self.quotes[market]
        if quote is not None and quote[1] > self.room(market):
            quote[1] = self.room(market)
            if quote[1] <= 0:
                self.quotes[market] = None

    # -- the replayed messages -----------------------------------------------------------------
    def message(self) -> None:
        real, k = self.real, self.k
        kind, side, tick, lots = real.kinds[k], real.sides[k], real.ticks[k], real.lots[k]
        self.k += 1
        if lots == 0 or kind > HIDDEN:
            return
        order_id = real.arrival[k] + 1
        if kind == SUBMIT:
            other, quote = 1 - side, self.quotes[1 - side]
            left = lots
            if quote is not None and (tick <= quote[0] if other == BUY else tick >= quote[0]):
                left -= self.fill(other, left)
                self.adapted["submission"] += 1
            if left:
                self.book.add(side, tick, left, order_id=order_id)
            return
        quote = self.quotes[side]
        if kind == HIDDEN:
            if quote is not None and (tick < quote[0] if side == BUY else tick > quote[0]):
                self.fill(side, lots)
            return
        held = self.book.order(order_id).size if order_id in self.book else 0
        taken = min(lots, held)
        if kind in (CANCEL, DELETE):
            self.adapted["cancel"] += taken < lots
            if taken:
                self.book.cancel(order_id, taken)
            return
        first = 0
        agent_behind = False  # the agent's quote at this level stands behind the order
        if quote is not None:
            if tick == quote[0]:
                agent_behind = order_id - 1 < quote[2]
                if not agent_behind:
                    first = self.fill(side, lots)
            elif tick < quote[0] if side == BUY else tick > quote[0]:
                first = self.fill(side, lots)
        if taken:
            self.book.execute(order_id, taken)
        if taken == lots:
            return
        self.adapted["execution"] += 1
        rest = max(lots - taken - first, 0)
        # the orders behind the executed one, the agent's quote where it stands
        rest = self.take_level(side, tick, rest, order_id - 1, agent_behind)
        beyond = [t for t, _ in self.book.depth(side, self.book.n_ticks)]
        quote = self.quotes[side]
        if quote is not None and quote[0] not in beyond:
            beyond.append(quote[0])
        beyond = sorted(t for t in beyond if (t < tick if side == BUY else t > tick))
        for at in reversed(beyond) if side == BUY else beyond:
            if rest == 0:
                break
            self.adapted["next level"] += 1
            rest = self.take_level(side, at, rest, -2, True)

    def take_level(self, side: int, tick: int, rest: int, after: int, agent: bool) -> int:
        """Execute up to ``rest`` lots of the orders at (side, tick) that arrived after
        message ``after``, in FIFO order, the agent's quote among them (if ``agent``)."""
        quote = self.quotes[side]
        agent_here = agent and quote is not None and quote[0] == tick
        for order in self.book.queue(side, tick):
            if rest == 0:
                break
            if order.order_id - 1 <= after:
                continue
            if agent_here and order.order_id - 1 >= quote[2]:  # type: ignore[index]
                rest -= self.fill(side, rest)
                agent_here = False
                if rest == 0:
                    break
            take = min(rest, order.size)
            self.book.execute(order.order_id, take)
            rest -= take
        if agent_here and rest > 0:
            rest -= self.fill(side, rest)
        return rest

    def step(self, entry: int, bid: int, ask: int, market: int, stop: int) -> None:
        """The agent's instruction before message ``entry``, then the messages to ``stop``."""
        self.fills = []
        while self.k < entry:
            self.message()
        self.instruct(bid, ask, market)
        while self.k < stop:
            self.message()

    def top(self, levels: int) -> np.ndarray:
        """(2, levels, 2) as the env's view: tick and lots per level, -1 and 0 past the last."""
        out = np.zeros((2, levels, 2), np.int64)
        out[:, :, 0] = -1
        for side in (BUY, SELL):
            for level, (tick, lots) in enumerate(self.book.depth(side, levels)):
                out[side, level] = tick, lots
        return out
