"""A schedule of orders backtested on a replayed day in one compiled call: ``replay_orders``.

``LobsterReplay-v0`` asks its agent for an action every step, one Python call a step. A
backtest of a strategy decided in advance (the instructions at their times and prices) needs
no step: ``replay_orders`` replays the whole day with the instructions in one compiled loop
(``_order_replay``) and returns every fill. The day is replayed as the env replays it
(``ReplayDay``, the same tape) and each message and instruction goes through the env's own
kernel functions (``_replay_windows``), so the fills are the env's for the same instructions.
Importing this module compiles nothing; the first call loads (or compiles) the kernels.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.finance.arguments import check_float
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.flow import CANCEL, MARKET
from sekai.finance.lob.flow import LIMIT as QUOTE
from sekai.finance.lob.market import MarketConfig

__all__ = ["CANCEL", "FILL_DTYPE", "MARKET", "ORDER_DTYPE", "QUOTE", "replay_orders"]

# QUOTE (a post-only limit order), CANCEL and MARKET are the order flow's kinds (``flow``)
ORDER_DTYPE = np.dtype(
    [
        ("time", np.float64),  # seconds, on the messages' clock; ascending
        ("kind", np.int8),  # QUOTE, CANCEL or MARKET
        ("side", np.int8),  # BUY or SELL
        ("price", np.float64),  # dollars, a quote's (ignored for the other kinds)
        ("lots", np.int64),  # a market order's (ignored for the other kinds)
    ]
)
FILL_DTYPE = np.dtype(
    [
        ("time", np.float64),  # the message's time; a market order's: its arrival
        ("message", np.int64),  # the row of messages that made it, or that the order preceded
        ("side", np.int8),  # BUY: the agent bought
        ("price", np.float64),  # dollars
        ("lots", np.int64),
        ("maker", np.bool_),
        ("fee", np.float64),  # dollars paid (negative: a rebate)
        ("order", np.int64),  # the row of orders whose quote or market order filled
    ]
)
_KINDS = {QUOTE: "QUOTE", CANCEL: "CANCEL", MARKET: "MARKET"}


def replay_orders(
    messages: Any,
    orders: NDArray[Any],
    *,
    orderbook: Any = None,
    tick: int = 100,
    price_offset: int = 0,
    n_ticks: int | None = None,
    order_size: int = 1,
    max_inventory: int = 10,
    maker_fee: float = 0.0,
    taker_fee: float = 0.0,
    entry_latency: float = 0.0,
) -> NDArray[Any]:
    """Replay one day with a schedule of one agent's ``orders`` (``ORDER_DTYPE``) and return
    every fill, in order (``FILL_DTYPE``): a whole-day backtest in one compiled call, with the
    rules of ``LobsterReplay-v0``, whose keyword arguments these are.

    ``messages`` (and ``orderbook``, ``tick``, ``price_offset``, ``n_ticks``) is one day as
    the env takes it: events, LOBSTER messages or a file's path. Each order reaches the book
    after every message stamped up to its ``time`` plus ``entry_latency``: a QUOTE is a
    post-only limit order of ``order_size`` lots at ``price`` that replaces the side's quote
    (one at the same price is kept, with its place in the queue; a quote that would cross is
    dropped, the old one gone all the same), in the real FIFO queue; a CANCEL removes the
    side's quote; a MARKET order of ``lots`` walks the replayed book's top five levels (the
    env's with its default ``book_levels``) at their prices, what they lack not filled.
    Fills are cut to keep the inventory within ``max_inventory`` lots and pay ``maker_fee``
    or ``taker_fee`` a lot. A quote or market order that reaches a halted book is refused,
    with a warning naming the rows. The book is not changed by the orders (no market
    impact).
    """
    from sekai.finance.lob._order_replay import OUT_FIELDS, replay_schedule
    from sekai.finance.lob._replay_day import ReplayDay, load_day
    from sekai.finance.lob._replay_windows import CANCEL_ORDER, KEEP_ORDER, NO_MARKET
    from sekai.finance.lob.replay_model import replay_grid

    orders = _checked(orders)
    fees = check_float("maker_fee", maker_fee), check_float("taker_fee", taker_fee)
    entry_latency = check_float("entry_latency", entry_latency, 0.0)
    if isinstance(messages, list | tuple):
        raise TypeError(
            f"messages must be one day, got a {type(messages).__name__}: replay_orders "
            "replays one day at a time"
        )
    loaded = load_day(messages, orderbook)
    day = ReplayDay(loaded, tick=tick, price_offset=price_offset, n_ticks=n_ticks)
    market = MarketConfig.build(  # the env's grid and checks
        1,
        **replay_grid(day.n_ticks, tick, price_offset),
        order_size=order_size,
        max_inventory=max_inventory,
    )
    price = np.ascontiguousarray(market.price(np.arange(day.n_ticks)))
    ticks = _ticks(orders, price, market.tick_size)

    kind, side = orders["kind"], orders["side"]
    quote, cancel, taker = kind == QUOTE, kind == CANCEL, kind == MARKET
    value = np.where(quote, ticks, CANCEL_ORDER)
    bids = np.where((quote | cancel) & (side == BUY), value, KEEP_ORDER)
    asks = np.where((quote | cancel) & (side == SELL), value, KEEP_ORDER)
    markets = np.where(taker, side, NO_MARKET).astype(np.int64)
    lots = np.where(taker, orders["lots"], 0)
    arrival = orders["time"] + entry_latency
    entry = np.searchsorted(day.time, arrival, "right")  # as ``ReplayDays.after``

    quotes = np.zeros((1, 1, 2, 4), np.int64)
    quotes[..., 0] = -1  # no quote on either side
    state = (
        np.zeros(1, np.int64),  # cursor
        quotes,
        np.zeros((1, 1)),  # cash
        np.zeros((1, 1), np.int64),  # inventory
        np.zeros((1, 1)),  # fees
        np.zeros((1, day.levels, 5), np.int64),  # one call's fills
        np.zeros(1, np.int64),  # how many
        np.zeros(1, np.int64),  # refused
    )
    # a maker fill takes at least a lot of a quote, and one message makes at most one; a
    # market order fills at most once a level
    capacity = min(len(day), int(quote.sum()) * market.order_size)
    capacity += int(np.minimum(lots, day.levels).sum())
    out = np.empty((capacity, OUT_FIELDS), np.int64)
    refused = np.zeros(len(orders), np.bool_)
    terms = (market.order_size, market.max_inventory, *fees)
    n = replay_schedule(
        day.tape(price), entry, bids, asks, markets, lots, terms, state, out, refused
    )
    if n > capacity:
        raise RuntimeError(f"replay_orders: {n} fills for a capacity of {capacity}")
    if refused.any():
        rows = np.flatnonzero(refused)
        warnings.warn(
            f"{len(rows)} orders reached a halted book and were refused: rows "
            f"{', '.join(map(str, rows[:10].tolist()))}{', ...' if len(rows) > 10 else ''}",
            stacklevel=2,
        )
    return _fills(out[:n], arrival, day.time, price, loaded.stream, fees)


def _checked(orders: Any) -> NDArray[Any]:
    """``orders`` as a contiguous ``ORDER_DTYPE`` array, or a TypeError/ValueError naming the
    first row that is wrong and why."""
    if not isinstance(orders, np.ndarray) or orders.dtype.names is None:
        raise TypeError(f"orders must be a structured array of ORDER_DTYPE, got {type(orders)}")
    if set(orders.dtype.names) != set(ORDER_DTYPE.names or ()) or orders.ndim != 1:
        raise TypeError(
            f"orders must be a 1-d array of ORDER_DTYPE {ORDER_DTYPE}, got {orders.ndim}-d of "
            f"{orders.dtype}"
        )
    for name in ORDER_DTYPE.names or ():
        if not np.can_cast(orders.dtype[name], ORDER_DTYPE[name], "same_kind"):
            raise TypeError(
                f"orders['{name}'] must be of {ORDER_DTYPE[name]}, got {orders.dtype[name]}"
            )
    time, kind, side, lots = (orders[name] for name in ("time", "kind", "side", "lots"))
    problems = (
        (~np.isfinite(time), lambda i: f"time {time[i]} is not a finite number"),
        (
            np.append(False, time[1:] < time[:-1]),
            lambda i: (
                f"time {time[i]} goes back (row {i - 1} is at {time[i - 1]}): "
                "orders must be in time order"
            ),
        ),
        (
            ~np.isin(kind, list(_KINDS)),
            lambda i: (
                f"kind {kind[i]} is none of "
                + ", ".join(f"{name} ({k})" for k, name in _KINDS.items())
            ),
        ),
        (~np.isin(side, (BUY, SELL)), lambda i: f"side {side[i]} is neither BUY (0) nor SELL (1)"),
        (
            (kind == MARKET) & (lots < 1),
            lambda i: f"a market order's lots must be at least 1, got {lots[i]}",
        ),
    )
    for bad, why in problems:
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"orders row {i}: {why(i)}")
    checked = np.empty(len(orders), ORDER_DTYPE)
    for name in ORDER_DTYPE.names or ():  # by name: a structured cast goes by position
        checked[name] = orders[name]
    return checked


def _ticks(orders: NDArray[Any], price: NDArray[np.float64], tick_size: float) -> NDArray[np.int64]:
    """Each quote's tick on the grid ``price`` (0 for the other kinds), or a ValueError naming
    the first quote whose price is off the grid or outside it."""
    quoted = orders["price"]
    ticks = np.rint((quoted - price[0]) / tick_size)
    inside = (ticks >= 0) & (ticks < len(price))  # False for NaN
    near = np.abs(price[np.where(inside, ticks, 0).astype(np.int64)] - quoted)
    bad = (orders["kind"] == QUOTE) & ~(inside & (near <= tick_size * 1e-6))
    if bad.any():
        i = int(np.argmax(bad))
        where = "between two ticks of" if inside[i] else "outside"
        raise ValueError(
            f"orders row {i}: price {float(quoted[i])!r} is {where} the grid ({len(price)} "
            f"ticks of {tick_size:g} from {price[0]:g} to {price[-1]:g}, set by tick, "
            "price_offset and n_ticks)"
        )
    return np.where(orders["kind"] == QUOTE, ticks, 0).astype(np.int64)


def _fills(
    out: NDArray[np.int64],
    arrival: NDArray[np.float64],
    time: NDArray[np.float64],
    price: NDArray[np.float64],
    stream: Any,
    fees: tuple[float, float],
) -> NDArray[Any]:
    """The kernel's fill rows (``_order_replay.OUT_FIELDS``) as ``FILL_DTYPE``: times, the
    rows of the caller's messages (a replay message's source), prices and fees."""
    message, side, tick, lots, maker, row = out.T
    is_maker = maker.astype(bool)
    fills = np.empty(len(out), FILL_DTYPE)
    last = len(time) - 1
    fills["time"] = np.where(is_maker, time[np.minimum(message, last)], arrival[row])
    source = np.append(stream.source, stream.n_events)  # the end: past the last message
    fills["message"] = source[message]
    fills["side"] = side
    fills["price"] = price[tick]
    fills["lots"] = lots
    fills["maker"] = is_maker
    fills["fee"] = np.where(is_maker, fees[0], fees[1]) * lots
    fills["order"] = row
    return fills
