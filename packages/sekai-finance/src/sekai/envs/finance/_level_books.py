"""Many limit order books in array form, for LimitOrderBookVecEnv.

Each book is a fixed array of lots per tick and side; the public (background) lots of a level
are anonymous one-lot orders, and each trader's resting order carries its queue position: the
public lots ahead of it (traders' orders ahead are found by their placement sequence). That is
enough to reproduce price-time priority exactly for the one-lot public flow, with one array
operation per quantity for all books. Every method takes ``rows``, the books an operation
applies to (each at most once).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.envs.finance._lob_market import MarketConfig, TraderView
from sekai.finance.order_book import BUY, SELL

Rows = NDArray[np.intp]


class LevelBooks:
    """The books, the traders' resting orders and every participant's account."""

    def __init__(self, config: MarketConfig, num_books: int) -> None:
        self.config = config
        n, traders, ticks = num_books, config.n_traders, config.n_ticks
        self.n = n
        self._rows = np.arange(n)[:, None]
        self.volume = np.zeros((n, 2, ticks), np.int64)
        self._volume_flat = self.volume.reshape(-1)  # a view: gathers by flat index are fast
        depth = np.asarray(config.initial_depth, np.int64)
        first = config.first_bid
        self.volume[:, BUY, first - np.arange(len(depth))] = depth
        self.volume[:, SELL, first + 1 + np.arange(len(depth))] = depth
        self.public = self.volume.copy()  # the public's lots alone
        self._public_flat = self.public.reshape(-1)
        self.best = np.empty((n, 2), np.int64)  # best bid, best ask; -1 / ticks when empty
        self.best[:, BUY] = first
        self.best[:, SELL] = first + 1
        self.ref = self.best.copy()  # the last best of each side, for an empty side
        self.order_price = np.full((n, 2, traders), -1, np.int64)  # -1: no order
        self.order_size = np.zeros((n, 2, traders), np.int64)
        self.order_public_ahead = np.zeros((n, 2, traders), np.int64)
        self.order_seq = np.zeros((n, 2, traders), np.int64)
        self._seq = 0
        self.cash = np.full((n, traders), config.initial_cash)
        self.inventory = np.zeros((n, traders), np.int64)
        self.public_cash = np.zeros(n)
        self.public_inventory = np.zeros(n, np.int64)
        self.mid = np.full(n, config.initial_price)

    # -- queries ----------------------------------------------------------------------------
    def public_levels(self, rows: Rows, levels: int) -> tuple[NDArray[Any], NDArray[Any]]:
        """Public lots on the D bid ticks below the ask reference and the D ask ticks above
        the bid reference (as ``sekai.finance.order_flow.public_levels``)."""
        distance = np.arange(1, levels + 1)
        ticks = self.config.n_ticks
        out = []
        for side, prices in (
            (BUY, self.ref[rows, SELL][:, None] - distance),
            (SELL, self.ref[rows, BUY][:, None] + distance),
        ):
            inside = (prices >= 0) & (prices < ticks)
            public = self._public_flat[self._at(rows[:, None], side, prices.clip(0, ticks - 1))]
            out.append(np.where(inside, public, 0))
        return out[0], out[1]

    def update_refs(self, rows: Rows) -> None:
        ticks = self.config.n_ticks
        best = self.best[rows]
        has = np.stack([best[:, BUY] >= 0, best[:, SELL] < ticks], axis=1)
        self.ref[rows] = np.where(has, best, self.ref[rows])

    def values(self) -> NDArray[np.float64]:
        """Marked-to-market value of each trader (n, T) at the mid (the last one if a side
        is empty)."""
        bid, ask = self.best[:, BUY], self.best[:, SELL]
        both = (bid >= 0) & (ask < self.config.n_ticks)
        self.mid = np.where(both, self.config.price((bid + ask) / 2), self.mid)
        return self.cash + self.inventory * self.mid[:, None]

    def view(self, trader: int, window: int) -> TraderView:
        """Trader ``trader``'s view of every book: the top levels within ``window`` ticks."""
        levels = self.config.book_levels
        sides = []
        for side, step in ((BUY, -1), (SELL, 1)):
            ticks = self.best[:, side][:, None] + step * np.arange(window)
            inside = (ticks >= 0) & (ticks < self.config.n_ticks)
            clipped = ticks.clip(0, self.config.n_ticks - 1)
            volume = np.where(inside, self._volume_flat[self._at(self._rows, side, clipped)], 0)
            filled = volume > 0
            order = np.argsort(~filled, axis=1, kind="stable")[:, :levels]
            present = np.take_along_axis(filled, order, axis=1)
            sides.append(np.where(present, np.take_along_axis(ticks, order, axis=1), -1))
            sides.append(np.where(present, np.take_along_axis(volume, order, axis=1), 0))
        own = [
            np.stack([self.order_price[:, side, trader], self.order_size[:, side, trader]], axis=1)
            for side in (BUY, SELL)
        ]
        bid_prices, bid_volumes, ask_prices, ask_volumes = sides
        return TraderView(
            bid_prices,
            bid_volumes,
            ask_prices,
            ask_volumes,
            self.inventory[:, trader],
            self.cash[:, trader],
            own[0],
            own[1],
        )

    # -- events -----------------------------------------------------------------------------
    def add_public(self, rows: Rows, side: NDArray[Any], price: NDArray[Any]) -> None:
        """One public lot at ``price``; one that crosses trades with the best opposite lot."""
        ticks = self.config.n_ticks
        ok = (price >= 0) & (price < ticks)
        rows, side, price = rows[ok], side[ok], price[ok]
        crosses = np.where(
            side == BUY, price >= self.best[rows, SELL], price <= self.best[rows, BUY]
        )
        if crosses.any():
            self.take(rows[crosses], side[crosses], -1)
        rows, side, price = rows[~crosses], side[~crosses], price[~crosses]
        at = self._at(rows, side, price)
        self._volume_flat[at] += 1
        self._public_flat[at] += 1
        self._improve_best(rows, side, price)

    def cancel_public(
        self, rows: Rows, side: NDArray[Any], price: NDArray[Any], rank: NDArray[Any]
    ) -> None:
        """Cancel the ``rank``-th public lot of a level, where there is one."""
        ticks = self.config.n_ticks
        inside = (price >= 0) & (price < ticks)
        rows, side, price, rank = rows[inside], side[inside], price[inside], rank[inside]
        ok = rank < self._public_flat[self._at(rows, side, price)]
        rows, side, price, rank = rows[ok], side[ok], price[ok], rank[ok]
        at = self._at(rows, side, price)
        self._volume_flat[at] -= 1
        self._public_flat[at] -= 1
        behind = (self.order_price[rows, side] == price[:, None]) & (
            self.order_public_ahead[rows, side] > rank[:, None]
        )
        self.order_public_ahead[rows, side] -= behind
        self._after_removal(rows, side, price)

    def take(self, rows: Rows, side: NDArray[Any], taker: int | NDArray[Any]) -> None:
        """One lot of a market order (``side`` is the taker's) against the best opposite lot;
        ``taker`` is a trader index or -1 for the public. Empty sides trade nothing."""
        maker_side = 1 - side
        price = self.best[rows, maker_side]
        ok = (price >= 0) & (price < self.config.n_ticks)
        rows, side, maker_side, price = rows[ok], side[ok], maker_side[ok], price[ok]
        taker = np.broadcast_to(np.asarray(taker), ok.shape)[ok]
        at_level = self.order_price[rows, maker_side] == price[:, None]  # (m, T)
        sizes = np.where(at_level, self.order_size[rows, maker_side], 0)
        seqs = self.order_seq[rows, maker_side]
        earlier = seqs[:, None, :] < seqs[:, :, None]  # [m, t, u]: u placed before t
        ahead = self.order_public_ahead[rows, maker_side] + (earlier * sizes[:, None, :]).sum(
            axis=2
        )
        front = at_level & (ahead == 0)  # a trader's order is first in the queue
        trader_front = front.any(axis=1)
        maker = np.where(trader_front, front.argmax(axis=1), -1)
        fill = front.astype(np.int64)
        self.order_size[rows, maker_side] -= fill
        gone = at_level & (self.order_size[rows, maker_side] == 0)
        self.order_price[rows, maker_side] = np.where(gone, -1, self.order_price[rows, maker_side])
        public_first = ~trader_front
        self.order_public_ahead[rows, maker_side] -= at_level & public_first[:, None]
        at = self._at(rows, maker_side, price)
        self._volume_flat[at] -= 1
        self._public_flat[at] -= public_first
        value = self.config.price(price)
        buyer = np.where(side == BUY, taker, maker)
        seller = np.where(side == BUY, maker, taker)
        self._book(rows, buyer, 1, -value)
        self._book(rows, seller, -1, value)
        self._after_removal(rows, maker_side, price)

    def place(self, rows: Rows, trader: int, side: int, price: NDArray[Any], size: int) -> None:
        """Trader ``trader``'s new order (that does not cross) at the back of its level."""
        sides = np.full(len(rows), side)
        self.order_public_ahead[rows, side, trader] = self._public_flat[self._at(rows, side, price)]
        self._volume_flat[self._at(rows, side, price)] += size
        self.order_price[rows, side, trader] = price
        self.order_size[rows, side, trader] = size
        self._seq += 1
        self.order_seq[rows, side, trader] = self._seq
        self._improve_best(rows, sides, price)

    def cancel_order(self, rows: Rows, trader: int, side: int) -> None:
        """Cancel trader ``trader``'s resting order on ``side`` where there is one."""
        rows = rows[self.order_price[rows, side, trader] >= 0]
        price = self.order_price[rows, side, trader]
        self._volume_flat[self._at(rows, side, price)] -= self.order_size[rows, side, trader]
        self.order_price[rows, side, trader] = -1
        self.order_size[rows, side, trader] = 0
        self._after_removal(rows, np.full(len(rows), side), price)

    # -- internals --------------------------------------------------------------------------
    def _at(self, rows: Any, side: Any, price: Any) -> Any:
        """Flat index of (book, side, tick) into ``volume``."""
        return (rows * 2 + side) * self.config.n_ticks + price

    def _book(self, rows: Rows, who: NDArray[Any], lots: int, cash: NDArray[Any]) -> None:
        public = who < 0
        self.public_inventory[rows[public]] += lots
        self.public_cash[rows[public]] += cash[public]
        trader_rows, traders = rows[~public], who[~public]
        self.inventory[trader_rows, traders] += lots
        self.cash[trader_rows, traders] += cash[~public]

    def _improve_best(self, rows: Rows, side: NDArray[Any], price: NDArray[Any]) -> None:
        best = self.best[rows, side]
        better = np.where(side == BUY, price > best, price < best)
        self.best[rows[better], side[better]] = price[better]

    def _after_removal(self, rows: Rows, side: NDArray[Any], price: NDArray[Any]) -> None:
        """Move the best of books whose best level just emptied."""
        emptied = (self._volume_flat[self._at(rows, side, price)] == 0) & (
            self.best[rows, side] == price
        )
        if not emptied.any():
            return
        rows, side = rows[emptied], side[emptied]
        ticks = self.config.n_ticks
        filled = self.volume[rows, side] > 0  # (m, ticks)
        highest_bid = ticks - 1 - np.argmax(filled[:, ::-1], axis=1)
        lowest_ask = np.argmax(filled, axis=1)
        any_left = filled.any(axis=1)
        self.best[rows, side] = np.where(
            side == BUY,
            np.where(any_left, highest_bid, -1),
            np.where(any_left, lowest_ask, ticks),
        )


__all__ = ["LevelBooks"]
_ = SELL
