"""Background order flow after Cont, Stoikov and Talreja (2010), "A stochastic model for order
book dynamics", Operations Research 58(3).

Every order of the flow is one lot. Limit orders arrive ``i`` ticks from the opposite best quote
(``i = 1 .. D``) at the rate ``k / i**alpha`` per side; market orders arrive at the rate ``mu``
per side; each resting public order at distance ``i`` is cancelled at the rate ``theta[i]``, so a
level's cancellation rate is proportional to its queue. Rates are per unit of session time
(seconds).
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob.book import BUY, PUBLIC, SELL, OrderBook

LIMIT = 0
MARKET = 1
CANCEL = 2


@dataclasses.dataclass(frozen=True)
class ContStoikovTalreja:
    """The flow's rates. The defaults are the estimates Cont, Stoikov and Talreja report for a
    liquid Tokyo-listed stock: sizes in units of the average order, rates per second."""

    limit_rate_scale: float = 1.92  # k: limit orders per second one tick from the opposite quote
    limit_rate_decay: float = 0.52  # alpha: how fast the limit rate falls with distance
    market_rate: float = 0.94  # mu: market orders per second, per side
    cancel_rates: tuple[float, ...] = (0.71, 0.81, 0.68, 0.56, 0.47)  # theta_i, per order per s

    def __post_init__(self) -> None:
        object.__setattr__(self, "cancel_rates", tuple(float(r) for r in self.cancel_rates))
        for name in ("limit_rate_scale", "limit_rate_decay", "market_rate"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if not self.cancel_rates or any(
            not (math.isfinite(r) and r >= 0) for r in self.cancel_rates
        ):
            raise ValueError(
                f"cancel_rates must be one finite rate >= 0 per level, got {self.cancel_rates!r}"
            )

    @property
    def levels(self) -> int:
        """D: how many ticks from the opposite quote the flow places and cancels orders."""
        return len(self.cancel_rates)

    @property
    def limit_rates(self) -> NDArray[np.float64]:
        """lambda_i = k / i**alpha for i = 1 .. D."""
        distances = np.arange(1, self.levels + 1, dtype=np.float64)
        return self.limit_rate_scale / distances**self.limit_rate_decay

    @functools.cached_property
    def _fixed_rates(self) -> NDArray[np.float64]:
        """The state-free rates: buy limits, sell limits, buy market, sell market."""
        limit = self.limit_rates
        return np.r_[limit, limit, self.market_rate, self.market_rate]

    @functools.cached_property
    def _fixed_rates_list(self) -> list[float]:
        return [float(rate) for rate in self._fixed_rates]

    @property
    def initial_depth(self) -> NDArray[np.int64]:
        """Lots per level at the start, i ticks behind the best: the stationary mean
        lambda_i / theta_i of a level's queue, rounded, at least one."""
        theta = np.maximum(np.asarray(self.cancel_rates), 1e-12)
        return np.maximum(np.rint(self.limit_rates / theta), 1).astype(np.int64)


@dataclasses.dataclass(frozen=True)
class FlowEvents:
    """A given background flow: one row per event, in time order. ``kind`` is LIMIT, MARKET or
    CANCEL; ``side`` the side of the order (BUY/SELL; for a cancel, of the cancelled order);
    ``price`` the tick (unused for MARKET); ``rank`` which public order of the level a CANCEL
    removes (0 = the first in the queue). Events that do not apply to the book met on replay (a
    cancel of a level with fewer public orders, a price off the grid) are skipped.
    ``initial_depth`` is the book the flow starts from: public lots per tick, from the best
    outwards, on each side (see :func:`seed_book`)."""

    time: NDArray[np.float64]
    kind: NDArray[np.int64]
    side: NDArray[np.int64]
    price: NDArray[np.int64]
    rank: NDArray[np.int64]
    initial_depth: tuple[int, ...] = tuple(ContStoikovTalreja().initial_depth.tolist())

    def __post_init__(self) -> None:
        lengths = {len(getattr(self, name)) for name in ("time", "kind", "side", "price", "rank")}
        if len(lengths) != 1:
            raise ValueError(f"FlowEvents columns must have one length, got {sorted(lengths)}")
        for name in ("kind", "side", "price", "rank"):  # int64 arrays, as the replay loops read
            column = np.asarray(getattr(self, name))
            if column.size and column.dtype.kind not in "iu":
                raise TypeError(f"FlowEvents.{name} must hold integers, got {column.dtype}")
            object.__setattr__(self, name, column.astype(np.int64))
        object.__setattr__(self, "time", np.asarray(self.time, np.float64))
        if len(self.time) and (np.diff(self.time) < 0).any():
            raise ValueError("FlowEvents times must be in non-decreasing order")
        for name, allowed in (("kind", (LIMIT, MARKET, CANCEL)), ("side", (BUY, SELL))):
            bad = ~np.isin(getattr(self, name), allowed)
            if bad.any():
                value = getattr(self, name)[bad][0]
                raise ValueError(f"FlowEvents.{name} values must be in {allowed}, got {value}")
        if (self.rank < 0).any():
            raise ValueError(f"FlowEvents.rank must be >= 0, got {self.rank[self.rank < 0][0]}")

    def __len__(self) -> int:
        return len(self.time)


def sample_event(
    model: ContStoikovTalreja,
    rng: np.random.Generator,
    bid_ref: int,
    ask_ref: int,
    public_bids: list[int],
    public_asks: list[int],
) -> tuple[float, int, int, int, int]:
    """The next event of one book: ``(waiting time, kind, side, price, rank)``.

    ``bid_ref``/``ask_ref`` are the best quotes (the last ones seen, for an empty side);
    ``public_bids[i]`` the public lots at ``ask_ref - 1 - i``, ``public_asks[i]`` at
    ``bid_ref + 1 + i``. Draws three uniforms. LimitOrderBookVecEnv's compiled flow makes the
    same draws and floating-point operations, so it samples the same events.
    """
    u0, u1, u2 = rng.random((1, 3))[0].tolist()
    cumulative = []
    total = 0.0
    for rate in model._fixed_rates_list:
        total += rate
        cumulative.append(total)
    for queues in (public_bids, public_asks):
        for lots, theta in zip(queues, model.cancel_rates, strict=True):
            total += lots * theta
            cumulative.append(total)
    wait = -math.log1p(-u0) / total if total > 0 else math.inf
    levels = model.levels
    choice = min(bisect.bisect_right(cumulative, u1 * total), 4 * levels + 1)
    kinds, sides, distances = _event_lists(levels)
    kind, side, distance = kinds[choice], sides[choice], distances[choice]
    if kind == MARKET:
        return wait, kind, side, -1, 0
    price = (ask_ref if side == BUY else bid_ref) + distance
    if kind != CANCEL:
        return wait, kind, side, price, 0
    queue = (public_bids if side == BUY else public_asks)[abs(distance) - 1]
    return wait, kind, side, price, math.floor(u2 * queue)


@functools.cache
def _event_lists(levels: int) -> tuple[list[int], ...]:
    return tuple(table.tolist() for table in _event_tables(levels))


@functools.cache
def _event_tables(levels: int) -> tuple[NDArray[np.int64], ...]:
    """kind, side and signed distance from the opposite quote of each of the 4D + 2 events, in
    the order of the rates: buy limits, sell limits, buy market, sell market, bid cancels, ask
    cancels. A bid sits below the ask quote (negative distance), an ask above the bid quote."""
    d = np.arange(1, levels + 1)
    kind = np.r_[[LIMIT] * 2 * levels, MARKET, MARKET, [CANCEL] * 2 * levels]
    side = np.r_[[BUY] * levels, [SELL] * levels, BUY, SELL, [BUY] * levels, [SELL] * levels]
    distance = np.r_[-d, d, 0, 0, -d, d]
    return kind.astype(np.int64), side.astype(np.int64), distance.astype(np.int64)


def apply_event(book: OrderBook, kind: int, side: int, price: int, rank: int) -> None:
    """Apply one flow event (one lot, owner PUBLIC) to ``book``; skip what does not apply."""
    if kind == MARKET:
        book.market(side, 1)
    elif not 0 <= price < book.n_ticks:
        return
    elif kind == LIMIT:
        book.add(side, price, 1)
    else:
        public = [o for o in book.queue(side, price) if o.owner == PUBLIC]
        if rank < len(public):
            book.cancel(public[rank].order_id)


def seed_book(book: OrderBook, depth: Any, best_bid: int) -> None:
    """Fill ``book`` with public lots: ``depth[i]`` lots ``i`` ticks behind the best on each
    side, best bid ``best_bid`` and best ask one tick above."""
    for i, lots in enumerate(depth):
        for _ in range(lots):
            book.add(BUY, best_bid - i, 1)
            book.add(SELL, best_bid + 1 + i, 1)


def simulate_flow(
    model: ContStoikovTalreja, duration: float, *, n_ticks: int = 2000, seed: int | None = None
) -> FlowEvents:
    """Run the flow alone on a book seeded with the model's initial depth (best bid at tick
    ``n_ticks // 2``, as in the envs) for ``duration`` seconds and record it, so it can be
    given to an env (replayed) as often as wanted."""
    rng = np.random.default_rng(seed)
    book = OrderBook(n_ticks)
    bid_ref, ask_ref = n_ticks // 2, n_ticks // 2 + 1
    depth = tuple(model.initial_depth.tolist())
    seed_book(book, depth, bid_ref)
    rows: list[tuple[float, int, int, int, int]] = []
    clock = 0.0
    while True:
        bid_ref, ask_ref = quotes(book, bid_ref, ask_ref)
        bids, asks = public_levels(book, model.levels, bid_ref, ask_ref, {})
        wait, kind, side, price, rank = sample_event(model, rng, bid_ref, ask_ref, bids, asks)
        clock += wait
        if clock >= duration:
            break
        rows.append((clock, kind, side, price, rank))
        apply_event(book, kind, side, price, rank)
    times = np.array([row[0] for row in rows], np.float64)
    kinds, sides, prices, ranks = np.array([row[1:] for row in rows], np.int64).reshape(-1, 4).T
    return FlowEvents(times, kinds, sides, prices, ranks, initial_depth=depth)


def quotes(book: OrderBook, bid_ref: int, ask_ref: int) -> tuple[int, int]:
    """The best quotes, keeping the previous reference for an empty side."""
    bid, ask = book.best_bid, book.best_ask
    return (bid_ref if bid is None else bid), (ask_ref if ask is None else ask)


def public_levels(
    book: OrderBook,
    levels: int,
    bid_ref: int,
    ask_ref: int,
    private: Mapping[tuple[int, int], int],
) -> tuple[list[int], list[int]]:
    """Public lots on the D bid ticks below ``ask_ref`` and the D ask ticks above ``bid_ref``;
    ``private[side, price]`` holds the traders' lots to leave out."""
    n = book.n_ticks
    bids, asks = [0] * levels, [0] * levels
    for i in range(levels):
        price = ask_ref - 1 - i
        if 0 <= price < n:
            bids[i] = book.volume(BUY, price) - private.get((BUY, price), 0)
        price = bid_ref + 1 + i
        if 0 <= price < n:
            asks[i] = book.volume(SELL, price) - private.get((SELL, price), 0)
    return bids, asks
