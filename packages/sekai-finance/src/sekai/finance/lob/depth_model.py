"""The depth replay market: ``replay_model``'s market over a day of depth-only data
(``depth``), its agents' queue positions estimated by a queue model (``queue_models``), its
windows stepped by ``_depth_windows`` (one compiled call a step). What ``DepthReplay-v0`` and
its native vector env drive; everything but the tape and the queues is the replay market's."""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob._depth_day import DepthDays
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.depth import (
    DEPTH_DTYPE,
    TRADE_DTYPE,
    levels_to_depth,
    lobster_depth,
    read_l2_csv,
    read_trades_csv,
)
from sekai.finance.lob.lobster import orderbook_dtype
from sekai.finance.lob.queue_models import QueueModel
from sekai.finance.lob.queue_models import queue_model as resolve_queue_model
from sekai.finance.lob.replay_model import ReplayModel, ReplayTerms, market_terms, synthetic_day


@dataclasses.dataclass(frozen=True)
class DepthTerms(ReplayTerms):
    """A replay market's terms over depth-only data, with its queue model."""

    queue_model: QueueModel


def build_depth_terms(
    n_agents: int,
    *,
    depth: Any,
    trades: Any,
    queue_model: Any,
    symbol: str | None,
    tick: int,
    price_offset: int,
    n_ticks: int | None,
    **market: Any,
) -> DepthTerms:
    """Check the parameters and read the day (``load_depth``); ``market``: the keyword
    arguments of ``replay_model.market_terms`` after ``load``."""
    model = resolve_queue_model(queue_model)

    def load(levels: int) -> DepthDays:
        updates, traded = load_depth(depth, trades, symbol)
        return DepthDays(
            updates, traded, tick=tick, price_offset=price_offset, n_ticks=n_ticks, levels=levels
        )

    terms = market_terms(
        n_agents,
        load,
        tick=tick,
        price_offset=price_offset,
        terms_type=DepthTerms,
        queue_model=model,
        **market,
    )
    assert isinstance(terms, DepthTerms)
    return terms


def load_depth(
    depth: Any, trades: Any, symbol: str | None = None
) -> tuple[NDArray[Any], NDArray[Any]]:
    """A day's level updates and trades from what the env takes: arrays of ``DEPTH_DTYPE``
    and ``TRADE_DTYPE``; an L2 CSV and a trades CSV (``depth.read_l2_csv``,
    ``read_trades_csv``); a LOBSTER orderbook file with its message file as ``trades``
    (``lobster_depth``); a Databento MBP-10 (or MBP-1) file, its own trades read from it
    when ``trades`` is None (``symbol`` chooses the instrument); nothing: the synthetic day's
    LOBSTER replay as depth (``synthetic_depth``)."""
    if depth is None:
        if trades is not None:
            raise ValueError("trades needs the depth it belongs to: pass depth= too")
        return synthetic_depth()
    if isinstance(depth, str | os.PathLike):
        name = os.fspath(depth).lower()
        if name.endswith((".dbn", ".dbn.zst")):
            from sekai.finance.lob.databento import read_dbn_levels, read_dbn_trades

            levels = read_dbn_levels(depth, symbol=symbol)
            updates = levels_to_depth(levels.time, levels.rows)
            if trades is None:
                return updates, read_dbn_trades(depth, symbol=symbol)
        elif "_orderbook_" in name:
            if trades is None:
                raise ValueError(f"{os.fspath(depth)}: a LOBSTER orderbook file needs its "
                                 "message file as trades=")  # fmt: skip
            return lobster_depth(trades, depth)
        else:
            updates = read_l2_csv(depth)
    else:
        updates = _checked(depth, DEPTH_DTYPE, "depth")
    if trades is None:
        raise ValueError("trades= is needed with this depth: a trades CSV or TRADE_DTYPE array")
    traded = read_trades_csv(trades) if isinstance(trades, str | os.PathLike) else trades
    return updates, _checked(traded, TRADE_DTYPE, "trades")


def _checked(rows: Any, dtype: np.dtype[Any], name: str) -> NDArray[Any]:
    if not isinstance(rows, np.ndarray) or rows.dtype != dtype:
        raise TypeError(
            f"{name} must be a file's path or an array of sekai.finance.lob.depth."
            f"{name.upper().rstrip('S')}_DTYPE, got {type(rows).__name__}"
        )
    if len(rows) > 1 and (np.diff(rows["time"]) < 0).any():
        row = int(np.argmax(np.diff(rows["time"]) < 0)) + 1
        raise ValueError(f"{name}: time goes backwards at row {row}")
    return rows


@functools.cache
def synthetic_depth() -> tuple[NDArray[Any], NDArray[Any]]:
    """The default day: ``replay_model.synthetic_day()`` (an hour of LOBSTER messages)
    replayed, its top 10 levels after each message as level updates and its executions as
    trades."""
    from sekai.finance.lob._replay_day import ReplayDay

    messages = synthetic_day()
    top = ReplayDay(messages, levels=10).top[1:]
    rows = np.zeros(len(top), orderbook_dtype(10))
    for side, name in ((BUY, "bid"), (SELL, "ask")):
        ticks, sizes = top[:, side, :, 0], top[:, side, :, 1]
        rows[f"{name}_price"] = np.where(sizes > 0, ticks * 100, 0)
        rows[f"{name}_size"] = sizes
    updates, trades = lobster_depth(messages, rows)
    for array in (updates, trades):
        array.flags.writeable = False
    return updates, trades


class DepthModel(ReplayModel):
    """``ReplayModel`` over a depth tape: the same windows, accounts and views; each agent
    order also has its queue estimate (``queue``: (W, A, 2, 2), front and lots traded at its
    price since the level last changed), stepped by ``_depth_windows``."""

    terms: DepthTerms

    def __init__(self, terms: DepthTerms, num_envs: int) -> None:
        super().__init__(terms, num_envs)
        self.queue = np.zeros((num_envs, self.n_agents, 2, 2))
        self._model = (terms.queue_model.code, terms.queue_model.exponent)

    def reset(
        self, indices: NDArray[np.int64], options: list[dict[str, Any] | None], rng: Any
    ) -> dict[str, Any]:
        self.queue[indices] = 0.0
        return super().reset(indices, options, rng)

    def _step_windows(self, stop: NDArray[np.int64], instructions: tuple[Any, ...]) -> None:
        from sekai.finance.lob._depth_windows import step_depth_windows

        step_depth_windows(
            self._tape, stop, instructions, self._terms, self.state, self.queue, self._model
        )
