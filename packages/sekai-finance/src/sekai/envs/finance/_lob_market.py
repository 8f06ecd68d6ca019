"""What LimitOrderBookMarket and LimitOrderBookVecEnv share: parameters, the decision schedule,
the spaces, and the array functions that turn a trader's view of the book into masks, orders
and observations (leading axis: one row per book, so the single env passes one row)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from sekai.finance.order_book import BUY, SELL
from sekai.finance.order_flow import ContStoikovTalreja, FlowEvents
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
        cls, n_traders: int, *, decision_intervals: Any, flow: Any, **kwargs: Any
    ) -> MarketConfig:
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

    # -- trader decisions, in array form ---------------------------------------------------
    def instruction_prices(self, view: TraderView) -> tuple[NDArray[Any], NDArray[Any]]:
        """(m, 6) tick of each bid and ask instruction (meaningless where masked)."""
        best_bid = view.bid_prices[:, 0]
        best_ask = view.ask_prices[:, 0]
        bid = best_bid[:, None] + np.array([0, 0, 1, 0, -1, -2])
        ask = best_ask[:, None] + np.array([0, 0, -1, 0, 1, 2])
        return bid, ask

    def masks(self, view: TraderView) -> tuple[NDArray[np.int8], ...]:
        """(m, 6), (m, 6), (m, 3) masks: 1 where the value is possible now."""
        m = len(view.inventory)
        size = self.order_size
        has_bids = view.bid_prices[:, 0] >= 0
        has_asks = view.ask_prices[:, 0] >= 0
        spread = np.where(has_bids & has_asks, view.ask_prices[:, 0] - view.bid_prices[:, 0], 0)
        bid_price, ask_price = self.instruction_prices(view)
        can_buy = view.inventory + size <= self.max_inventory
        can_sell = view.inventory - size >= -self.max_inventory

        bid = np.zeros((m, 6), bool)
        bid[:, KEEP] = True
        bid[:, CANCEL] = view.own_bid[:, 0] >= 0
        affordable = view.cash[:, None] >= self.price(bid_price) * size
        bid[:, 2:] = (has_bids & can_buy)[:, None] & affordable[:, 2:] & (bid_price[:, 2:] >= 0)
        bid[:, IMPROVE] &= spread > 1

        ask = np.zeros((m, 6), bool)
        ask[:, KEEP] = True
        ask[:, CANCEL] = view.own_ask[:, 0] >= 0
        ask[:, 2:] = (has_asks & can_sell)[:, None] & (ask_price[:, 2:] < self.n_ticks)
        ask[:, IMPROVE] &= spread > 1

        other_asks = view.ask_volumes.sum(axis=1) - view.own_ask[:, 1] > 0
        other_bids = view.bid_volumes.sum(axis=1) - view.own_bid[:, 1] > 0
        market = np.zeros((m, 3), bool)
        market[:, 0] = True
        market[:, 1] = other_asks & can_buy & (view.cash >= self._sweep_cost(view))
        market[:, 2] = other_bids & can_sell
        return bid.astype(np.int8), ask.astype(np.int8), market.astype(np.int8)

    def _sweep_cost(self, view: TraderView) -> NDArray[np.float64]:
        """What a market buy of order_size lots costs at the visible asks (the last visible
        price for any lots beyond them)."""
        volumes = view.ask_volumes.copy()
        own_at = view.ask_prices == view.own_ask[:, :1]
        volumes -= np.where(own_at & (view.own_ask[:, :1] >= 0), view.own_ask[:, 1:], 0)
        before = np.cumsum(volumes, axis=1) - volumes
        lots = np.clip(self.order_size - before, 0, volumes)
        prices = self.price(np.maximum(view.ask_prices, 0))
        cost = (lots * prices).sum(axis=1)
        missing = self.order_size - lots.sum(axis=1)
        return cost + missing * prices.max(axis=1)

    def decode(
        self, view: TraderView, actions: NDArray[np.int64], agent: str
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """Check (m, 3) actions against the masks; return the new bid and ask ticks (-1: keep,
        -2: cancel) and the market side (-1 none, BUY, SELL). ValueError names the agent and
        the first forbidden instruction."""
        masks = self.masks(view)
        rows = np.arange(len(actions))
        for entry, (mask, names) in enumerate(
            zip(masks, (INSTRUCTIONS, INSTRUCTIONS, MARKET_ORDERS), strict=True)
        ):
            allowed = mask[rows, actions[:, entry]].astype(bool)
            if not allowed.all():
                which = ("bid", "ask", "market order")[entry]
                value = int(actions[~allowed][0, entry])
                raise ValueError(
                    f"{agent}: the {which} instruction {value} ({names[value]!r}) is masked "
                    "as impossible now; sample actions with action_mask(agent)"
                )
        bid_price, ask_price = self.instruction_prices(view)
        bid = np.where(actions[:, 0] == KEEP, -1, np.where(actions[:, 0] == CANCEL, -2, 0))
        bid = np.where(actions[:, 0] >= 2, bid_price[rows, actions[:, 0]], bid)
        ask = np.where(actions[:, 1] == KEEP, -1, np.where(actions[:, 1] == CANCEL, -2, 0))
        ask = np.where(actions[:, 1] >= 2, ask_price[rows, actions[:, 1]], ask)
        market = np.where(actions[:, 2] == 1, BUY, np.where(actions[:, 2] == 2, SELL, -1))
        return bid, ask, market

    def observation(self, view: TraderView, time_left: Any) -> NDArray[np.float32]:
        """(m, 4K + 7): bid prices, bid lots, ask prices, ask lots (price 0 past the last
        level), inventory, cash, own bid price and lots, own ask price and lots, seconds left."""

        def prices(ticks: NDArray[Any]) -> NDArray[Any]:
            return np.where(ticks >= 0, self.price(ticks), 0.0)

        m = len(view.inventory)
        columns = [
            prices(view.bid_prices),
            view.bid_volumes,
            prices(view.ask_prices),
            view.ask_volumes,
            view.inventory[:, None],
            view.cash[:, None],
            prices(view.own_bid[:, :1]),
            view.own_bid[:, 1:],
            prices(view.own_ask[:, :1]),
            view.own_ask[:, 1:],
            np.broadcast_to(np.asarray(time_left, np.float64), (m,))[:, None],
        ]
        return np.concatenate([np.asarray(c, np.float64) for c in columns], axis=1).astype(
            np.float32
        )


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
