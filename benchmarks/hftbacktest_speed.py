"""LobsterReplay-v0 against hftbacktest (2.4.2, its L3 FIFO queue model), side by side, in
order events per second of one synthetic day (issue 35, point 3).

    python benchmarks/hftbacktest_speed.py [--quick]

hftbacktest is the dependency group ``oracle`` (``uv sync --group oracle``). The day is the
oracle's (``synthetic_formats.synthetic_day``: adds, partial cancels, deletes, FIFO sweeps,
hidden executions, a halt; 100,000 draws, about 124,000 events over 5.5 hours), converted for
hftbacktest by the oracle's ``hftbacktest_events.to_hftbacktest``; the agent is the oracle's
(``oracle_harness.random_schedule``: one-lot post-only limit orders at random whole seconds,
sides and prices near the touch, each cancelled 1 to 10 s later, 300 ms entry and 200 ms feed
latency), sent to sekai as the env's actions (``oracle_harness.env_actions``) and to hftbacktest
as orders (``oracle_harness.drive``), its strategy waking at the orders only or also every 1 s
(reading the best bid and ask), as the env's agent decides. Conversions happen before any
timing. Figures:

(a) One agent, one window of the whole day: sekai's single ``LobsterReplay-v0`` env (made from
    the event array, which replays the day once, then an episode of one step a second), and
    sekai's compiled counterpart of hftbacktest's loop, ``replay_orders`` (the schedule as its
    orders, converted before timing; one call replays the day and the orders), against
    hftbacktest's backtest of the same orders (built from its feed array, then driven). Events
    per second of the day; the orders each filled. replay_orders and hftbacktest are sent
    every order; the env's masks refuse an "improve" on a one-tick spread (it would cross the
    book the agent sees), so the env's agent sends fewer of them, and fills fewer.
(b) 1,024 windows of 300 steps of 1 s (60 with ``--quick``) spread over the day:
    ``make_vec("LobsterReplay-v0", 1024)`` stepping every window's agent (the same orders,
    those of each window's span), observing the env's default view (five levels a side and
    the last five trades) and only what hftbacktest's strategy reads (``book_levels=1``,
    ``last_trades=0``), against hftbacktest run once per window in a loop, each run
    fed the book resting at the window's start as adds, then the window's events. The loop is
    timed on a sample of its windows (every ``1024 / sample``-th) and its rate, events of the
    sampled windows per second, stands for the whole loop's.
(c) The book alone, no agent, on the day's event stream: sekai's ``OrderBook`` (the object API,
    one Python call per event) and its compiled replay (``_replay_kernel.replay_levels``, the
    top level recorded after each event) against hftbacktest's backtest with no orders run to
    the end of its feed, with every row an exchange and a local event (its two books: the
    exchange's L3 queue model and the strategy's market depth), and with local rows only.

Each figure is the best of a few rounds (one with ``--quick``), in wall time, the sides taking
turns; the load average is printed with them: on a shared machine quote ratios.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "oracle"))
sys.path.insert(0, str(ROOT / "tests" / "finance" / "lob"))

import hftbacktest as hbt  # noqa: E402
from hftbacktest_events import to_hftbacktest  # noqa: E402
from oracle_harness import (  # noqa: E402
    NEW,
    Schedule,
    drive,
    env_actions,
    hftbacktest_backtest,
    make_terms,
    random_schedule,
    schedule_orders,
)
from synthetic_formats import N_TICKS, TICK, apply_event, synthetic_day  # noqa: E402

import sekai  # noqa: E402
from sekai.envs.finance.lobster_replay import LobsterReplayEnv  # noqa: E402
from sekai.finance import BUY, SELL, OrderBook, replay_orders  # noqa: E402
from sekai.finance.lob._replay_kernel import replay_levels  # noqa: E402
from sekai.finance.lob.events import ADD  # noqa: E402

ENTRY, RESPONSE, FEED = 300_000_000, 300_000_000, 200_000_000  # ns, as the oracle test's
STEP = 1_000_000_000  # a step, and the agent's decision grid: 1 s
WINDOWS = 1024
HFT_AT_ORDERS = "hftbacktest, waking at orders"
HFT_EVERY_STEP = "hftbacktest, waking every 1 s"
# the batch observing what the env shows by default (5 levels a side, the last 5 trades), and
# what hftbacktest's strategy reads (the best bid and ask)
SEKAI_DEFAULT = "sekai make_vec"
SEKAI_TOUCH = "sekai make_vec, best bid and ask"
REPLAY_ORDERS = "sekai replay_orders (compiled)"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small day, for a smoke test")
    args = parser.parse_args(argv)
    draws, rounds, sample, steps = (3_000, 1, 4, 60) if args.quick else (100_000, 3, 32, 300)
    print(f"load average {_load()} on {os.cpu_count()} cores")
    events = synthetic_day(0, n_events=draws)
    times = events["time"]
    first = int(times[0])
    schedule = random_schedule(
        events,
        make_terms(events, 1),
        np.random.default_rng(0),
        step=STEP,
        entry_latency=ENTRY,
        feed_latency=FEED,
    )
    data = to_hftbacktest(events, FEED, sweeps_first=True)
    hours = (int(times[-1]) - first) / 3.6e12
    print(
        f"day: {len(events):,} events over {hours:.1f} h ({len(data):,} hftbacktest feed rows), "
        f"{int((schedule.what == NEW).sum()):,} agent orders"
    )
    _warm_up()
    one_window(events, schedule, data, rounds)
    many_windows(events, schedule, rounds, sample, steps)
    book_alone(events, data, rounds)
    print(f"load average {_load()}")


def one_window(events: NDArray[Any], schedule: Schedule, data: NDArray[Any], rounds: int) -> None:
    """(a): the whole day as one window, its events per second on each side."""
    first = int(events["time"][0])
    actions = env_actions(schedule, first, STEP)
    end = first + len(actions) * STEP  # both run to the end of the env's last step
    n = int(np.searchsorted(events["time"], end, "right"))
    fills = {}
    orders = schedule_orders(events, schedule)
    terms = dict(order_size=1, max_inventory=10**6, entry_latency=ENTRY / 1e9)  # the env's
    replay_orders(events, orders, **terms)  # compiled for this day's arrays, outside the timings

    def sekai_replay_orders() -> tuple[float, float]:
        start = time.perf_counter()
        fills["replay_orders"] = len(replay_orders(events, orders, **terms))
        return 0.0, time.perf_counter() - start

    def sekai_env() -> tuple[float, float]:
        start = time.perf_counter()
        env = _env(events, len(actions))
        made = time.perf_counter()
        env.reset(seed=0, options={"start": 0})
        filled = 0
        for action in actions:
            filled += env.step(action).info["fills"]
        fills["sekai"] = filled
        return made - start, time.perf_counter() - made

    def hftbacktest_run(wake: int) -> Callable[[], tuple[float, float]]:
        def run() -> tuple[float, float]:
            start = time.perf_counter()
            bt = hftbacktest_backtest(data, entry_latency=ENTRY, response_latency=RESPONSE)
            made = time.perf_counter()
            drive(bt, schedule, 1, end, wake=wake)
            fills[f"hftbacktest {wake}"] = _filled(bt)
            bt.close()
            return made - start, time.perf_counter() - made

        return run

    sides = {
        "sekai LobsterReplay-v0": sekai_env,
        REPLAY_ORDERS: sekai_replay_orders,
        HFT_AT_ORDERS: hftbacktest_run(0),
        HFT_EVERY_STEP: hftbacktest_run(STEP),
    }
    best = _race(sides, rounds)
    print(f"\n(a) one agent, one window of the day: {n:,} events, {len(actions):,} steps of 1 s")
    print(f"{'':32} {'setup s':>8} {'run s':>8} {'events/s':>12}")
    rates = {name: _row(name, n, *seconds) for name, seconds in best.items()}
    ours = rates["sekai LobsterReplay-v0"]
    for name in (HFT_AT_ORDERS, HFT_EVERY_STEP):
        print(f"sekai / {name}: x{ours / rates[name]:.2f} (target >= 1x)")
    for name in (HFT_AT_ORDERS, HFT_EVERY_STEP):
        ratio = rates[REPLAY_ORDERS] / rates[name]
        print(f"sekai replay_orders / {name}: x{ratio:.2f} (target >= 1x)")
    print(
        f"orders filled: sekai {fills['sekai']}, hftbacktest {fills['hftbacktest 0']} "
        f"and {fills[f'hftbacktest {STEP}']}, sekai replay_orders {fills['replay_orders']}"
    )


def many_windows(
    events: NDArray[Any], schedule: Schedule, rounds: int, sample: int, steps: int
) -> None:
    """(b): 1,024 windows of ``steps`` steps in sekai's native batch against hftbacktest
    once per window."""
    times = events["time"]
    first = int(times[0])
    day_actions = env_actions(schedule, first, STEP)
    last_start = len(day_actions) - steps
    starts = np.arange(WINDOWS) * last_start // WINDOWS
    actions = day_actions[starts[None, :] + np.arange(steps)[:, None]]
    begin = np.searchsorted(times, first + starts * STEP, "right")
    stop = np.searchsorted(times, first + (starts + steps) * STEP, "right")
    n = int((stop - begin).sum())
    options = [{"start": int(s)} for s in starts]
    sampled = np.arange(0, WINDOWS, WINDOWS // sample)
    feeds = _window_feeds(events, begin[sampled].tolist(), stop[sampled].tolist())
    plans = [_window_schedule(schedule, first, int(starts[w]), steps) for w in sampled]
    ends = first + (starts[sampled] + steps) * STEP

    def sekai_batch(**observed: int) -> Callable[[], tuple[float, float]]:
        def run() -> tuple[float, float]:
            start = time.perf_counter()
            kwargs = _env_kwargs(events, steps) | observed
            vec = sekai.make_vec("LobsterReplay-v0", WINDOWS, **kwargs)
            made = time.perf_counter()
            vec.reset(seed=0, options=options)
            for batch in actions:
                vec.step(batch)
            seconds = time.perf_counter() - made
            vec.close()
            return made - start, seconds

        return run

    def hftbacktest_loop(wake: int) -> Callable[[], tuple[float, float]]:
        def run() -> tuple[float, float]:
            setup = seconds = 0.0
            for feed, plan, end in zip(feeds, plans, ends.tolist(), strict=True):
                start = time.perf_counter()
                bt = hftbacktest_backtest(feed, entry_latency=ENTRY, response_latency=RESPONSE)
                made = time.perf_counter()
                drive(bt, plan, 1, end, wake=wake)
                bt.close()
                setup, seconds = setup + made - start, seconds + time.perf_counter() - made
            return setup, seconds

        return run

    ours = {SEKAI_DEFAULT: sekai_batch(), SEKAI_TOUCH: sekai_batch(book_levels=1, last_trades=0)}
    sides = {
        **ours,
        HFT_AT_ORDERS: hftbacktest_loop(0),
        HFT_EVERY_STEP: hftbacktest_loop(STEP),
    }
    best = _race(sides, rounds)
    n_sampled = int((stop - begin)[sampled].sum())
    print(
        f"\n(b) {WINDOWS:,} windows of {steps} steps of 1 s: {n:,} window events; "
        f"hftbacktest once per window, timed on {len(sampled)} of the windows "
        f"({n_sampled:,} events)"
    )
    print(f"{'':32} {'setup s':>8} {'run s':>8} {'events/s':>12}")
    rates = {name: _row(name, n, *best[name]) for name in ours}
    for name in (HFT_AT_ORDERS, HFT_EVERY_STEP):
        theirs = _row(name, n_sampled, *best[name])
        for mine, rate in rates.items():
            print(f"{mine} / {name} loop: x{rate / theirs:.1f} (target >= 20x)")


def book_alone(events: NDArray[Any], data: NDArray[Any], rounds: int) -> None:
    """(c): the book, no agent, on the day's event stream."""
    n = len(events)
    opening = np.zeros((2, N_TICKS), np.int64)
    local_only = data.copy()
    local_only["ev"] &= ~np.uint64(hbt.EXCH_EVENT)
    end = int(data["exch_ts"][-1]) + FEED + 1

    def order_book() -> tuple[float, float]:
        start = time.perf_counter()
        book = OrderBook(N_TICKS)
        for event in events.tolist():
            apply_event(book, event)
        return 0.0, time.perf_counter() - start

    def compiled() -> tuple[float, float]:
        start = time.perf_counter()
        replay_levels(events, opening, n_ticks=N_TICKS)
        return 0.0, time.perf_counter() - start

    def market_depth(feed: NDArray[Any]) -> Callable[[], tuple[float, float]]:
        def run() -> tuple[float, float]:
            start = time.perf_counter()
            bt = hftbacktest_backtest(feed, entry_latency=ENTRY, response_latency=RESPONSE)
            made = time.perf_counter()
            bt.elapse(1)  # its clock starts at the first row
            bt.elapse(end - bt.current_timestamp)
            bt.close()
            return made - start, time.perf_counter() - made

        return run

    sides = {
        "sekai OrderBook": order_book,
        "sekai compiled replay": compiled,
        "hftbacktest, both books": market_depth(data),
        "hftbacktest, local book": market_depth(local_only),
    }
    best = _race(sides, rounds)
    print(f"\n(c) the book alone on the day's {n:,} events (no agent)")
    print(f"{'':32} {'setup s':>8} {'run s':>8} {'events/s':>12}")
    rates = {name: _row(name, n, *seconds) for name, seconds in best.items()}
    theirs = rates["hftbacktest, both books"]
    for name in ("sekai OrderBook", "sekai compiled replay", "hftbacktest, local book"):
        print(f"{name} / hftbacktest, both books: x{rates[name] / theirs:.2f}")


def _window_feeds(events: NDArray[Any], begins: list[int], stops: list[int]) -> list[NDArray[Any]]:
    """hftbacktest's feed for each window of the events ``begins[i]`` to ``stops[i]``
    (ascending): the orders resting before it, as adds at the time of the event before it
    (each level's queue in its order), then the window's events."""
    book = OrderBook(N_TICKS)
    listed = events.tolist()
    feeds, done = [], 0
    for begin, stop in zip(begins, stops, strict=True):
        for event in listed[done:begin]:
            apply_event(book, event)
        done = begin
        at = int(events["time"][begin - 1])
        rows = [
            (at, ADD, order.order_id, side, order.price * TICK, order.size, 0)
            for side in (BUY, SELL)
            for tick, _ in book.depth(side, N_TICKS)
            for order in book.queue(side, tick)
        ]
        resting = np.array(rows, events.dtype)
        window = np.concatenate((resting, events[begin:stop]))
        feeds.append(to_hftbacktest(window, FEED, sweeps_first=True))
    return feeds


def _window_schedule(schedule: Schedule, first: int, start: int, steps: int) -> Schedule:
    """The instructions of ``schedule`` in the window of ``steps`` steps from step
    ``start``, those of orders sent in it (a cancel of an earlier order is dropped)."""
    step = (schedule.time - first) // STEP
    inside = (step >= start) & (step < start + steps)
    sent = set(schedule.order[inside & (schedule.what == NEW)].tolist())
    keep = inside & np.isin(schedule.order, list(sent))
    return Schedule(*(getattr(schedule, f)[keep] for f in Schedule.__dataclass_fields__))


def _env_kwargs(events: NDArray[Any], steps: int) -> dict[str, Any]:
    return dict(
        messages=events,
        step_seconds=STEP / 1e9,
        episode_steps=steps,
        entry_latency=ENTRY / 1e9,
        data_latency=FEED / 1e9,
        order_size=1,
        max_inventory=10**6,
    )


def _env(events: NDArray[Any], steps: int) -> LobsterReplayEnv:
    return LobsterReplayEnv(**_env_kwargs(events, steps))


def _filled(bt: Any) -> int:
    """How many of the backtest's orders were filled."""
    values = bt.orders(0).values()
    filled = 0
    while (order := values.next()) is not None:
        filled += order.status == hbt.FILLED
    return filled


def _warm_up() -> None:
    """Compile both sides' kernels on a small day, outside the timings."""
    events = synthetic_day(1, n_events=500)
    terms = make_terms(events, 1)
    schedule = random_schedule(
        events, terms, np.random.default_rng(1), step=STEP, entry_latency=ENTRY, feed_latency=FEED
    )
    bt = hftbacktest_backtest(
        to_hftbacktest(events, FEED), entry_latency=ENTRY, response_latency=RESPONSE
    )
    drive(bt, schedule, 1, int(events["time"][-1]), wake=STEP)
    _filled(bt)
    bt.elapse(1)
    bt.close()
    replay_levels(events, np.zeros((2, N_TICKS), np.int64), n_ticks=N_TICKS)
    env = _env(events, 10)
    env.reset(seed=0)
    env.step(np.zeros(3, np.int64))
    vec = sekai.make_vec("LobsterReplay-v0", 4, **_env_kwargs(events, 10))
    vec.reset(seed=0)
    vec.step(np.zeros((4, 3), np.int64))
    vec.close()


def _race(
    sides: dict[str, Callable[[], tuple[float, float]]], rounds: int
) -> dict[str, tuple[float, float]]:
    """Each side's (setup, run) seconds of its fastest round in total, the sides taking turns."""
    best: dict[str, tuple[float, float]] = {}
    for _ in range(rounds):
        for name, side in sides.items():
            seconds = side()
            if name not in best or sum(seconds) < sum(best[name]):
                best[name] = seconds
    return best


def _row(name: str, events: int, setup: float, run: float) -> float:
    """Print a side's line; its events per second over setup and run."""
    rate = events / (setup + run)
    print(f"{name:32} {setup:>8.3f} {run:>8.3f} {rate:>12,.0f}")
    return rate


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
