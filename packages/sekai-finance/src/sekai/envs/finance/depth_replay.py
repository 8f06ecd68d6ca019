"""DepthReplay-v0: trade inside a replayed day of depth-only data (level sizes and trades, no
order ids), the agent's queue position estimated by a queue model as hftbacktest does.

A thin driver over the depth replay market (``sekai.finance.lob.depth_model``), one window and
one agent, as LobsterReplay-v0 over its replay market; its native vector env steps many windows
in the same compiled call. See docs/limit-order-book.md, "Depth-only data".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.envs.finance.lobster_replay import LobsterReplayEnv, OneAgent
from sekai.finance.lob.depth_model import DepthModel, DepthTerms, build_depth_terms
from sekai.finance.lob.market import action_space_for
from sekai.spaces import Box


class DepthReplayEnv(LobsterReplayEnv):
    """One agent quoting and trading inside a replayed day of depth-only data.

    Data (``sekai.finance.lob.depth``): ``depth``, the level updates (an array of
    ``DEPTH_DTYPE``, an L2 incremental CSV's path, a Databento MBP-10 file, or a LOBSTER
    orderbook file with its message file as ``trades``), and ``trades`` (an array of
    ``TRADE_DTYPE`` or a trades CSV's path; read from the file itself for Databento). Without
    data, the synthetic day LobsterReplay-v0 replays, as its top 10 levels and its executions.
    ``queue_model``: a ``sekai.finance.lob.queue_models`` model or its name (``"risk_averse"``,
    ``"power"``, ``"power2"``, ``"power3"``, ``"log"``, ``"log2"``).

    An agent order joins behind the level's size; trades at its price and changes of the level
    move it up as the queue model estimates, and it fills as hftbacktest's partial-fill exchange
    fills (``sekai.finance.lob._depth_windows``). Everything else (windows, actions, masks,
    latencies, fees, observation, reward, ``info``) is LobsterReplay-v0's; the observation's
    lots ahead are the model's estimate, rounded. One day only.
    """

    def __init__(
        self,
        depth: Any = None,
        trades: Any = None,
        *,
        queue_model: Any = "risk_averse",
        symbol: str | None = None,
        tick: int = 100,
        price_offset: int = 0,
        n_ticks: int | None = None,
        step_seconds: float = 1.0,
        episode_steps: int = 300,
        order_size: int = 1,
        max_inventory: int = 10,
        initial_cash: float = 10_000.0,
        book_levels: int = 5,
        last_trades: int = 5,
        maker_fee: float = 0.0,
        taker_fee: float = 0.0,
        entry_latency: float = 0.0,
        data_latency: float = 0.0,
        sampler: Any = None,
        render_mode: str | None = None,
    ) -> None:
        self._terms: DepthTerms = build_depth_terms(
            1,
            depth=depth,
            trades=trades,
            queue_model=queue_model,
            symbol=symbol,
            tick=tick,
            price_offset=price_offset,
            n_ticks=n_ticks,
            step_seconds=step_seconds,
            episode_steps=episode_steps,
            order_size=order_size,
            max_inventory=max_inventory,
            initial_cash=initial_cash,
            book_levels=book_levels,
            last_trades=last_trades,
            maker_fee=maker_fee,
            taker_fee=taker_fee,
            entry_latency=entry_latency,
            data_latency=data_latency,
            sampler=sampler,
        )
        self.action_space = action_space_for()
        size = self._terms.observation_size
        self.observation_space = Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)
        super(LobsterReplayEnv, self).__init__(render_mode)

    def _make_model(self, num_envs: int) -> OneAgent:
        return OneAgent(DepthModel(self._terms, num_envs))
