"""ReplayExecution-v0: sell a block of lots inside replayed days, against the real book.

A thin driver over the execution market on the replay (``sekai.finance.lob.replay_execution``),
one window; its native vector env steps many windows in the same compiled call. See
docs/limit-order-book.md, "Selling a block on a real day".
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from sekai.envs.finance._parameters import ReadOnly
from sekai.envs.finance._pictures import Picture
from sekai.envs.finance._single import FinanceEnv
from sekai.finance.arguments import check_int
from sekai.finance.lob.replay_execution import ReplayExecution, observation_size
from sekai.finance.lob.replay_model import ReplayTerms, build_terms
from sekai.spaces import Box


class ReplayExecutionEnv(FinanceEnv):
    """Liquidate ``block`` lots within one window of a replayed day with market orders.

    Data (``messages``, ``symbol``, ``days``, ``tick``, ``price_offset``, ``n_ticks``),
    windows (``step_seconds``, ``episode_steps``, ``sampler``, ``reset`` options), latencies
    and ``taker_fee`` are LobsterReplay-v0's. ``impact`` (True by default): the agent's market
    orders take the real lots they meet out of the window's book, later messages adapted; with
    False they take the replayed levels' lots without changing them (the backtest assumption).

    Action: float32 ``[fraction]`` in [0, 1], the fraction of the lots still held to sell at
    market now, rounded to whole lots; the last step sells all that is left, walking at most
    ``book_levels`` levels (what they cannot take is valued at the deepest bid left).
    Observation: float32, ``4 + 2 * book_levels``: lots held over ``block``, steps left over
    ``episode_steps``, the seen mid less the arrival mid and the spread (ticks), the lots at
    each bid level over ``block``, the deeper bid levels' distance below the best (ticks), the
    lots at the best ask over ``block``. Reward (dollars): each step's proceeds less the lots
    sold at the arrival mid; an episode's total is minus its implementation shortfall. The
    episode ends when the block is sold or at its last step (``terminated``). Info: ``day``,
    ``timestamp``, ``mid_price``, ``arrival_mid``, ``sold`` (this step), ``remaining``,
    ``shortfall`` (so far), ``unsold`` (at the end), ``refused`` (orders sent while halted).
    """

    picture = Picture(price="mid_price", equity="proceeds", holding="remaining")
    parameters: ClassVar[tuple[str, ...]] = ("metadata", "terms", "block")
    state_attributes: ClassVar[tuple[str, ...]] = (
        "mid_price",
        "remaining",
        "proceeds",
        "timestamp",
    )
    terms = ReadOnly("the replayed day and the market's terms fix every window's arrays")
    block = ReadOnly("it scales the observation")

    def __init__(
        self,
        messages: Any = None,
        *,
        symbol: str | None = None,
        days: Any = None,
        tick: int = 100,
        price_offset: int = 0,
        n_ticks: int | None = None,
        block: int = 10,
        step_seconds: float = 30.0,
        episode_steps: int = 10,
        book_levels: int = 10,
        taker_fee: float = 0.0,
        entry_latency: float = 0.0,
        data_latency: float = 0.0,
        sampler: Any = None,
        impact: bool = True,
        render_mode: str | None = None,
    ) -> None:
        self._block = check_int("block", block, 1)
        self._terms: ReplayTerms = build_terms(
            1,
            messages=messages,
            orderbook=None,
            symbol=symbol,
            days=days,
            tick=tick,
            price_offset=price_offset,
            n_ticks=n_ticks,
            step_seconds=step_seconds,
            episode_steps=episode_steps,
            order_size=1,
            max_inventory=self._block,
            initial_cash=1.0,  # the market needs some; the env reports proceeds
            book_levels=book_levels,
            last_trades=0,
            maker_fee=0.0,
            taker_fee=taker_fee,
            entry_latency=entry_latency,
            data_latency=data_latency,
            sampler=sampler,
            impact=impact,
        )
        self.action_space = Box(0.0, 1.0, shape=(1,), dtype=np.float32)
        size = observation_size(self._terms.market.book_levels)
        self.observation_space = Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)
        super().__init__(render_mode)

    def _make_model(self, num_envs: int) -> ReplayExecution:
        return ReplayExecution(self._terms, num_envs, self._block)

    @property
    def model(self) -> ReplayExecution:
        """The execution market this env drives (one window)."""
        return self._model  # type: ignore[return-value]
