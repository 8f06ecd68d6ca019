"""The same agent limit orders through sekai's depth replay kernel (what ``DepthReplay-v0``
steps) and through hftbacktest's L2 backtest (its partial-fill exchange and the same queue
model), order by order: see test_hftbacktest_depth_fills."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import hftbacktest as hbt
import numba
import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).parents[1] / "finance" / "lob"))  # synthetic_formats

from oracle_harness import CANCEL, NEW, TICK, Fills, Schedule
from synthetic_formats import synthetic_day

from sekai.finance.lob._depth_day import LEVEL
from sekai.finance.lob._replay_day import ReplayDay
from sekai.finance.lob._replay_windows import CANCEL_ORDER, KEEP_ORDER, NO_MARKET
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.depth import TRADE_DTYPE, levels_to_depth
from sekai.finance.lob.depth_model import DepthModel, build_depth_terms
from sekai.finance.lob.events import EXECUTE, PRICE_UNITS, TRADE
from sekai.finance.lob.lobster import orderbook_dtype

MODELS = {  # sekai's name -> how hftbacktest's asset builder is given the same model
    "risk_averse": lambda a, n: a.risk_adverse_queue_model(),
    "power": lambda a, n: a.power_prob_queue_model(n),
    "power2": lambda a, n: a.power_prob_queue_model2(n),
    "power3": lambda a, n: a.power_prob_queue_model3(n),
    "log": lambda a, n: a.log_prob_queue_model(),
    "log2": lambda a, n: a.log_prob_queue_model2(),
}


def depth_stream(seed: int, n_events: int, speedup: int) -> tuple[NDArray[Any], NDArray[Any]]:
    """A synthetic order-level day (``synthetic_formats.synthetic_day``), its clock run
    ``speedup`` times faster, as depth-only data: its top 10 levels after each event as level
    updates (``levels_to_depth``), its executions (visible and hidden) as trades."""
    events = synthetic_day(seed, n_events=n_events)
    start = events["time"][0]
    events["time"] = start + (events["time"] - start) // speedup
    top = ReplayDay(events, levels=10).top[1:]
    assert len(top) == len(events)
    rows = np.zeros(len(top), orderbook_dtype(10))
    for side, name in ((BUY, "bid"), (SELL, "ask")):
        rows[f"{name}_price"] = np.where(top[:, side, :, 1] > 0, top[:, side, :, 0] * TICK, 0)
        rows[f"{name}_size"] = top[:, side, :, 1]
    executed = np.isin(events["kind"], (EXECUTE, TRADE))
    trades = np.empty(int(executed.sum()), TRADE_DTYPE)
    trades["time"] = events["time"][executed]
    trades["side"] = 1 - events["side"][executed]
    trades["price"] = events["price"][executed]
    trades["size"] = events["size"][executed]
    return levels_to_depth(events["time"], rows), trades


def merged_times(depth: NDArray[Any], trades: NDArray[Any]) -> NDArray[np.int64]:
    """The nanosecond time of each message of the tape ``DepthDays`` makes (trades first at
    one time)."""
    time = np.concatenate((trades["time"], depth["time"]))
    kinds = np.concatenate((np.full(len(trades), 1), np.full(len(depth), LEVEL)))
    return time[np.lexsort((kinds == LEVEL, time))]  # type: ignore[no-any-return]


def make_terms(depth: NDArray[Any], trades: NDArray[Any], model: str, n: float, size: int) -> Any:
    from sekai.finance.lob.queue_models import queue_model

    chosen = queue_model(model)
    if n and hasattr(chosen, "n"):
        chosen = type(chosen)(n)
    return build_depth_terms(
        1,
        depth=depth,
        trades=trades,
        queue_model=chosen,
        symbol=None,
        tick=TICK,
        price_offset=0,
        n_ticks=None,
        step_seconds=1.0,
        episode_steps=1,
        order_size=size,
        max_inventory=10**9,
        initial_cash=1e9,
        book_levels=1,
        last_trades=0,
        maker_fee=0.0,
        taker_fee=0.0,
        entry_latency=0.0,
        data_latency=0.0,
        sampler=None,
    )


def sekai_depth_fills(
    times: NDArray[np.int64], terms: Any, schedule: Schedule, entry_latency: int
) -> Fills:
    """Per order, its fills in sekai's depth kernel, driven one message at a time (each fill
    stamped with its message's time), each instruction reaching the book after every message
    stamped up to its time plus ``entry_latency``."""
    model = DepthModel(terms, 1)
    model.reset(np.array([0]), [{"start": 0}], np.random.default_rng(0))
    model.cursor[0] = 0
    live = [-1, -1]
    fills: Fills = {int(o): [] for o in schedule.order}
    arrive = np.searchsorted(times, schedule.time + entry_latency, "right")
    i, n = 0, len(schedule.time)
    keep, market = np.array([[KEEP_ORDER]]), np.array([[NO_MARKET]])
    for k in range(len(times)):
        bid, ask = keep, keep
        while i < n and arrive[i] == k:
            side, what, order = schedule.side[i], schedule.what[i], int(schedule.order[i])
            i += 1
            if what == CANCEL and live[side] != order:
                continue
            live[side] = order if what == NEW else -1
            value = np.array([[schedule.tick[i - 1] if what == NEW else CANCEL_ORDER]])
            bid, ask = (value, ask) if side == BUY else (bid, value)
        model._step_windows(np.array([k + 1]), (np.array([[k]]), bid, ask, market, np.array([[0]])))
        for _, side, tick, lots, maker in model.fill_log(0):
            assert maker == 1
            fills[live[side]].append((int(times[k]), int(tick), int(lots)))
            if model.orders[0, 0, side, 0] < 0:
                live[side] = -1
    return fills


def to_hftbacktest_depth(
    depth: NDArray[Any], trades: NDArray[Any], feed_latency: int
) -> NDArray[Any]:
    """The tape's messages, in its order, as hftbacktest L2 feed rows: a level update a depth
    event of its side, a trade a trade event flagged with the taker's side."""
    n = len(depth) + len(trades)
    time = np.concatenate((trades["time"], depth["time"]))
    kinds = np.concatenate((np.full(len(trades), 1), np.full(len(depth), LEVEL)))
    order = np.lexsort((kinds == LEVEL, time))
    sides = np.concatenate((trades["side"], depth["side"]))[order]
    prices = np.concatenate((trades["price"], depth["price"]))[order]
    sizes = np.concatenate((trades["size"], depth["size"]))[order]
    kind = np.where(kinds[order] == LEVEL, hbt.DEPTH_EVENT, hbt.TRADE_EVENT)
    rows = np.zeros(n, hbt.event_dtype)
    rows["ev"] = (
        hbt.EXCH_EVENT
        | hbt.LOCAL_EVENT
        | kind
        | np.where(sides == BUY, hbt.BUY_EVENT, hbt.SELL_EVENT)
    )
    rows["exch_ts"] = time[order]
    rows["local_ts"] = time[order] + feed_latency
    rows["px"] = prices / PRICE_UNITS
    rows["qty"] = sizes
    return rows


@numba.njit
def _poll(bt, live, left, out, n_out):  # type: ignore[no-untyped-def]
    """Record the fills of the live orders that reached the strategy since the last poll."""
    orders = bt.orders(0)
    for s in range(2):
        if live[s] < 0:
            continue
        got = orders.get(live[s])
        if got is None:
            continue
        if got.leaves_qty < left[s] and n_out < len(out):
            out[n_out, 0], out[n_out, 1] = live[s], got.exch_timestamp
            out[n_out, 2], out[n_out, 3] = got.exec_price_tick, round(left[s] - got.leaves_qty)
            n_out += 1
            left[s] = got.leaves_qty
    return n_out


@numba.njit
def _drive(bt, time, what, side, price, order, size, end, feed, seen, out):  # type: ignore[no-untyped-def]
    live = np.full(2, -1, np.int64)
    left = np.zeros(2)
    n_out = 0
    bt.elapse(1)
    if time[0] - feed > bt.current_timestamp:  # nothing to watch before the first order
        bt.elapse(time[0] - feed - bt.current_timestamp)
    for i in range(len(time) + 1):
        until = time[i] if i < len(time) else end
        while bt.current_timestamp < until:
            code = bt.wait_next_feed(True, until - bt.current_timestamp)
            n_out = _poll(bt, live, left, out, n_out)
            if code not in (0, 1, 2, 3):
                return n_out, code, bt.current_timestamp
            if code == 1:
                break
        if i == len(time):
            break
        depth = bt.depth(0)
        seen[i, 0], seen[i, 1] = depth.best_bid_tick, depth.best_ask_tick
        s = side[i]
        if what[i] == 0:
            live[s], left[s] = order[i], size
            if s == 0:
                bt.submit_buy_order(0, order[i], price[i], size, hbt.GTX, hbt.LIMIT, False)
            else:
                bt.submit_sell_order(0, order[i], price[i], size, hbt.GTX, hbt.LIMIT, False)
        else:
            bt.cancel(0, order[i], False)
    return n_out, 0, 0


def hftbacktest_depth_fills(
    data: NDArray[Any],
    schedule: Schedule,
    model: str,
    n: float,
    *,
    entry_latency: int,
    response_latency: int,
    feed_latency: int,
    order_size: int,
) -> tuple[Fills, NDArray[np.int64], dict[int, tuple[int, int]]]:
    """Per order, its fills in hftbacktest's partial-fill exchange with the queue model
    ``model`` (exponent ``n``), as its strategy receives them; the best bid and ask tick the
    strategy saw at each instruction; and per order whose backtest stopped on an error, the
    error's code and the exchange time it stopped at.

    Each order runs in a backtest of its own, from the day's start to its cancel's response
    (an agent order changes no book, so its fills are those it would have among the others):
    hftbacktest 2.4.2's partial-fill exchange keeps an order that a trade at its price fills
    exactly to the last lot in its book, as filled, and the next trade or cross at that price
    makes the backtest stop with ``InvalidOrderStatus`` (code 14); alone, the order is done by
    then and nothing after it is lost."""
    seen = np.zeros((len(schedule.time), 2), np.int64)
    out = np.zeros((4 * order_size + 16, 4), np.int64)
    price = schedule.tick * (TICK / PRICE_UNITS)
    fills: Fills = {int(o): [] for o in schedule.order}
    errors: dict[int, tuple[int, int]] = {}
    for o in fills:
        rows = np.flatnonzero(schedule.order == o)  # its NEW and its CANCEL
        end = int(schedule.time[rows[-1]]) + entry_latency + response_latency + 1
        bt = _backtest(data, model, n, entry_latency, response_latency)
        seen_here = np.zeros((len(rows), 2), np.int64)
        n_out, code, stopped = _drive(
            bt, schedule.time[rows], schedule.what[rows], schedule.side[rows], price[rows],
            schedule.order[rows], float(order_size), end, feed_latency, seen_here, out,
        )  # fmt: skip
        bt.close()
        seen[rows] = seen_here
        if code:
            errors[o] = (int(code), int(stopped))
        for _, t, tick, lots in out[:n_out].tolist():
            fills[o].append((t, tick, lots))
    return fills, seen, errors


def _backtest(data: NDArray[Any], model: str, n: float, entry: int, response: int) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        asset = hbt.BacktestAsset().data(data).linear_asset(1.0).constant_latency(entry, response)
        asset = (
            MODELS[model](asset, n)
            .partial_fill_exchange()
            .trading_value_fee_model(0.0, 0.0)
            .tick_size(TICK / PRICE_UNITS)
            .lot_size(1.0)
        )
    return hbt.HashMapMarketDepthBacktest([asset])
