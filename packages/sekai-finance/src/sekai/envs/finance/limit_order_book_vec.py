"""LimitOrderBookVecEnv: the limit order book market over many books in array form.

The books run in lock-step on the shared decision schedule, so one step takes the due traders'
actions as ``(num_envs, 3)`` arrays and returns ``(num_envs, ...)`` observations and
``(num_envs,)`` rewards per agent; flags are plain bools (every book ends together). The due
traders' instructions and the background flow up to the next decision time run in compiled
loops over books and events (see ``sekai.finance.lob.level_books``), one call each per step.
LimitOrderBookMarket is its one-book case.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from sekai.checks import check_positive_int
from sekai.core import RenderMixin, RngMixin
from sekai.envs.finance._pictures import EpisodeTrace, Picture, draw_market
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.flow import FlowEvents
from sekai.finance.lob.level_books import LevelBooks
from sekai.finance.lob.market import (
    DEPTH_WINDOW,
    MarketConfig,
    action_space_for,
    observation_space_for,
)
from sekai.multi_agent import MAResetResult, MAStepResult

PICTURE = Picture(price="mid_price", equity="values", holding="inventory", agents="trader")


class LimitOrderBookVecEnv(RngMixin, RenderMixin):
    """``num_envs`` independent books with the parameters of ``LimitOrderBookMarket``.

    With a given flow (``FlowEvents``) every book replays it and book i agrees exactly
    with a LimitOrderBookMarket given the same flow and book i's actions. With
    ``render_mode="rgb_array"``, ``render`` draws one frame per book, as the single env
    draws its own.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 30}

    def __init__(
        self,
        num_envs: int = 1,
        n_traders: int = 3,
        *,
        render_mode: str | None = None,
        **kwargs: Any,
    ) -> None:
        num_envs = check_positive_int(num_envs, "num_envs")
        self._set_render_mode(render_mode)
        self.config = MarketConfig.build(n_traders, **kwargs)
        self.num_envs = num_envs
        self.possible_agents = [f"trader_{i}" for i in range(self.config.n_traders)]
        self.agents: list[str] = []
        self.observation_spaces = {
            a: observation_space_for(self.config) for a in self.possible_agents
        }
        self.action_spaces = {a: action_space_for() for a in self.possible_agents}
        self.books = LevelBooks(self.config, self.num_envs)
        self._step_index = 0
        draws = render_mode == "rgb_array"
        self._frames = _BookFrames(PICTURE, self.num_envs) if draws else None

    def observation_space(self, agent: str) -> Any:
        """One book's observation space for ``agent`` (observations carry a leading axis)."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        """One book's action space for ``agent`` (actions carry a leading axis)."""
        return self.action_spaces[agent]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> MAResetResult:
        self._set_rng(seed)
        self.books.reset()
        self._step_index = 0
        self._flow_index = 0
        self.flow_events = 0  # background events applied this session, summed over books
        self._values = self.books.values()
        self.agents = list(self.possible_agents)
        observations = {
            self.possible_agents[i]: self._observe(i, self.config.session_length)
            for i in self.config.due[0]
        }
        if self._frames is not None:
            self._frames.start(self.books, self.config)
        return MAResetResult(observations, {a: {"timestamp": 0.0} for a in observations})

    def step(self, actions: dict[str, Any]) -> MAStepResult:
        config = self.config
        if not self.agents:
            raise RuntimeError("the session is over: call reset() before step()")
        now = config.times[self._step_index]
        due = config.due[self._step_index]
        expected = {self.possible_agents[i] for i in due}
        if not isinstance(actions, dict) or set(actions) != expected:
            raise ValueError(
                f"step() takes actions for exactly the traders due now, {sorted(expected)}, "
                f"got {sorted(actions) if isinstance(actions, dict) else actions!r}"
            )
        plans = []
        for i in due:
            agent = self.possible_agents[i]
            batch = np.asarray(actions[agent])
            if batch.shape != (self.num_envs, 3) or batch.dtype.kind not in "iu":
                raise ValueError(
                    f"{agent}: actions must be integers of shape ({self.num_envs}, 3), "
                    f"got {batch.dtype} {batch.shape}"
                )
            if ((batch < 0) | (batch >= self.action_spaces[agent].nvec)).any():
                raise ValueError(f"{agent}: actions outside {self.action_spaces[agent]}")
            plans.append((i, config.decode(self._view(i), batch.astype(np.int64), agent)))
        for i, (bid, ask, market) in plans:
            self.books.execute(i, bid, ask, market, now)
        self._step_index += 1
        last = self._step_index == len(config.times)
        until = config.session_length if last else config.times[self._step_index]
        self._run_flow(now, until)
        values = self.books.values()
        change = values - self._values
        self._values = values
        rewards: dict[str, Any] = {a: change[:, i] for i, a in enumerate(self.possible_agents)}
        next_due = range(config.n_traders) if last else config.due[self._step_index]
        time_left = config.session_length - until
        observations = {self.possible_agents[i]: self._observe(i, time_left) for i in next_due}
        flags = dict.fromkeys(self.possible_agents, last)
        info = {a: {"timestamp": float(until)} for a in self.possible_agents}
        if last:
            self.agents = []
        if self._frames is not None:
            self._frames.record(self.books, self.config)
        return MAStepResult(observations, rewards, flags, dict.fromkeys(flags, False), info)

    def action_mask(self, agent: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per book masks: arrays of shapes (num_envs, 6), (num_envs, 6), (num_envs, 3)."""
        i = self.possible_agents.index(agent)
        return self.config.masks(self._view(i))  # type: ignore[return-value]

    def trades(self, book: int) -> np.ndarray:
        """Book ``book``'s tape since the session began, oldest first, as a new structured
        array: one record per trade (a taker's order with one resting order, as
        ``OrderBook.trades`` lists them) with fields ``time`` (session seconds), ``price``
        (tick), ``size`` (lots), ``taker_side``, ``taker_owner`` and ``maker_owner`` (PUBLIC 0,
        trader i as i + 1). ``reset()`` clears it."""
        if isinstance(book, bool) or not isinstance(book, int | np.integer):
            raise TypeError(f"book must be an int, got {book!r}")
        if not 0 <= book < self.num_envs:
            raise ValueError(f"book must be in [0, {self.num_envs}), got {book}")
        return self.books.trades(int(book))

    def render(self) -> list[np.ndarray | None] | None:
        """With ``render_mode="rgb_array"``, one (520, 600, 3) uint8 frame per book, as
        ``LimitOrderBookMarket.render`` draws it (None before the first reset); else None."""
        if self._frames is None:
            return None
        return self._frames.draw(self.books, self.config)

    def close(self) -> None:
        """Nothing to release."""

    # -- internals --------------------------------------------------------------------------
    def _now(self) -> float:
        """Session time of the next decision (the session's length once it is over)."""
        times, step = self.config.times, self._step_index
        return times[step] if step < len(times) else self.config.session_length

    def _view(self, trader: int) -> Any:
        return self.books.view(trader, DEPTH_WINDOW)

    def _observe(self, trader: int, time_left: float) -> np.ndarray:
        return self.config.observation(self._view(trader), time_left)

    def _run_flow(self, start: float, until: float) -> None:
        flow = self.config.flow
        if isinstance(flow, FlowEvents):
            stop = int(np.searchsorted(flow.time, until, side="left"))
            if stop > self._flow_index:
                self.books.replay(flow, self._flow_index, stop)
                self.flow_events += self.num_envs * (stop - self._flow_index)
                self._flow_index = stop
            return
        self.flow_events += self.books.run_flow(flow, self.rng, start, until)


class _BookFrames:
    """Each book's picture so far: a trace of what LimitOrderBookMarket's frame shows."""

    def __init__(self, picture: Picture, num_books: int) -> None:
        self.traces = [EpisodeTrace(picture) for _ in range(num_books)]
        self.mid = np.zeros(num_books)

    def start(self, books: LevelBooks, config: MarketConfig) -> None:
        """Begin every book's picture after a reset."""
        self.mid = np.full(len(self.traces), config.initial_price)
        state = self._read(books, config)
        for i, trace in enumerate(self.traces):
            trace.start(_book_row(state, i))

    def record(self, books: LevelBooks, config: MarketConfig) -> None:
        """Add every book's state after a step."""
        state = self._read(books, config)
        for i, trace in enumerate(self.traces):
            trace.record(_book_row(state, i))

    def _read(self, books: LevelBooks, config: MarketConfig) -> dict[str, Any]:
        state = _read_books(books, config, self.mid)
        self.mid = state["mid_price"]
        return state

    def draw(self, books: LevelBooks, config: MarketConfig) -> list[np.ndarray | None]:
        """One frame per book: its levels now above its session so far."""
        volume = _read_books(books, config, self.mid)["volume"]
        levels = config.book_levels * 4
        frames = []
        for i, trace in enumerate(self.traces):
            bid_ticks = np.flatnonzero(volume[i, BUY])[::-1][:levels]  # from the best down
            ask_ticks = np.flatnonzero(volume[i, SELL])[:levels]  # from the best up
            bids = [(config.price(t), int(volume[i, BUY, t])) for t in bid_ticks]
            asks = [(config.price(t), int(volume[i, SELL, t])) for t in ask_ticks]
            frames.append(draw_market(trace, bids, asks, config.tick_size))
        return frames


def _book_row(state: dict[str, Any], i: int) -> Callable[[str], Any]:
    """Book ``i``'s values of ``state``, by name."""
    return lambda name: state[name][i]


def _read_books(books: LevelBooks, config: MarketConfig, last_mid: np.ndarray) -> dict[str, Any]:
    """What the frames show of the books, read only through what LevelBooks exposes (``best``,
    ``volume``, ``inventory``, ``cash``), so that drawing survives changes to its internals:
    the mid price of each book (``last_mid`` where a side is empty, as the single env keeps
    it), each trader's inventory and value marked at the mid, and the lots by (book, side,
    tick)."""
    bid, ask = books.best[:, BUY], books.best[:, SELL]
    both = (bid >= 0) & (ask < books.volume.shape[2])
    mid = np.where(both, config.price((bid + ask) / 2), last_mid)
    inventory = np.array(books.inventory)
    return {
        "mid_price": mid,
        "values": books.cash + inventory * mid[:, None],
        "inventory": inventory,
        "volume": books.volume,
    }
