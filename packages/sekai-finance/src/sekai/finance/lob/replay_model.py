"""The replay market over a leading window axis: what LobsterReplayEnv (one window, one
agent), its native vector env (many windows) and LobsterReplayMarket (one window, several
agents) drive. Per step it decodes the agents' actions against the book each saw, makes one
compiled call that replays every window's messages with the agents' virtual orders
(``sekai.finance.lob._replay_windows``), and marks the accounts to the mid."""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from sekai.finance.arguments import check_float, check_int, check_positive
from sekai.finance.lob import _replay_view
from sekai.finance.lob._engine import PARALLEL_FROM
from sekai.finance.lob._impact_windows import impacted_tops, step_impact_windows
from sekai.finance.lob._replay_days import ReplayDays
from sekai.finance.lob._replay_levels import TopLevels
from sekai.finance.lob._replay_positions import queue_positions
from sekai.finance.lob._replay_windows import FILL_FIELDS, NO_MARKET, step_windows
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.flow import ContStoikovTalreja, simulate_flow
from sekai.finance.lob.lobster import record_flow
from sekai.finance.lob.market import ACTION_ENTRIES, MarketConfig, TraderView
from sekai.finance.samplers import EpisodeSampler, resolve_sampler

if TYPE_CHECKING:
    from sekai.finance.lob._depth_day import DepthDays

PRICE_UNITS = 10_000  # a LOBSTER price is dollars x 10,000
QUEUE_FIELDS = 4  # bid lots ahead, bid ticks behind the best bid, the same for the ask


@dataclasses.dataclass(frozen=True)
class ReplayTerms:
    """The validated parameters of a replay market."""

    days: ReplayDays | DepthDays
    market: MarketConfig  # order size, inventory cap, cash, levels, prices, masks
    step_seconds: float
    episode_steps: int
    entry_latency: NDArray[np.float64]  # (agents,) seconds
    data_latency: NDArray[np.float64]  # (agents,) seconds
    maker_fee: float
    taker_fee: float
    last_trades: int
    sampler: EpisodeSampler
    impact: bool = dataclasses.field(default=False, kw_only=True)  # see ``_impact_windows``

    @property
    def last_starts(self) -> NDArray[np.int64]:
        """Per day, the last step at which a whole episode fits in it."""
        days = self.days
        steps = ((days.last_times - days.first_times) // self.step_seconds).astype(np.int64)
        return steps - self.episode_steps  # type: ignore[no-any-return]

    @property
    def observation_size(self) -> int:
        return 4 * self.market.book_levels + 7 + QUEUE_FIELDS + 2 * self.last_trades


def build_terms(
    n_agents: int,
    *,
    messages: Any,
    orderbook: Any,
    symbol: str | None,
    days: Any,
    tick: int,
    price_offset: int,
    n_ticks: int | None,
    impact: bool = False,
    **market: Any,
) -> ReplayTerms:
    """Check the parameters of a replay market of ``n_agents`` agents and replay its days
    (one day or a list, see ``ReplayDays``; a Parquet store's folder, its ``symbol``'s
    ``days``, replayed as windows need them; without ``messages``, ``synthetic_day()``);
    ``impact``: the agent's trades change its window's book (``_impact_windows``; one agent,
    no level rows); ``market``: the keyword arguments of ``market_terms`` after ``load``."""
    if not isinstance(impact, bool | np.bool_):
        raise TypeError(f"impact must be True or False, got {impact!r}")
    if impact and orderbook is not None:
        raise ValueError(
            "impact=True cannot be reconciled with orderbook rows: the rows describe the day "
            "without the agent's trades; give the messages alone (orderbook=None)"
        )
    if impact and n_agents != 1:
        raise ValueError(f"impact=True takes one agent per window, got {n_agents}")

    def load(levels: int) -> ReplayDays:
        nonlocal messages
        if messages is None:
            if orderbook is not None:
                raise ValueError("orderbook needs the messages it belongs to: pass messages= too")
            messages = synthetic_day()
        grid: dict[str, Any] = dict(
            tick=tick, price_offset=price_offset, n_ticks=n_ticks, levels=levels
        )
        if isinstance(messages, str | os.PathLike) and os.path.isdir(messages):
            if orderbook is not None:
                raise ValueError("a store holds events only: give no orderbook with it")
            if symbol is None:
                raise ValueError(f"{os.fspath(messages)}: a store holds many symbols: give symbol=")
            return ReplayDays.stored(messages, symbol, days, **grid)
        if days is not None:
            raise ValueError("days= chooses days of a Parquet store: give the store's folder")
        return ReplayDays(messages, orderbook, symbol=symbol, **grid)

    return market_terms(
        n_agents, load, tick=tick, price_offset=price_offset, impact=bool(impact), **market
    )


def market_terms(
    n_agents: int,
    load: Any,
    *,
    tick: int,
    price_offset: int,
    step_seconds: float,
    episode_steps: int,
    order_size: int,
    max_inventory: int,
    initial_cash: float,
    book_levels: int,
    last_trades: int,
    maker_fee: float,
    taker_fee: float,
    entry_latency: Any,
    data_latency: Any,
    sampler: EpisodeSampler | str | None,
    terms_type: type[ReplayTerms] | None = None,
    **extra: Any,
) -> ReplayTerms:
    """Check a replay market's parameters, then ``load(levels)`` its days (``ReplayDays``,
    or ``DepthDays``: ``levels`` top levels recorded) and make its terms (a ``terms_type``,
    ``ReplayTerms`` by default, with the ``extra`` fields it adds)."""
    step_seconds = check_positive("step_seconds", step_seconds)
    episode_steps = check_int("episode_steps", episode_steps, 1)
    book_levels = check_int("book_levels", book_levels, 1)
    last_trades = check_int("last_trades", last_trades, 0)
    maker_fee = check_float("maker_fee", maker_fee)
    taker_fee = check_float("taker_fee", taker_fee)
    entry, data = (
        _latencies(name, value, n_agents)
        for name, value in (("entry_latency", entry_latency), ("data_latency", data_latency))
    )
    if (entry >= step_seconds).any():
        raise ValueError(
            f"entry_latency must be below step_seconds ({step_seconds}), so that an "
            f"instruction reaches the book within its step; got {entry.tolist()}"
        )
    replayed = load(max(book_levels, 3))
    market = MarketConfig.build(
        n_agents,
        decision_intervals=None,
        flow=None,
        session_length=episode_steps * step_seconds,
        **replay_grid(replayed.n_ticks, tick, price_offset),
        order_size=order_size,
        max_inventory=max_inventory,
        initial_cash=initial_cash,
        book_levels=book_levels,
    )
    terms = (terms_type or ReplayTerms)(
        days=replayed,
        market=market,
        step_seconds=step_seconds,
        episode_steps=episode_steps,
        entry_latency=entry,
        data_latency=data,
        maker_fee=maker_fee,
        taker_fee=taker_fee,
        last_trades=last_trades,
        sampler=resolve_sampler(sampler),
        **extra,
    )
    short = np.flatnonzero(terms.last_starts < 0)
    if len(short):
        d = int(short[0])
        which = "the day" if len(replayed) == 1 else f"day {d}"
        raise ValueError(
            f"{which} spans {replayed.last_times[d] - replayed.first_times[d]:.3f} s, shorter than "
            f"one episode of {episode_steps} steps of {step_seconds} s"
        )
    return terms


def replay_grid(n_ticks: int, tick: int, price_offset: int) -> dict[str, Any]:
    """``MarketConfig``'s grid of a replayed day priced on ``n_ticks`` ticks of ``tick`` price
    units from ``price_offset`` (``lobster.replay``'s): the env's and ``replay_orders``'."""
    return dict(
        tick_size=tick / PRICE_UNITS,
        initial_price=(n_ticks // 2 * tick + price_offset) / PRICE_UNITS,
        n_ticks=n_ticks,
    )


@functools.cache
def synthetic_day() -> NDArray[Any]:
    """The default day: an hour of the Cont-Stoikov-Talreja flow (seed 0) recorded as LOBSTER
    messages (``lobster.record_flow``), at $10.00 a share on a one-cent grid."""
    flow = simulate_flow(ContStoikovTalreja(), 3600.0, n_ticks=2000, seed=0)
    messages = record_flow(flow, n_ticks=2000)
    messages.flags.writeable = False
    return messages


def _refusal(
    name: str, chosen: NDArray[np.int64], refused: NDArray[np.int64], halted: NDArray[np.bool_]
) -> str:
    """What the first forbidden entry of ``chosen`` (rows of actions) asks for, and why
    (``refused``: ``MarketConfig.decide``'s)."""
    row = int(np.flatnonzero(refused[:, 0])[0])
    entry = int(refused[row, 1])
    value = int(chosen[row, entry])
    which, names = ACTION_ENTRIES[entry]
    why = "trading is halted, so only keep and cancel are possible" if halted[row] else "masked"
    return (
        f"{name}: the {which} instruction {value} ({names[value]!r}) is impossible now "
        f"({why}); sample actions with action_mask"
    )


def _latencies(name: str, value: Any, n_agents: int) -> NDArray[np.float64]:
    """One latency per agent (seconds): a number for all, or a sequence of one per agent."""
    values = [value] * n_agents if np.ndim(value) == 0 else list(value)
    if len(values) != n_agents:
        raise ValueError(f"{name} needs one latency per agent ({n_agents}), got {len(values)}")
    return np.array([check_float(name, v, 0.0) for v in values])


class ReplayModel:
    """``num_envs`` windows of ``terms.days`` with ``n_agents`` agents each; window w lies in
    day ``day[w]``, the windows of every day stepped by one compiled call on the joined tape."""

    def __init__(self, terms: ReplayTerms, num_envs: int) -> None:
        self.terms = terms
        self.num_envs = num_envs
        n_agents = terms.market.n_traders
        self.n_agents = n_agents
        self._price = np.ascontiguousarray(terms.market.price(np.arange(terms.days.n_ticks)))
        self._tape = self._make_tape()
        self.cursor = np.zeros(num_envs, np.int64)  # the next message, on the joined tape
        self.day = np.zeros(num_envs, np.int64)
        self.start = np.zeros(num_envs, np.int64)  # the episode's first step of the day
        self._started = np.zeros(num_envs, bool)  # windows reset at least once
        self.steps = np.zeros(num_envs, np.int64)
        self.orders = np.zeros((num_envs, n_agents, 2, 4), np.int64)
        self.cash = np.zeros((num_envs, n_agents))
        self.inventory = np.zeros((num_envs, n_agents), np.int64)
        self.fees = np.zeros((num_envs, n_agents))
        self.mid = np.zeros(num_envs)
        self.values = np.zeros((num_envs, n_agents))
        self.refused = np.zeros(num_envs, np.int64)
        self.ignored = np.zeros(num_envs, np.int64)
        capacity = n_agents * (4 * terms.market.order_size + terms.days.top.shape[2])
        self.fills = np.zeros((num_envs, capacity, FILL_FIELDS), np.int64)
        self.n_fills = np.zeros(num_envs, np.int64)
        market = terms.market
        self._terms = (market.order_size, market.max_inventory, terms.maker_fee, terms.taker_fee)
        # the arrays step_windows changes, in its order (they are changed in place, never
        # replaced, so the tuple stays valid)
        self.state: tuple[Any, ...] = (
            self.cursor,
            self.orders,
            self.cash,
            self.inventory,
            self.fees,
            self.fills,
            self.n_fills,
            self.refused,
        )
        if terms.impact:  # per window and (side, tick), the lots its trades took
            self.deficits = np.zeros((num_envs, 2, terms.days.n_ticks), np.int64)
            self.state = (*self.state, self.deficits)
        # per agent, the message index of the book it sees and its view, kept until the
        # windows move (reset, advance): the observation, the masks and the decoding of the
        # next actions read the same view
        self._seen_rows: dict[int, NDArray[np.int64]] = {}
        self._views: dict[int, TraderView] = {}
        # per agent, where its last view read each level in the level history (see
        # ``TopLevels.near``): kept across steps, a guess that is never wrong, only slow
        self._level_hints: dict[int, NDArray[np.int64]] = {}

    def _moved(self) -> None:
        """Forget the views: the windows' books, accounts or orders changed."""
        self._seen_rows.clear()
        self._views.clear()

    def _make_tape(self) -> tuple[Any, ...]:
        """The arrays the compiled step reads: the days' tape, and with impact the queue
        positions of the messages' orders after it."""
        tape = self.terms.days.tape(self._price)
        return (*tape, *queue_positions(self.terms.days)) if self.terms.impact else tape

    # -- episodes ----------------------------------------------------------------------------
    def reset(
        self, indices: NDArray[np.int64], options: list[dict[str, Any] | None], rng: Any
    ) -> dict[str, Any]:
        terms = self.terms
        self._moved()
        counts = terms.last_starts + 1  # the episodes' starts, per day
        total = int(counts.sum())
        # the sampler draws one of the set's windows: day 0's starts first, then day 1's, ...
        drawn = terms.sampler.sample(rng, 0, total - 1, terms.episode_steps, len(indices))
        days = np.searchsorted(np.cumsum(counts), drawn, "right")
        starts = drawn - (np.cumsum(counts) - counts)[days]
        for j, option in enumerate(options):
            if option and ("day" in option or "start" in option):
                days[j], starts[j] = self._chosen(option, rng)
        self._use(indices, days)
        self.day[indices] = days
        self.start[indices] = starts
        self.steps[indices] = 0
        self.cursor[indices] = terms.days.after(days, self.now()[indices])
        self.orders[indices] = 0
        self.orders[indices, :, :, 0] = -1
        self.cash[indices] = terms.market.initial_cash
        self.inventory[indices] = 0
        self.fees[indices] = 0.0
        self.refused[indices] = 0
        self.ignored[indices] = 0
        self.n_fills[indices] = 0
        if self.terms.impact:
            self.deficits[indices] = 0
        self.mid[indices] = np.nan
        self._mark(indices)
        self.values[indices] = self._values()[indices]
        return self._infos(indices)

    def _use(self, indices: NDArray[np.int64], days: NDArray[np.int64]) -> None:
        """Have the tape hold the days the windows use once ``indices`` start in ``days``
        (a stored set of days loads and drops days; see ``ReplayDays.use``), and move the
        other windows' indices with their days' messages."""
        going = self._started.copy()
        going[indices] = False
        self._started[indices] = True
        # the tape's arrays let go first, so that the days dropped are freed (and their memory
        # given back) inside ``use``; it is rebuilt whatever happens there
        self._tape = ()
        try:
            moved = self.terms.days.use(np.concatenate((days, self.day[going])))
        finally:
            self._tape = self._make_tape()
        if moved is None:
            return
        shift = moved[self.day] * going  # (W,): 0 for the windows starting now
        self.cursor += shift
        joined = self.orders[:, :, :, 3]
        joined += np.where(self.orders[:, :, :, 0] >= 0, shift[:, None, None], 0)

    def _chosen(self, option: dict[str, Any], rng: Any) -> tuple[int, int]:
        """The day and start of ``options={"day": d, "start": t}``: the start drawn by the
        sampler in day d without ``start``; day 0, the only one, without ``day``."""
        terms = self.terms
        n_days = len(terms.days)
        if "day" in option:
            day = option["day"]
            if isinstance(day, bool) or not isinstance(day, int | np.integer):
                raise ValueError(f"options['day'] must be an int, got {day!r}")
            if not 0 <= day < n_days:
                raise ValueError(
                    f"options['day'] must be a day in [0, {n_days - 1}] (the env has "
                    f"{n_days} days), got {day}"
                )
        elif n_days > 1:
            raise ValueError(
                f"options['start'] is a step of one day: with {n_days} days, say which, "
                "options={'day': d, 'start': t}"
            )
        else:
            day = 0
        last = int(terms.last_starts[day])
        if "start" not in option:
            return day, int(terms.sampler.sample(rng, 0, last, terms.episode_steps, 1)[0])
        start = option["start"]
        if isinstance(start, bool) or not isinstance(start, int | np.integer):
            raise ValueError(f"options['start'] must be an int step, got {start!r}")
        if not 0 <= start <= last:
            which = "the day" if n_days == 1 else f"day {day}"
            raise ValueError(
                f"options['start'] must be a step in [0, {last}] ({which} has "
                f"{last + terms.episode_steps} steps of {terms.step_seconds} s and an "
                f"episode {terms.episode_steps}), got {start}"
            )
        return int(day), int(start)

    def now(self) -> NDArray[np.float64]:
        """Each window's exchange time (seconds, as the messages' time)."""
        terms = self.terms
        first = terms.days.first_times[self.day]
        return first + (self.start + self.steps) * terms.step_seconds  # type: ignore[no-any-return]

    def step(
        self, actions: NDArray[np.int64], names: list[str], *, strict: bool
    ) -> tuple[Any, ...]:
        """Advance every window by one step on the agents' ``(num_envs, n_agents, 3)``
        actions; return rewards ``(num_envs, n_agents)``, terminated, truncated, infos. An
        entry the masks forbid is a ValueError naming it when ``strict``, else it is replaced
        by keep (no market order) and counted in ``infos["ignored"]``."""
        market = self.terms.market
        decoded = [
            market.decide(self.view(a), self._halted(a), actions[:, a])
            for a in range(self.n_agents)
        ]
        self.ignored[:] = 0
        for a, (_, refused) in enumerate(decoded):
            if strict and (refused[:, 0] > 0).any():
                raise ValueError(_refusal(names[a], actions[:, a], refused, self._halted(a)))
            self.ignored += refused[:, 0]
        bids, asks, sides = (np.stack([d[0][i] for d in decoded], 1) for i in range(3))
        sides[sides < 0] = NO_MARKET
        return self.advance(bids, asks, sides, np.full_like(sides, market.order_size))

    def advance(
        self,
        bids: NDArray[np.int64],
        asks: NDArray[np.int64],
        sides: NDArray[np.int64],
        lots: NDArray[np.int64],
    ) -> tuple[Any, ...]:
        """``step`` on decoded instructions, each ``(num_envs, n_agents)``: a quote's tick,
        KEEP_ORDER or CANCEL_ORDER per side, and a market order's side (BUY, SELL or
        NO_MARKET) and ``lots``."""
        terms = self.terms
        now = self.now()
        # the cursor is the first message after now: every search starts out from it
        entry = terms.days.after(self.day, now[:, None] + terms.entry_latency, self.cursor)
        stop = terms.days.after(self.day, now + terms.step_seconds, self.cursor)
        self._step_windows(stop, (entry, bids, asks, sides, lots))
        self._moved()
        self.steps += 1
        everyone = np.arange(self.num_envs)
        self._mark(everyone)
        values = self._values()
        rewards = values - self.values
        self.values = values
        truncated = self.steps >= terms.episode_steps
        return rewards, np.zeros(self.num_envs, bool), truncated, self._infos(everyone)

    def _step_windows(self, stop: NDArray[np.int64], instructions: tuple[Any, ...]) -> None:
        """The compiled step of every window up to message ``stop`` (``step_windows``)."""
        step = step_impact_windows if self.terms.impact else step_windows
        step(self._tape, stop, instructions, self._terms, self.state)

    # -- views -------------------------------------------------------------------------------
    def _seen(self, a: int) -> NDArray[np.int64]:
        """The message index of the book agent a sees now: as of its data latency ago."""
        seen = self._seen_rows.get(a)
        if seen is None:
            moment = self.now() - self.terms.data_latency[a]
            seen = np.minimum(self.terms.days.after(self.day, moment, self.cursor), self.cursor)
            self._seen_rows[a] = seen
        return seen

    def view(self, a: int) -> TraderView:
        """Agent a's view in every window: the book it sees, its account and orders now."""
        view = self._views.get(a)
        if view is None:
            view = self._views[a] = self._make_view(a)
        return view

    def _make_view(self, a: int) -> TraderView:
        levels = self.terms.market.book_levels
        top = self._seen_levels(a, levels)
        orders = self.orders[:, a]
        return TraderView.of(
            top[:, BUY, :levels, 0],
            top[:, BUY, :levels, 1],
            top[:, SELL, :levels, 0],
            top[:, SELL, :levels, 1],
            self.inventory[:, a],
            self.cash[:, a],
            orders[:, BUY, :2],
            orders[:, SELL, :2],
        )

    def _seen_levels(self, a: int, levels: int) -> NDArray[np.int64]:
        """``_top`` of the book agent a sees in every window; each window's levels of a
        replayed day searched for out from where the agent's last view read them."""
        top = self.terms.days.top
        if self.terms.impact or not isinstance(top, TopLevels):
            return self._top(self._seen(a), levels=levels)
        hints = self._level_hints.get(a)
        if hints is None:
            hints = self._level_hints[a] = np.full((self.num_envs, 2, levels, 2), -1)
        return top.near(self._seen(a), levels, hints)

    def _top(
        self,
        rows: NDArray[np.int64],
        windows: NDArray[np.int64] | None = None,
        *,
        levels: int | None = None,
    ) -> NDArray[np.int64]:
        """The top ``levels`` levels (by default all the days record) the book of window
        ``windows[j]`` (by default every window, in order) holds before message ``rows[j]``:
        the replayed ones, less what the window's trades took with impact."""
        days = self.terms.days
        levels = days.top.shape[2] if levels is None else levels
        if self.terms.impact:
            windows = np.arange(self.num_envs) if windows is None else windows
            return impacted_tops(self._tape, self.deficits, windows, rows, levels)  # type: ignore[no-any-return]
        return days.top[rows, :, :levels]

    def masks(self, a: int) -> tuple[NDArray[np.int8], ...]:
        """Agent a's (num_envs, 6), (num_envs, 6), (num_envs, 3) action masks: those of
        LimitOrderBookMarket on the book it sees, and only keep or cancel while halted."""
        return self.terms.market.masks(self.view(a), self._halted(a))

    def _halted(self, a: int) -> NDArray[np.bool_]:
        """Whether the book agent a sees is halted, per window."""
        return self.terms.days.halted[self._seen(a)]  # type: ignore[no-any-return]

    def observe(self) -> NDArray[np.float32]:
        """(num_envs, n_agents, size): per agent ``MarketConfig.observation`` of its view,
        then its bid's lots ahead and ticks behind the best bid it sees (0 and -1 with no bid),
        the same for its ask, then the last trades it sees, oldest first, as price and size
        (+ bought by the taker, - sold; 0 and 0 before the first)."""
        terms = self.terms
        days = terms.days
        out = np.empty((self.num_envs, self.n_agents, terms.observation_size), np.float32)
        time_left = (terms.episode_steps - self.steps) * terms.step_seconds
        trades = (days.ticks, days.trades, days.trade_signs, days.trade_sizes)
        floors = days.trade_floors[self.day]
        price = terms.market.observed_price
        run = (
            _replay_view.observe_parallel
            if self.num_envs >= PARALLEL_FROM
            else _replay_view.observe
        )
        for a in range(self.n_agents):
            view, orders, seen = self.view(a), self.orders[:, a], self._seen(a)
            run(view, price, time_left, orders, trades, seen, floors, out[:, a])
        return out

    # -- accounts ----------------------------------------------------------------------------
    def _mark(self, indices: NDArray[np.int64]) -> None:
        """The mid of each window's book now (kept where a side is empty)."""
        days = self.terms.days
        if self.terms.impact:
            best = impacted_tops(self._tape, self.deficits, indices, self.cursor[indices], 1)
            best = np.ascontiguousarray(best[:, :, 0, 0])  # the layout of ``days.best``'s rows
        else:
            best = days.best[self.cursor[indices]]
        _replay_view.mark(best, self._price, indices, self.mid, self.day, days.firsts, days.ticks)

    def _values(self) -> NDArray[np.float64]:
        return self.cash + self.inventory * self.mid[:, None]  # type: ignore[no-any-return]

    def _infos(self, indices: NDArray[np.int64]) -> dict[str, Any]:
        return {
            "day": self.day[indices].copy(),
            "timestamp": self.now()[indices],
            "message": self.cursor[indices] - self.terms.days.firsts[self.day[indices]],
            "mid_price": self.mid[indices].copy(),
            "fills": self.n_fills[indices].copy(),
            "refused": self.refused[indices].copy(),
            "ignored": self.ignored[indices].copy(),
        }

    def fill_log(self, w: int) -> NDArray[np.int64]:
        """Window w's fills of the last step: rows (agent, side, tick, lots, maker)."""
        return self.fills[w, : self.n_fills[w]].copy()
