"""What LimitOrderBookMarket and LimitOrderBookVecEnv share: parameters, the decision schedule,
the spaces, and the array functions that turn a trader's view of the book into masks, orders
and observations (leading axis: one row per book, so the single env passes one row)."""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.flow import ContStoikovTalreja, FlowEvents
from sekai.spaces import Box, MultiDiscrete

INSTRUCTIONS = ("keep", "cancel", "improve", "join", "one tick behind", "two ticks behind")
IMPROVE = 2
MARKET_ORDERS = ("none", "buy", "sell")
KEEP, CANCEL = 0, 1
DEPTH_WINDOW = 64  # observations show the top levels within this many ticks of the best
NO_PRICE = -1


class TraderView(NamedTuple):
    """One trader's view of m books: arrays with a leading book axis."""

    bid_prices: NDArray[np.int64]  # (m, K) ticks, -1 past the last level
    bid_volumes: NDArray[np.int64]  # (m, K)
    ask_prices: NDArray[np.int64]  # (m, K) ticks, -1 past the last level
    ask_volumes: NDArray[np.int64]  # (m, K)
    inventory: NDArray[np.int64]  # (m,)
    cash: NDArray[np.float64]  # (m,)
    own_bid: NDArray[np.int64]  # (m, 2): price (-1 if none), size
    own_ask: NDArray[np.int64]  # (m, 2)


@dataclasses.dataclass(frozen=True)
class MarketConfig:
    """The validated parameters of one market and the schedule they imply."""

    n_traders: int
    decision_intervals: tuple[float, ...]
    session_length: float
    flow: ContStoikovTalreja | FlowEvents
    tick_size: float
    initial_price: float
    n_ticks: int
    order_size: int
    max_inventory: int
    initial_cash: float
    book_levels: int
    times: tuple[float, ...]  # every decision time, ascending
    due: tuple[list[int], ...]  # the traders deciding at each time

    @classmethod
    def build(
        cls,
        n_traders: int = 3,
        *,
        decision_intervals: Any = None,
        session_length: float = 60.0,
        flow: ContStoikovTalreja | FlowEvents | None = None,
        tick_size: float = 0.01,
        initial_price: float = 100.0,
        n_ticks: int = 2000,
        order_size: int = 1,
        max_inventory: int = 10,
        initial_cash: float = 10_000.0,
        book_levels: int = 5,
    ) -> MarketConfig:
        """Check LimitOrderBookMarket's parameters (see its docs) and derive the schedule."""
        kwargs: dict[str, Any] = {
            "session_length": session_length,
            "tick_size": tick_size,
            "initial_price": initial_price,
            "n_ticks": n_ticks,
            "order_size": order_size,
            "max_inventory": max_inventory,
            "initial_cash": initial_cash,
            "book_levels": book_levels,
        }
        _check_int("n_traders", n_traders, 1)
        for name in ("n_ticks", "order_size", "max_inventory", "book_levels"):
            _check_int(name, kwargs[name], 2 if name == "n_ticks" else 1)
        for name in ("session_length", "tick_size", "initial_price", "initial_cash"):
            value = kwargs[name]
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"{name} must be a number, got {value!r}")
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
        if decision_intervals is None:
            decision_intervals = [1.0] * n_traders
        intervals = tuple(float(x) for x in decision_intervals)
        if len(intervals) != n_traders:
            raise ValueError(
                f"decision_intervals needs one interval per trader ({n_traders}), "
                f"got {len(intervals)}"
            )
        if any(not (math.isfinite(x) and x > 0) for x in intervals):
            raise ValueError(f"decision_intervals must be finite and > 0, got {list(intervals)}")
        if flow is None:
            flow = ContStoikovTalreja()
        if not isinstance(flow, ContStoikovTalreja | FlowEvents):
            raise TypeError(
                f"flow must be a ContStoikovTalreja model or FlowEvents, got {type(flow).__name__}"
            )
        levels, n_ticks = len(flow.initial_depth), kwargs["n_ticks"]
        if n_ticks < 2 * levels + 1:  # the opening book: `levels` ticks a side of n_ticks // 2
            raise ValueError(
                f"n_ticks must be at least {2 * levels + 1} to hold the flow's opening book "
                f"({levels} levels a side), got {n_ticks}"
            )
        times, due = _schedule(intervals, float(kwargs["session_length"]))
        return cls(
            n_traders=n_traders,
            decision_intervals=intervals,
            session_length=float(kwargs["session_length"]),
            flow=flow,
            tick_size=float(kwargs["tick_size"]),
            initial_price=float(kwargs["initial_price"]),
            n_ticks=int(kwargs["n_ticks"]),
            order_size=int(kwargs["order_size"]),
            max_inventory=int(kwargs["max_inventory"]),
            initial_cash=float(kwargs["initial_cash"]),
            book_levels=int(kwargs["book_levels"]),
            times=times,
            due=due,
        )

    @property
    def initial_depth(self) -> tuple[int, ...]:
        """Public lots per tick from the best outwards, each side, when the session opens."""
        if isinstance(self.flow, FlowEvents):
            return self.flow.initial_depth
        return tuple(self.flow.initial_depth.tolist())

    @property
    def first_bid(self) -> int:
        """The best bid tick at the start, priced ``initial_price``; the best ask is one tick
        above."""
        return self.n_ticks // 2

    def price(self, tick: Any) -> Any:
        """Tick index (or array of them) to price: the first best bid is ``initial_price``."""
        return self.initial_price + (tick - self.first_bid) * self.tick_size

    @functools.cached_property
    def _observed_price(self) -> NDArray[np.float64]:
        """Price of each tick, and 0.0 at index -1 (no level), for observations."""
        return np.append(self.price(np.arange(self.n_ticks)), 0.0)

    def room(self, inventory: Any, side: int) -> Any:
        """Lots a trader holding ``inventory`` (a number or an array) may still buy (``side``
        BUY) or sell (SELL) without passing the cap: ``max_inventory`` -/+ ``inventory``."""
        return self.max_inventory - inventory if side == BUY else self.max_inventory + inventory

    # -- trader decisions, in array form ---------------------------------------------------
    def masks(self, view: TraderView) -> tuple[NDArray[np.int8], ...]:
        """(m, 6), (m, 6), (m, 3) masks: 1 where the value is possible now."""
        return self._quote_mask(view, BUY), self._quote_mask(view, SELL), self._market_mask(view)

    def _quote_mask(self, view: TraderView, side: int) -> NDArray[np.int8]:
        """(m, 6) mask of one side's instructions (INSTRUCTIONS)."""
        size = self.order_size
        if side == BUY:
            best, own = view.bid_prices[:, 0], view.own_bid
            ticks = best[:, None] + _BID_OFFSETS[2:]
            places = ((best >= 0) & (self.room(view.inventory, BUY) >= size))[:, None]
            places = places & (ticks >= 0) & (view.cash[:, None] >= self.price(ticks) * size)
        else:
            best, own = view.ask_prices[:, 0], view.own_ask
            ticks = best[:, None] + _ASK_OFFSETS[2:]
            places = ((best >= 0) & (self.room(view.inventory, SELL) >= size))[:, None]
            places = places & (ticks < self.n_ticks)
        mask = np.empty((len(best), 6), np.int8)
        mask[:, KEEP] = 1
        mask[:, CANCEL] = own[:, 0] >= 0
        mask[:, 2:] = places
        bid, ask = view.bid_prices[:, 0], view.ask_prices[:, 0]
        mask[:, IMPROVE] &= (bid >= 0) & (ask >= 0) & (ask - bid > 1)
        return mask

    def _market_mask(self, view: TraderView) -> NDArray[np.int8]:
        """(m, 3) mask of the market orders (MARKET_ORDERS)."""
        size = self.order_size
        other_asks = view.ask_volumes.sum(axis=1) - view.own_ask[:, 1] > 0
        other_bids = view.bid_volumes.sum(axis=1) - view.own_bid[:, 1] > 0
        mask = np.empty((len(view.inventory), 3), np.int8)
        mask[:, 0] = 1
        can_buy = other_asks & (self.room(view.inventory, BUY) >= size)
        mask[:, 1] = can_buy & (view.cash >= self._sweep_cost(view))
        mask[:, 2] = other_bids & (self.room(view.inventory, SELL) >= size)
        return mask

    def _sweep_cost(self, view: TraderView) -> NDArray[np.float64]:
        """What a market buy of order_size lots costs at the visible asks (the last visible
        price for any lots beyond them). Where the best level holds them all, that is
        order_size times its price; the sweep over levels runs for the other books only."""
        size = self.order_size
        own_price, own_lots = view.own_ask[:, :1], view.own_ask[:, 1:]
        own_here = (view.ask_prices == own_price) & (own_price >= 0)
        volumes = view.ask_volumes - np.where(own_here, own_lots, 0)
        prices = self.price(np.maximum(view.ask_prices, 0))
        cost = size * prices[:, 0]
        deeper = np.flatnonzero(volumes[:, 0] < size)
        if len(deeper):
            volumes, prices = volumes[deeper], prices[deeper]
            before = np.cumsum(volumes, axis=1) - volumes
            lots = np.clip(size - before, 0, volumes)
            missing = size - lots.sum(axis=1)
            cost[deeper] = (lots * prices).sum(axis=1) + missing * prices.max(axis=1)
        return cost

    def decode(
        self, view: TraderView, actions: NDArray[np.int64], agent: str
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """Check (m, 3) actions against the masks; return ``instructions``. ValueError names
        the agent and the first forbidden instruction. Value 0 (keep, no market order) is
        always possible, so a mask is computed only for an entry some book sets otherwise."""
        checks = (
            ("bid", INSTRUCTIONS, lambda: self._quote_mask(view, BUY)),
            ("ask", INSTRUCTIONS, lambda: self._quote_mask(view, SELL)),
            ("market order", MARKET_ORDERS, lambda: self._market_mask(view)),
        )
        rows = np.arange(len(actions))
        for entry, (which, names, mask) in enumerate(checks):
            chosen = actions[:, entry]
            if not chosen.any():
                continue
            allowed = mask()[rows, chosen].astype(bool)
            if not allowed.all():
                value = int(chosen[~allowed][0])
                raise ValueError(
                    f"{agent}: the {which} instruction {value} ({names[value]!r}) is masked "
                    "as impossible now; sample actions with action_mask(agent)"
                )
        return self.instructions(view, actions)

    def instructions(
        self, view: TraderView, actions: NDArray[np.int64]
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """(m, 3) actions the masks allow as the new bid and ask ticks (-1: keep, -2: cancel)
        and the market side (-1 none, BUY, SELL)."""
        chosen = [actions[:, entry] for entry in range(3)]
        acting = [bool(values.any()) for values in chosen]
        bid = _quote_ticks(chosen[0], view.bid_prices[:, 0], _BID_OFFSETS, acting[0])
        ask = _quote_ticks(chosen[1], view.ask_prices[:, 0], _ASK_OFFSETS, acting[1])
        market = _MARKET_SIDES[chosen[2]] if acting[2] else np.full(len(actions), -1)
        return bid, ask, market

    def observation(self, view: TraderView, time_left: Any) -> NDArray[np.float32]:
        """(m, 4K + 7): bid prices, bid lots, ask prices, ask lots (price 0 past the last
        level), inventory, cash, own bid price and lots, own ask price and lots, seconds left."""
        m, k = view.bid_prices.shape
        price = self._observed_price
        out = np.empty((m, 4 * k + 7), np.float32)
        out[:, :k] = price[view.bid_prices]
        out[:, k : 2 * k] = view.bid_volumes
        out[:, 2 * k : 3 * k] = price[view.ask_prices]
        out[:, 3 * k : 4 * k] = view.ask_volumes
        out[:, 4 * k] = view.inventory
        out[:, 4 * k + 1] = view.cash
        out[:, 4 * k + 2] = price[view.own_bid[:, 0]]
        out[:, 4 * k + 3] = view.own_bid[:, 1]
        out[:, 4 * k + 4] = price[view.own_ask[:, 0]]
        out[:, 4 * k + 5] = view.own_ask[:, 1]
        out[:, 4 * k + 6] = np.asarray(time_left, np.float64)
        return out


# each instruction's tick relative to the best of its side (keep and cancel place nothing)
_BID_OFFSETS = np.array([0, 0, 1, 0, -1, -2])
_ASK_OFFSETS = -_BID_OFFSETS
_MARKET_SIDES = np.array([-1, BUY, SELL])  # per MARKET_ORDERS value


def _quote_ticks(
    chosen: NDArray[np.int64], best: NDArray[np.int64], offsets: NDArray[Any], acting: bool
) -> NDArray[np.int64]:
    """The tick each book's instruction asks for: -1 keep, -2 cancel."""
    if not acting:
        return np.full(len(chosen), -1)
    ticks = best + offsets[chosen]
    ticks[chosen == KEEP] = -1
    ticks[chosen == CANCEL] = -2
    return ticks


def action_space_for() -> MultiDiscrete:
    """Bid instruction, ask instruction, market order."""
    return MultiDiscrete([len(INSTRUCTIONS), len(INSTRUCTIONS), len(MARKET_ORDERS)])


def observation_space_for(config: MarketConfig) -> Box:
    return Box(-np.inf, np.inf, shape=(4 * config.book_levels + 7,), dtype=np.float32)


def _schedule(
    intervals: tuple[float, ...], session_length: float
) -> tuple[tuple[float, ...], tuple[list[int], ...]]:
    """Every time some trader decides (k * interval < session_length) and who decides then."""
    by_time: dict[float, list[int]] = {}
    for trader, interval in enumerate(intervals):
        k = 0
        while (time := round(k * interval, 9)) < session_length:
            by_time.setdefault(time, []).append(trader)
            k += 1
    times = tuple(sorted(by_time))
    return times, tuple(by_time[t] for t in times)


def _check_int(name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value!r}")
