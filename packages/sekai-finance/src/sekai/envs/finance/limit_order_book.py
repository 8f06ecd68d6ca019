"""LimitOrderBookMarket: several traders on their own clocks in one limit order book.

It is the one-book case of ``LimitOrderBookVecEnv``: the same arrays and compiled kernels
(``sekai.finance.lob.level_books``) carry out the traders' instructions, the background flow (the
Cont-Stoikov-Talreja model or a given ``FlowEvents`` stream) and the accounts. This class takes
and gives one book's values instead of arrays with a leading book axis, and adds the text render.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from sekai.envs.finance.limit_order_book_vec import LimitOrderBookVecEnv
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.flow import ContStoikovTalreja, FlowEvents
from sekai.multi_agent import MAResetResult, MAStepResult, MultiAgentEnv


class LimitOrderBookMarket(MultiAgentEnv[np.ndarray, np.ndarray, str]):
    """``n_traders`` traders ``trader_0 ..`` in one order book; trader i decides every
    ``decision_intervals[i]`` seconds of a ``session_length``-second session.

    Each decision is ``MultiDiscrete([6, 6, 3])``: a bid instruction and an ask instruction
    (0 keep, 1 cancel, 2 improve the best quote by a tick, 3 join it, 4 one tick behind it,
    5 two ticks behind it; a new order replaces the trader's resting one) and a market order
    (0 none, 1 buy, 2 sell), each for ``order_size`` lots, cut to what keeps the trader's
    inventory within ``max_inventory`` lots long or short (a hard cap: no fill passes it). See
    docs/limit-order-book.md. ``book`` reads the book (levels, queues, the tape of trades).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "render_fps": 30,
    }

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
        self._set_render_mode(render_mode)
        self._market = LimitOrderBookVecEnv(
            1,
            n_traders,
            render_mode="rgb_array" if render_mode in ("human", "rgb_array") else None,
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
        self.config = self._market.config
        self.possible_agents = list(self._market.possible_agents)
        self.agents = []
        self.observation_spaces = {a: s for a, s in self._market.observation_spaces.items()}
        self.action_spaces = {a: s for a, s in self._market.action_spaces.items()}
        self.book = self._market.books.book(0)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> MAResetResult:
        self._set_rng(seed)
        self._market.rng = self.rng  # one stream: the market draws the flow from the env's
        result = self._market.reset()
        self.agents = list(self.possible_agents)
        self._show_frame()
        return MAResetResult(_first_book(result.observations), result.info)

    def step(self, actions: dict[str, Any]) -> MAStepResult:
        batch = actions
        if isinstance(actions, dict):
            batch = {agent: self._one_book(agent, action) for agent, action in actions.items()}
        result = self._market.step(batch)
        self.agents = list(self._market.agents)
        self._show_frame()
        rewards = {agent: float(np.asarray(r)[0]) for agent, r in result.rewards.items()}
        observations = _first_book(result.observations)
        return MAStepResult(observations, rewards, result.terminated, result.truncated, result.info)

    def action_mask(self, agent: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Which values of each entry of ``agent``'s action are possible now (1) or not (0)."""
        if agent not in self.action_spaces:
            raise KeyError(f"no agent {agent!r}; agents: {self.possible_agents}")
        bid, ask, market = self._market.action_mask(agent)
        return bid[0], ask[0], market[0]

    def _one_book(self, agent: str, action: Any) -> Any:
        """``action`` as the market's batch of one book, once it is in ``agent``'s space."""
        space = self.action_spaces.get(agent)
        if space is None:
            return action  # the market names the agents it expects
        if not space.contains(action):
            raise ValueError(f"{agent}: action {action!r} is not in {space}")
        return np.asarray(action, np.int64)[None]

    # -- the accounts -------------------------------------------------------------------------
    @property
    def cash(self) -> np.ndarray:
        """Each trader's cash."""
        return self._market.books.cash[0]

    @property
    def inventory(self) -> np.ndarray:
        """Each trader's lots (negative: short)."""
        return self._market.books.inventory[0]

    @property
    def public_cash(self) -> float:
        """The background flow's cash: what the traders gain, it loses."""
        return float(self._market.books.public_cash[0])

    @property
    def public_inventory(self) -> int:
        return int(self._market.books.public_inventory[0])

    @property
    def flow_events(self) -> int:
        """Background events applied this session."""
        return self._market.flow_events

    @property
    def mid_price(self) -> float:
        """The last mid price (the last one seen while one side of the book was empty)."""
        return float(self._market.books.mid[0])

    @property
    def values(self) -> np.ndarray:
        """Each trader's cash plus inventory marked at the mid price."""
        return self._market.books.values()[0]

    # -- rendering --------------------------------------------------------------------------
    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the book's levels and the last fills as text; ``"rgb_array"``: a
        (520, 600, 3) uint8 image of the book (volume by price, bids green, asks red) above the
        session so far (the mid price, each trader's marked value and inventory), None before
        the first reset; ``"human"``: that image in a window, and None; else None."""
        if self.render_mode in ("human", "rgb_array"):
            return self._render_frame()
        if self.render_mode != "ansi":
            return None
        price = self.config.price
        lines = [f"t={self._market._now():.2f}s"]
        for tick, volume in reversed(self.book.depth(SELL, self.config.book_levels)):
            lines.append(f"  ask {price(tick):10.2f} x {volume}")
        for tick, volume in self.book.depth(BUY, self.config.book_levels):
            lines.append(f"  bid {price(tick):10.2f} x {volume}")
        names = ["public", *self.possible_agents]
        for fill in self.book.fills[-5:]:
            side = "buy" if fill.taker_side == BUY else "sell"
            lines.append(
                f"  trade 1 @ {price(fill.price):.2f} "
                f"({names[fill.taker_owner]} {side}s from {names[fill.maker_owner]})"
            )
        return "\n".join(lines)

    def _frame(self) -> np.ndarray | None:
        frames = self._market.render()
        return None if frames is None else frames[0]


def _first_book(observations: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {agent: obs[0] for agent, obs in observations.items()}
