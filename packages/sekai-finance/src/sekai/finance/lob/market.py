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

from sekai.finance.lob.book import BUY
from sekai.finance.lob.flow import ContStoikovTalreja, FlowEvents
from sekai.spaces import Box, MultiDiscrete

INSTRUCTIONS = ("keep", "cancel", "improve", "join", "one tick behind", "two ticks behind")
MARKET_ORDERS = ("none", "buy", "sell")
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

    @classmethod
    def of(cls, *arrays: NDArray[Any]) -> TraderView:
        """A view of ``arrays`` (the fields, in order) made C-contiguous: the compiled rules
        (``_trader_rows``) then compile once, for one layout, whoever built the view."""
        return cls(*(np.ascontiguousarray(array) for array in arrays))


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
    def observed_price(self) -> NDArray[np.float64]:
        """Price of each tick, and 0.0 at index -1 (no level), for observations."""
        return np.append(self.price(np.arange(self.n_ticks)), 0.0)

    def room(self, inventory: Any, side: int) -> Any:
        """Lots a trader holding ``inventory`` (a number or an array) may still buy (``side``
        BUY) or sell (SELL) without passing the cap: ``max_inventory`` -/+ ``inventory``."""
        return self.max_inventory - inventory if side == BUY else self.max_inventory + inventory

    # -- trader decisions, in array form (the rules, compiled: ``_trader_rows``) ------------
    @functools.cached_property
    def rules(self) -> tuple[tuple[float, int, float], tuple[int, int, int]]:
        """``_trader_rows``' price grid and limits of this market."""
        grid = (self.initial_price, self.first_bid, self.tick_size)
        return grid, (self.order_size, self.max_inventory, self.n_ticks)

    def masks(
        self, view: TraderView, halted: NDArray[np.bool_] | None = None
    ) -> tuple[NDArray[np.int8], ...]:
        """(m, 6), (m, 6), (m, 3) masks: 1 where the value is possible now; where ``halted``
        (a replayed book's trading halt), only keep and cancel."""
        m = len(view.inventory)
        masked = _empty_masks(m)
        halted = np.zeros(m, bool) if halted is None else halted
        from sekai.finance.lob import _trader_rows  # numba, imported when a trader acts

        _trader_rows.masks(view, halted, *self.rules, *masked)
        return masked

    def decode(
        self, view: TraderView, actions: NDArray[np.int64], agent: str
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """Check (m, 3) actions against the masks; return them decoded (``decide``).
        ValueError names the agent and the first forbidden instruction (by entry: bid, ask,
        market order)."""
        decoded, refused = self.decide(view, np.zeros(len(actions), bool), actions)
        entries = refused[:, 1]
        if (entries >= 0).any():
            entry = int(entries[entries >= 0].min())
            value = int(actions[np.flatnonzero(entries == entry)[0], entry])
            which, names = ACTION_ENTRIES[entry]
            raise ValueError(
                f"{agent}: the {which} instruction {value} ({names[value]!r}) is masked "
                "as impossible now; sample actions with action_mask(agent)"
            )
        return decoded  # type: ignore[return-value]

    def decide(
        self, view: TraderView, halted: NDArray[np.bool_], actions: NDArray[np.int64]
    ) -> tuple[tuple[NDArray[np.int64], ...], NDArray[np.int64]]:
        """(m, 3) actions checked against the masks (``halted`` as ``masks`` takes it) and
        decoded: the new bid and ask ticks (-1 keep, -2 cancel) and the market order's side
        (-1 none, BUY, SELL), a forbidden value as 0 (keep, no market order); and per
        row, how many values were forbidden and the first one's entry (0 bid, 1 ask,
        2 market order; -1 none)."""
        actions = np.ascontiguousarray(actions, np.int64)  # one layout: one compiled decide
        m = len(actions)
        decoded = tuple(np.empty(m, np.int64) for _ in range(3))
        refused = np.empty((m, 2), np.int64)
        from sekai.finance.lob import _trader_rows

        # one thread for any m: a thousand rows take about 30 us, what waking the cores costs
        _trader_rows.decide(view, halted, actions, *self.rules, _empty_masks(m), decoded, refused)
        return decoded, refused

    def observation(self, view: TraderView, time_left: Any) -> NDArray[np.float32]:
        """(m, 4K + 7): bid prices, bid lots, ask prices, ask lots (price 0 past the last
        level), inventory, cash, own bid price and lots, own ask price and lots, seconds left."""
        m, k = view.bid_prices.shape
        out = np.empty((m, 4 * k + 7), np.float32)
        time_left = np.broadcast_to(np.asarray(time_left, np.float64), (m,)).copy()  # one layout
        from sekai.finance.lob import _trader_rows

        _trader_rows.observe(view, self.observed_price, time_left, out)
        return out


ACTION_ENTRIES = (  # each entry of an action: what it sets, its values' names
    ("bid", INSTRUCTIONS),
    ("ask", INSTRUCTIONS),
    ("market order", MARKET_ORDERS),
)


def _empty_masks(m: int) -> tuple[NDArray[np.int8], ...]:
    n = len(INSTRUCTIONS)
    return np.empty((m, n), np.int8), np.empty((m, n), np.int8), np.empty((m, 3), np.int8)


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
