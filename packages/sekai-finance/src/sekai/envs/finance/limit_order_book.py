"""LimitOrderBookMarket: several traders on their own clocks in one limit order book.

The book is ``sekai.finance.OrderBook``; between decisions the Cont-Stoikov-Talreja flow
(or a given ``FlowEvents`` stream) moves it. The parts the native vector version shares
(parameters, schedule, action decoding, masks, observations) live in ``._lob_market``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from sekai.envs.finance._lob_market import (
    DEPTH_WINDOW,
    MarketConfig,
    TraderView,
    action_space_for,
    observation_space_for,
)
from sekai.envs.finance._pictures import EpisodeTrace, Picture, draw_market
from sekai.finance.order_book import BUY, PUBLIC, SELL, OrderBook
from sekai.finance.order_flow import (
    ContStoikovTalreja,
    FlowEvents,
    apply_event,
    public_levels,
    quotes,
    sample_event,
    seed_book,
)
from sekai.multi_agent import MAResetResult, MAStepResult, MultiAgentEnv


class LimitOrderBookMarket(MultiAgentEnv[np.ndarray, np.ndarray, str]):
    """``n_traders`` traders ``trader_0 ..`` in one order book; trader i decides every
    ``decision_intervals[i]`` seconds of a ``session_length``-second session.

    Each decision is ``MultiDiscrete([6, 6, 3])``: a bid instruction and an ask instruction
    (0 keep, 1 cancel, 2 improve the best quote by a tick, 3 join it, 4 one tick behind it,
    5 two ticks behind it; a new order replaces the trader's resting one) and a market order
    (0 none, 1 buy, 2 sell), each for ``order_size`` lots, cut to what keeps the trader's
    inventory within ``max_inventory`` lots long or short (a hard cap: no fill passes it). See
    docs/limit-order-book.md.
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "render_fps": 30,
    }
    picture = Picture(price="mid_price", equity="values", holding="inventory", agents="trader")

    def __init__(
        self,
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
        render_mode: str | None = None,
    ) -> None:
        self.config = MarketConfig.build(
            n_traders,
            decision_intervals=decision_intervals,
            session_length=session_length,
            flow=flow,
            tick_size=tick_size,
            initial_price=initial_price,
            n_ticks=n_ticks,
            order_size=order_size,
            max_inventory=max_inventory,
            initial_cash=initial_cash,
            book_levels=book_levels,
        )
        self._set_render_mode(render_mode)
        draws = render_mode in ("human", "rgb_array")
        self._trace = EpisodeTrace(self.picture) if draws else None
        self.possible_agents = [f"trader_{i}" for i in range(self.config.n_traders)]
        self.agents = []
        self.observation_spaces = {
            a: observation_space_for(self.config) for a in self.possible_agents
        }
        self.action_spaces = {a: action_space_for() for a in self.possible_agents}
        self.book = OrderBook(self.config.n_ticks)

    # -- episode ----------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> MAResetResult:
        self._set_rng(seed)
        config = self.config
        self.book = OrderBook(config.n_ticks)
        seed_book(self.book, config.initial_depth, config.first_bid)
        self._bid_ref, self._ask_ref = config.first_bid, config.first_bid + 1
        n = config.n_traders
        self.cash = np.full(n, config.initial_cash)
        self.inventory = np.zeros(n, np.int64)
        self.public_cash = 0.0  # the background flow's account, for conservation checks
        self.public_inventory = 0
        self._orders: list[list[int | None]] = [[None, None] for _ in range(n)]  # ids per side
        self._tape_read = 0
        self._flow_index = 0  # next event of a given flow
        self.flow_events = 0  # background events applied this session
        self._step_index = 0
        self._mid = config.initial_price
        self._values = self._marked_values()
        self.agents = list(self.possible_agents)
        due = self._due(0)
        observations = {self.possible_agents[i]: self._observe(i) for i in due}
        if self._trace is not None:
            self._trace.start(self._state)
            self._show_frame()
        return MAResetResult(observations, {a: self._info(0) for a in observations})

    def step(self, actions: dict[str, Any]) -> MAStepResult:
        config = self.config
        if not self.agents:
            raise RuntimeError("the session is over: call reset() before step()")
        now = config.times[self._step_index]
        due = self._due(self._step_index)
        self._check_actions(actions, due)
        # every due trader decided on the book as it is now: check them all, then execute
        plans = [(i, self._decode(i, actions[self.possible_agents[i]])) for i in due]
        for i, plan in plans:
            self._execute(i, *plan)
        self._step_index += 1
        last = self._step_index == len(config.times)
        until = config.session_length if last else config.times[self._step_index]
        self._run_flow(now, until)
        values = self._marked_values()
        rewards = dict(zip(self.possible_agents, (values - self._values).tolist(), strict=True))
        self._values = values
        next_due = range(config.n_traders) if last else self._due(self._step_index)
        observations = {self.possible_agents[i]: self._observe(i) for i in next_due}
        flags = dict.fromkeys(self.possible_agents, last)
        info = {a: self._info(until) for a in self.possible_agents}
        if last:
            self.agents = []
        if self._trace is not None:
            self._trace.record(self._state)
            self._show_frame()
        return MAStepResult(observations, rewards, flags, dict.fromkeys(flags, False), info)

    def action_mask(self, agent: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Which values of each entry of ``agent``'s action are possible now (1) or not (0)."""
        i = self._agent_index(agent)
        return tuple(mask[0] for mask in self.config.masks(self._trader_view(i)))  # type: ignore[return-value]

    # -- trader actions ---------------------------------------------------------------------
    def _decode(self, i: int, action: Any) -> tuple[int, int, int]:
        agent = self.possible_agents[i]
        space = self.action_spaces[agent]
        if not space.contains(action):
            raise ValueError(f"{agent}: action {action!r} is not in {space}")
        bid, ask, market = self.config.decode(
            self._trader_view(i), np.asarray(action, np.int64)[None], agent
        )
        return int(bid[0]), int(ask[0]), int(market[0])

    def _execute(self, i: int, bid: int, ask: int, market: int) -> None:
        """Carry out a decoded decision: bid/ask tick, -1 keep or -2 cancel; market side or -1.

        The inventory cap is hard: new quotes and market orders are cut to the room the cap
        leaves (``MarketConfig.room``), and after a market order the trader's quote on its side
        is cut to the room left; a resting order's fills then never pass the cap."""
        owner, size = i + 1, self.config.order_size
        for side, instruction in ((BUY, bid), (SELL, ask)):
            order_id = self._resting(i, side)
            if instruction == -1 or (
                order_id is not None and self.book.order(order_id).price == instruction
            ):
                continue  # keep, or already there: keep the place in the queue
            if order_id is not None:
                self.book.cancel(order_id)
                self._orders[i][side] = None
            best = self.book.best_ask if side == BUY else self.book.best_bid
            crosses = best is not None and (
                instruction >= best if side == BUY else instruction <= best
            )
            lots = min(size, self._room(i, side))
            if instruction >= 0 and not crosses and lots > 0:  # post-only: crossing is dropped
                self._orders[i][side] = self.book.add(side, instruction, lots, owner)
        if market >= 0:
            opposite = SELL if market == BUY else BUY
            own = self._resting(i, opposite)
            if own is not None:  # self-trade prevention: the trader's own quote goes first
                self.book.cancel(own)
                self._orders[i][opposite] = None
            lots = min(size, self._room(i, market))
            if lots > 0:
                self.book.market(market, lots, owner)
                self._settle()
                self._cut_to_room(i, market)
        self._settle()

    def _room(self, i: int, side: int) -> int:
        """Lots trader i may still buy (BUY) or sell (SELL) within the inventory cap."""
        return int(self.config.room(self.inventory[i], side))

    def _cut_to_room(self, i: int, side: int) -> None:
        """Cut trader i's resting order on ``side`` to the room the cap leaves (it keeps its
        place in the queue), or cancel it if there is none."""
        order_id = self._resting(i, side)
        if order_id is None:
            return
        size, room = self.book.order(order_id).size, self._room(i, side)
        if room <= 0:
            self.book.cancel(order_id)
            self._orders[i][side] = None
        elif size > room:
            self.book.cancel(order_id, size - room)

    def _resting(self, i: int, side: int) -> int | None:
        order_id = self._orders[i][side]
        if order_id is not None and order_id not in self.book:
            self._orders[i][side] = order_id = None
        return order_id

    # -- background flow --------------------------------------------------------------------
    def _run_flow(self, start: float, until: float) -> None:
        flow = self.config.flow
        if isinstance(flow, FlowEvents):
            stop = int(np.searchsorted(flow.time, until, side="left"))
            for j in range(self._flow_index, stop):
                apply_event(
                    self.book,
                    int(flow.kind[j]),
                    int(flow.side[j]),
                    int(flow.price[j]),
                    int(flow.rank[j]),
                )
                self._settle()
            self.flow_events += max(0, stop - self._flow_index)
            self._flow_index = max(self._flow_index, stop)
            return
        clock = start
        levels = flow.levels
        while True:
            self._bid_ref, self._ask_ref = quotes(self.book, self._bid_ref, self._ask_ref)
            bids, asks = public_levels(
                self.book, levels, self._bid_ref, self._ask_ref, self._private_lots()
            )
            wait, kind, side, price, rank = sample_event(
                flow, self.rng, self._bid_ref, self._ask_ref, bids, asks
            )
            clock += wait
            if clock >= until:
                break
            apply_event(self.book, kind, side, price, rank)
            self.flow_events += 1
            self._settle()

    def _private_lots(self) -> dict[tuple[int, int], int]:
        """The traders' resting lots by (side, price)."""
        lots: dict[tuple[int, int], int] = {}
        for side in (BUY, SELL):
            for i in range(self.config.n_traders):
                order_id = self._resting(i, side)
                if order_id is not None:
                    order = self.book.order(order_id)
                    lots[side, order.price] = lots.get((side, order.price), 0) + order.size
        return lots

    # -- accounting -------------------------------------------------------------------------
    def _settle(self) -> None:
        """Book every new trade of the tape to the traders' and the public's accounts, lot by
        lot, so the cash sums are the same floats as the native vector version's."""
        trades = self.book.trades
        to_price = self.config.price
        for trade in trades[self._tape_read :]:
            value = to_price(trade.price)
            buyer, seller = (
                (trade.taker_owner, trade.maker_owner)
                if trade.taker_side == BUY
                else (trade.maker_owner, trade.taker_owner)
            )
            for _ in range(trade.size):
                self._book_fill(buyer, 1, -value)
                self._book_fill(seller, -1, value)
        self._tape_read = len(trades)

    def _book_fill(self, owner: int, shares: int, cash: float) -> None:
        if owner == PUBLIC:
            self.public_inventory += shares
            self.public_cash += cash
        else:
            self.inventory[owner - 1] += shares
            self.cash[owner - 1] += cash

    def _marked_values(self) -> np.ndarray:
        bid, ask = self.book.best_bid, self.book.best_ask
        if bid is not None and ask is not None:
            self._mid = self.config.price((bid + ask) / 2)
        return self.cash + self.inventory * self._mid

    # -- views ------------------------------------------------------------------------------
    def _trader_view(self, i: int) -> TraderView:
        depth = self.config.book_levels
        levels = []
        for side in (BUY, SELL):
            prices = np.full((1, depth), -1, np.int64)
            volumes = np.zeros((1, depth), np.int64)
            levels_shown = self.book.depth(side, depth)
            best = levels_shown[0][0] if levels_shown else 0
            for k, (price, volume) in enumerate(levels_shown):
                if abs(price - best) < DEPTH_WINDOW:
                    prices[0, k], volumes[0, k] = price, volume
            levels += [prices, volumes]
        own = []
        for side in (BUY, SELL):
            order_id = self._resting(i, side)
            order = None if order_id is None else self.book.order(order_id)
            own.append(np.array([[-1, 0] if order is None else [order.price, order.size]]))
        bid_prices, bid_volumes, ask_prices, ask_volumes = levels
        return TraderView(
            bid_prices,
            bid_volumes,
            ask_prices,
            ask_volumes,
            self.inventory[i : i + 1],
            self.cash[i : i + 1],
            own[0],
            own[1],
        )

    def _observe(self, i: int) -> np.ndarray:
        time_left = self.config.session_length - self._now()
        return self.config.observation(self._trader_view(i), time_left)[0]

    def _now(self) -> float:
        times = self.config.times
        if self._step_index >= len(times):
            return self.config.session_length
        return times[self._step_index]

    def _info(self, timestamp: float) -> dict[str, Any]:
        return {"timestamp": float(timestamp)}

    def _due(self, step_index: int) -> list[int]:
        return self.config.due[step_index]

    def _check_actions(self, actions: dict[str, Any], due: list[int]) -> None:
        expected = {self.possible_agents[i] for i in due}
        if not isinstance(actions, dict) or set(actions) != expected:
            given = sorted(actions) if isinstance(actions, dict) else actions
            raise ValueError(
                f"step() takes actions for exactly the traders due now, {sorted(expected)}, "
                f"got {given!r}"
            )

    def _agent_index(self, agent: str) -> int:
        try:
            return self.possible_agents.index(agent)
        except ValueError:
            raise KeyError(f"no agent {agent!r}; agents: {self.possible_agents}") from None

    # -- rendering --------------------------------------------------------------------------
    @property
    def mid_price(self) -> float:
        """The last mid price (the last one seen while one side of the book was empty)."""
        return float(self._mid)

    @property
    def values(self) -> np.ndarray:
        """Each trader's cash plus inventory marked at the mid price."""
        return self._marked_values()

    def _state(self, name: str) -> Any:
        return getattr(self, name)

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the book's levels and the last trades as text; ``"rgb_array"``: a
        (520, 600, 3) uint8 image of the book (volume by price, bids green, asks red) above the
        session so far (the mid price, each trader's marked value and inventory), None before
        the first reset; ``"human"``: that image in a window, and None; else None."""
        if self._trace is not None:
            return self._render_frame()
        if self.render_mode != "ansi":
            return None
        price = self.config.price
        lines = [f"t={self._now():.2f}s"]
        for tick, volume in reversed(self.book.depth(SELL, self.config.book_levels)):
            lines.append(f"  ask {price(tick):10.2f} x {volume}")
        for tick, volume in self.book.depth(BUY, self.config.book_levels):
            lines.append(f"  bid {price(tick):10.2f} x {volume}")
        names = ["public", *self.possible_agents]
        for trade in self.book.trades[-5:]:
            side = "buy" if trade.taker_side == BUY else "sell"
            lines.append(
                f"  trade {trade.size} @ {price(trade.price):.2f} "
                f"({names[trade.taker_owner]} {side}s from {names[trade.maker_owner]})"
            )
        return "\n".join(lines)

    def _frame(self) -> np.ndarray | None:
        if self._trace is None:
            return None
        levels = self.config.book_levels * 4
        bids, asks = (
            [(self.config.price(tick), volume) for tick, volume in self.book.depth(side, levels)]
            for side in (BUY, SELL)
        )
        return draw_market(self._trace, bids, asks, self.config.tick_size)
