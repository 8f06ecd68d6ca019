"""The same agent limit orders through sekai's replay (``replay_orders``, the kernel
functions ``LobsterReplay-v0`` steps) and through hftbacktest's L3 FIFO backtest, order by
order: see test_hftbacktest_fills."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import hftbacktest as hbt
import numba
import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob import CANCEL as ORDER_CANCEL
from sekai.finance.lob import ORDER_DTYPE, QUOTE, replay_orders
from sekai.finance.lob._trader_rows import CANCEL as ENV_CANCEL
from sekai.finance.lob._trader_rows import IMPROVE, KEEP
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.events import DAY, EXECUTE, NANOSECONDS, PRICE_UNITS
from sekai.finance.lob.events import TRADE as EXECUTE_HIDDEN
from sekai.finance.lob.replay_model import build_terms

GTX, LIMIT = hbt.GTX, hbt.LIMIT  # post-only limit orders, as the env's
TICK = 100  # price units a tick: one cent
NEW, CANCEL = 0, 1


@dataclasses.dataclass
class Schedule:
    """Instructions, in time order: at the agent's (local) time ``time`` (ns), a NEW order
    ``order`` on ``side`` at ``tick`` or the CANCEL of order ``order``; both reach the exchange
    ``entry_latency`` later."""

    time: NDArray[np.int64]
    what: NDArray[np.int64]
    side: NDArray[np.int64]
    tick: NDArray[np.int64]
    order: NDArray[np.int64]
    seen: NDArray[np.int64]  # (n, 2): the best bid and ask tick the agent saw (-1: none)


def make_terms(events: NDArray[Any], order_size: int) -> Any:
    return build_terms(
        1,
        messages=events,
        orderbook=None,
        symbol=None,
        days=None,
        tick=TICK,
        price_offset=0,
        n_ticks=None,
        step_seconds=1.0,
        episode_steps=1,
        order_size=order_size,
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


def random_schedule(
    events: NDArray[Any],
    terms: Any,
    rng: np.random.Generator,
    *,
    step: int,
    entry_latency: int,
    feed_latency: int,
    offsets: tuple[int, ...] = (-1, 0, 0, 1, 2),
    chance: float = 0.4,
    longest: int = 10,
) -> Schedule:
    """Orders at random steps of ``step`` ns from the first event, random sides and offsets
    (ticks behind the best the agent sees, -1: one better; the env's improve, join, one and two
    ticks behind), each cancelled after 1 to ``longest`` steps; one order a side at a time, and
    a step between two. The agent sees the book of ``feed_latency``
    ago; an order reaching a halted book or none of its side's book is not sent."""
    days = terms.days
    times = events["time"]
    top, halted = days.top, days.halted
    first, last = int(times[0]), int(times[-1])
    rows: list[tuple[int, int, int, int, int, int, int]] = []
    free = [0, 0]  # per side, the first step a new order may start
    order = 0
    n_steps = (last - first) // step - longest - 2
    for j in range(1, n_steps):
        now = first + j * step
        arrives = now + entry_latency
        if (times == arrives).any():
            continue  # a tie between an order and an event: the two orders differ, skip it
        seen = int(np.searchsorted(times, now - feed_latency, "right"))
        at = int(np.searchsorted(times, arrives, "right"))
        bid, ask = int(top[seen, BUY, 0, 0]), int(top[seen, SELL, 0, 0])
        for side in rng.permutation(2):
            if j < free[side] or rng.random() >= chance or halted[at]:
                continue
            best = bid if side == BUY else ask
            if best < 0:
                continue
            offset = int(rng.choice(offsets))
            tick = best - offset if side == BUY else best + offset
            life = int(rng.integers(1, longest + 1))
            rows.append((now, NEW, side, tick, order, 0, 0))
            end = now + life * step
            if (times == end + entry_latency).any():
                end += 1  # no tie for the cancel either
            rows.append((end, CANCEL, side, tick, order, 0, 0))
            free[side] = j + life + 1
            order += 1
    rows.sort(key=lambda r: (r[0], r[1] == NEW))  # cancels first at one time
    a = np.array(rows, np.int64).reshape(-1, 7)
    seen_at = np.searchsorted(times, a[:, 0] - feed_latency, "right")
    return Schedule(a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4], top[seen_at, :, 0, 0].copy())


Fills = dict[int, list[tuple[int, int, int]]]  # per order: (exchange time ns, tick, lots)


def schedule_orders(events: NDArray[Any], schedule: Schedule) -> NDArray[Any]:
    """``schedule`` as ``replay_orders``' orders: quotes and cancels at its times on the
    messages' clock (seconds after the first event's midnight), quotes priced in dollars."""
    start = int(events["time"][0]) // DAY * DAY
    orders = np.zeros(len(schedule.time), ORDER_DTYPE)
    orders["time"] = (schedule.time - start) / NANOSECONDS
    orders["kind"] = np.where(schedule.what == NEW, QUOTE, ORDER_CANCEL)
    orders["side"] = schedule.side
    orders["price"] = schedule.tick * (TICK / PRICE_UNITS)
    return orders


def sekai_fills(
    events: NDArray[Any], terms: Any, schedule: Schedule, entry_latency: int
) -> tuple[Fills, dict[int, list[int]]]:
    """Per order, its fills in sekai's replay (``replay_orders``: the day in one compiled call
    through the kernel functions LobsterReplay-v0 steps), and the index of the message that
    made each: each instruction reaches the book after every message stamped up to its time
    plus ``entry_latency``. A cancel of an order filled already finds no quote (one order a
    side at a time): it changes nothing."""
    market = terms.market
    fills = replay_orders(
        events,
        schedule_orders(events, schedule),
        order_size=market.order_size,
        max_inventory=market.max_inventory,
        entry_latency=entry_latency / NANOSECONDS,
    )
    times = events["time"]
    ours: Fills = {int(o): [] for o in schedule.order}
    made: dict[int, list[int]] = {int(o): [] for o in schedule.order}
    assert fills["maker"].all()  # the agent sends no market orders
    for fill in fills:
        order, k = int(schedule.order[fill["order"]]), int(fill["message"])
        tick = round(fill["price"] * PRICE_UNITS / TICK)
        ours[order].append((int(times[k]), tick, int(fill["lots"])))
        made[order].append(k)
    return ours, made


@numba.njit
def _drive(bt, time, what, side, price, order, size, end, wake, out_seen):  # type: ignore[no-untyped-def]
    bt.elapse(1)  # the clock starts at the first event (before: no time at all)
    for i in range(len(time)):
        _run_to(bt, time[i], wake)
        depth = bt.depth(0)
        out_seen[i, 0] = depth.best_bid_tick
        out_seen[i, 1] = depth.best_ask_tick
        if what[i] == 0:
            if side[i] == 0:
                bt.submit_buy_order(0, order[i], price[i], size, GTX, LIMIT, False)
            else:
                bt.submit_sell_order(0, order[i], price[i], size, GTX, LIMIT, False)
        else:
            bt.cancel(0, order[i], False)
    _run_to(bt, end, wake)


@numba.njit
def _run_to(bt, until, wake):  # type: ignore[no-untyped-def]
    """Elapse ``bt`` to the exchange time ``until`` (or the end of its feed); with ``wake`` > 0,
    waking every ``wake`` ns on the way to read the best bid and ask, as a strategy deciding
    that often would."""
    now = bt.current_timestamp
    while wake > 0 and until - now > wake:
        if bt.elapse(wake) != 0:
            return  # the end of the feed: its clock stops there
        depth = bt.depth(0)  # calls into hftbacktest's library: never optimised away
        depth.best_bid_tick, depth.best_ask_tick  # noqa: B018
        now = bt.current_timestamp
    if until > now:
        bt.elapse(until - now)


def hftbacktest_backtest(data: NDArray[Any], *, entry_latency: int, response_latency: int) -> Any:
    """hftbacktest's L3 FIFO backtest of the feed ``data`` (``to_hftbacktest``), no fees, one
    cent a tick and one lot a unit, as ``hftbacktest_fills`` runs it (no partial fills: its
    only L3 exchange)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        asset = (
            hbt.BacktestAsset()
            .data(data)
            .linear_asset(1.0)
            .constant_latency(entry_latency, response_latency)
            .l3_fifo_queue_model()
            .no_partial_fill_exchange()
            .trading_value_fee_model(0.0, 0.0)
            .tick_size(TICK / PRICE_UNITS)
            .lot_size(1.0)
        )
    return hbt.HashMapMarketDepthBacktest([asset])


def drive(
    bt: Any, schedule: Schedule, order_size: int, end: int, *, wake: int = 0
) -> NDArray[np.int64]:
    """Send ``schedule``'s instructions through the backtest ``bt``, each at its time, then
    run it to the exchange time ``end``; the best bid and ask tick it saw at each instruction.
    The strategy wakes at its instructions only, or with ``wake`` > 0 also every ``wake`` ns
    in between (reading the best bid and ask), as an env's agent deciding every step."""
    seen = np.zeros((len(schedule.time), 2), np.int64)
    price = schedule.tick * (TICK / PRICE_UNITS)
    # contiguous columns, so that numba compiles the loop once for every schedule
    columns = (schedule.time, schedule.what, schedule.side, price, schedule.order)
    _drive(bt, *map(np.ascontiguousarray, columns), float(order_size), end, wake, seen)
    return seen


def hftbacktest_fills(
    data: NDArray[Any],
    schedule: Schedule,
    *,
    entry_latency: int,
    response_latency: int,
    order_size: int,
) -> tuple[Fills, NDArray[np.int64]]:
    """Per order, its fills in hftbacktest's L3 FIFO backtest (``hftbacktest_backtest``), and
    the best bid and ask tick its strategy saw at each instruction."""
    bt = hftbacktest_backtest(data, entry_latency=entry_latency, response_latency=response_latency)
    end = int(schedule.time[-1]) + entry_latency + response_latency + 1
    seen = drive(bt, schedule, order_size, end)
    fills: Fills = {int(o): [] for o in schedule.order}
    orders = bt.orders(0)
    for o in fills:
        got = orders.get(o)
        if got is not None and got.status == hbt.FILLED:
            fills[o].append((int(got.exch_timestamp), int(got.exec_price_tick), int(got.exec_qty)))
    bt.close()
    return fills, seen


def env_actions(schedule: Schedule, first: int, step: int) -> NDArray[np.int64]:
    """``schedule`` as LobsterReplay-v0 actions, one row per step of ``step`` ns from the
    exchange time ``first`` up to the step after its last instruction: each instruction in the
    step it falls in, priced relative to the best the agent saw (keep where there is none)."""
    steps = int((schedule.time[-1] - first) // step) + 2
    actions = np.full((steps, 3), KEEP, np.int64)
    step_of = (schedule.time - first) // step
    for i in range(len(schedule.time)):
        side = schedule.side[i]
        offset = schedule.tick[i] - schedule.seen[i, side]
        offset = -offset if side == BUY else offset  # ticks behind the best
        entry = ENV_CANCEL if schedule.what[i] == CANCEL else IMPROVE + 1 + offset
        actions[step_of[i], side] = entry
    return actions


def differences(
    terms: Any,
    schedule: Schedule,
    ours: Fills,
    made: dict[int, list[int]],
    theirs: Fills,
    order_size: int,
) -> dict[str, list[int]]:
    """The orders whose fills differ, by the rule that explains each (see the test module);
    "unexplained" for the rest."""
    tape_kinds, tape_ticks, top = terms.days.kinds, terms.days.ticks, terms.days.top
    sent = {int(o): i for i, o in enumerate(schedule.order) if schedule.what[i] == NEW}
    found: dict[str, list[int]] = {}
    for order, mine in ours.items():
        other = theirs[order]
        if mine == other:
            continue
        side, tick = int(schedule.side[sent[order]]), int(schedule.tick[sent[order]])
        better = (lambda a, b: a > b) if side == BUY else (lambda a, b: a < b)
        why = "unexplained"
        if mine and other == [(mine[0][0], mine[0][1], order_size)] and order_size > 1:
            why = "no partial fills"
        elif mine and (not other or other[0][0] > mine[0][0]):
            k = made[order][0]
            through = better(tick, int(tape_ticks[k]))  # executed at a worse price than it
            if through and tape_kinds[k] == EXECUTE_HIDDEN:
                why = "hidden execution"
            elif through and tape_kinds[k] == EXECUTE and better(tick, int(top[k, side, 0, 0])):
                start = k  # the first execution of the sweep (the run of executions at one time)
                while start > 0 and tape_kinds[start - 1] == EXECUTE and same_time(terms, start):
                    start -= 1
                inside = better(tick, int(top[start, side, 0, 0]))
                why = "inside the spread" if inside else "sweep through its level"
        found.setdefault(why, []).append(order)
    return found


def same_time(terms: Any, k: int) -> bool:
    """Whether message k has the time of message k - 1."""
    time = terms.days[0].time
    return bool(time[k] == time[k - 1])
