"""Limit order book throughput: the engine, the env and the native vector env, in one run.

    python benchmarks/lob_throughput.py [--quick]

with hftbacktest beside our engine (a benchmark-only install, never a sekai dependency; it
requires numpy below 2.3 and brings numba, polars and holoviews, so it goes in a throw-away
overlay of the workspace venv, not into it):

    uv run --with-requirements benchmarks/requirements.txt python benchmarks/lob_throughput.py

1. Engine: book events per second (adds, cancels, market orders) replaying a LOBSTER message
   stream of the Cont-Stoikov-Talreja flow through ``sekai.finance.lobster.replay``, side by side
   with hftbacktest and with the simplest correct pure-Python book (the floor) on the same
   stream; then the same for synthetic streams holding 10 to 10,000 resting orders. Books take
   turns round by round; every book must end each round in the same depth as ours.
2. Env: LimitOrderBookMarket steps per second, 3 traders, intervals 1, 2 and 5 s; and the
   one-book LimitOrderBookVecEnv it drives (the single env is the engine's one-book case: the
   gap is its unwrapping of the book axis).
3. Native: LimitOrderBookVecEnv book events per second summed over 1,024 books, with the live
   flow and with a given (replayed) flow, each as a ratio to one book doing the same in the
   same rounds: the engine replaying the stream, and ``simulate_flow`` (the live flow sampled
   in Python and matched on an OrderBook); then live books against the engine's replay; and
   the seconds a fresh process pays to import the vector env and compile its numba kernels
   (empty cache) or load them (cache filled).
4. Replay: a LOBSTER day replayed once (compiled, and reconciled with its rows) and the replay
   env's windows stepped over it, in replayed messages per second for 1 and 1,024 windows
   (``benchmarks/replay_throughput.py`` alone prints the same).
Each figure is the best of a few rounds, so a burst of load from other processes counts less,
timed in CPU time of this process (every book and env here runs on one thread), which other
processes on a shared machine disturb less than wall time.

hftbacktest (2.4.4) takes the stream as market-by-order (L3) events, converted once, untimed:
a submission is an add, a delete a cancel, and an execution of a resting order is a fill
followed by a cancel (filled whole) or a modify to the size left, as market-by-order feeds
carry them. It replays them with the L3 FIFO queue model and the no-partial-fill
exchange over either of its depth books (hash map, or a vector over a range of ticks), every
event both on the exchange side (depth and FIFO queues) and on the local side (depth). One
``elapse`` call consumes the whole stream; its rate counts our LOBSTER messages, the same
count as ours. Like our replay, it executes the very order each execution names.
Its Python property ``best_bid_qty`` of the vector depth returns the best bid price (a binding
slip in 2.4.4), so the check reads quantities tick by tick.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from replay_throughput import report as replay_report

from sekai.envs.finance import LimitOrderBookMarket
from sekai.envs.finance.limit_order_book_vec import LimitOrderBookVecEnv
from sekai.finance import BUY, SELL, ContStoikovTalreja, OrderBook, simulate_flow
from sekai.finance.lob.lobster import DELETE, EXECUTE, MESSAGE_DTYPE, SUBMIT, record_flow, replay

try:
    import hftbacktest as hft
except ImportError:  # the engine tables then say it is absent
    hft = None

N_TICKS = 4000
SEKAI = "sekai OrderBook"

Depth = tuple[list[tuple[int, int]], list[tuple[int, int]]]
"""(bids, asks) as (price in ticks, volume) levels, best first: how a book ended."""


class FloorBook:
    """The simplest correct pure-Python book: a dict of FIFO lists per side, best by max/min."""

    def __init__(self) -> None:
        self.levels: tuple[dict[int, list[list[int]]], dict[int, list[list[int]]]] = ({}, {})
        self.where: dict[int, tuple[int, int]] = {}  # order id -> (side, price)

    def add(self, side: int, price: int, size: int, order_id: int) -> None:
        self.levels[side].setdefault(price, []).append([order_id, size])
        self.where[order_id] = (side, price)

    def cancel(self, order_id: int) -> None:
        side, price = self.where.pop(order_id)
        queue = self.levels[side][price]
        queue[:] = [o for o in queue if o[0] != order_id]
        if not queue:
            del self.levels[side][price]

    def market(self, side: int, size: int) -> None:
        book = self.levels[1 - side]
        while size and book:
            price = min(book) if side == BUY else max(book)
            queue = book[price]
            order = queue[0]
            fill = min(size, order[1])
            order[1] -= fill
            size -= fill
            if not order[1]:
                queue.pop(0)
                del self.where[order[0]]
                if not queue:
                    del book[price]

    def replay(self, messages: np.ndarray) -> None:
        for _, kind, order_id, size, price, direction in messages.tolist():
            if kind == SUBMIT:
                self.add(BUY if direction == 1 else SELL, price // 100, size, order_id)
            elif kind == DELETE:
                if order_id in self.where:
                    self.cancel(order_id)
            elif kind == EXECUTE:
                self.market(SELL if direction == 1 else BUY, size)

    def depth(self) -> Depth:
        bids, asks = (sorted((p, sum(o[1] for o in q)) for p, q in s.items()) for s in self.levels)
        return bids[::-1], asks


def best_rates(runs: dict[str, Callable[[], int]], rounds: int) -> dict[str, float]:
    """Each run's best events per second over ``rounds`` rounds, the runs taking turns within
    each round so that they meet the same load; ``run`` returns its event count."""
    best = dict.fromkeys(runs, 0.0)
    for _ in range(rounds):
        for name, run in runs.items():
            start = time.process_time()
            events = run()
            best[name] = max(best[name], events / (time.process_time() - start))
    return best


def synthetic_stream(depth: int, events: int, seed: int) -> np.ndarray:
    """Messages that rest ``depth`` one-lot orders around a fixed mid, then keep that many
    resting: one-lot market orders (10%, written as the execution of the order they take),
    else an add a power-law distance behind the best while the book holds fewer than
    ``depth`` orders and a cancel of a random resting order otherwise. A book follows along
    to know which orders still rest."""
    rng = np.random.default_rng(seed)
    mid = N_TICKS // 2
    width = max(5, min(depth // 4, N_TICKS // 2 - 10))
    book = OrderBook(N_TICKS)
    rows: list[tuple[float, int, int, int, int, int]] = []
    live: list[int] = []
    while len(rows) < depth + events:
        if len(rows) >= depth and rng.random() < 0.1:
            side = int(rng.integers(2))
            tape = len(book.trades)
            book.market(side, 1)
            for trade in book.trades[tape:]:  # the order it took, as LOBSTER names it
                maker = 1 if side == SELL else -1
                rows.append((0.0, EXECUTE, trade.maker_id, 1, trade.price * 100, maker))
        elif len(book) < depth:
            side = int(rng.integers(2))
            distance = min(int(rng.pareto(1.0)) + 1, width)
            price = mid - distance if side == BUY else mid + distance - 1
            order_id = book.add(side, price, 1)
            live.append(order_id)
            rows.append((0.0, SUBMIT, order_id, 1, price * 100, 1 if side == BUY else -1))
        else:
            k = int(rng.integers(len(live)))
            order_id = live[k]
            live[k] = live[-1]
            live.pop()
            if order_id in book:  # else a market order took it: try again
                side = book.order(order_id).side
                book.cancel(order_id)
                rows.append((0.0, DELETE, order_id, 1, 0, 1 if side == BUY else -1))
    return np.array(rows, MESSAGE_DTYPE)


def hft_events(messages: np.ndarray) -> np.ndarray:
    """``messages`` as hftbacktest market-by-order events (see the module docstring), one
    nanosecond apart, each for both the exchange and the local side."""
    both = hft.EXCH_EVENT | hft.LOCAL_EVENT
    resting: dict[int, list[int]] = {}  # order id -> [size, price in ticks]
    rows: list[tuple[int, int, int, int]] = []  # (flags, price in ticks, size, order id)
    for _, kind, order_id, size, price, direction in messages.tolist():
        flags = both | (hft.BUY_EVENT if direction == 1 else hft.SELL_EVENT)
        if kind == SUBMIT:
            resting[order_id] = [size, price // 100]
            rows.append((flags | hft.ADD_ORDER_EVENT, price // 100, size, order_id))
        elif kind == DELETE:
            rows.append((flags | hft.CANCEL_ORDER_EVENT, resting.pop(order_id)[1], 0, order_id))
        elif kind == EXECUTE:
            left, tick = resting[order_id]
            rows.append((flags | hft.FILL_EVENT, tick, size, order_id))
            if left > size:
                resting[order_id][0] -= size
                rows.append((flags | hft.MODIFY_ORDER_EVENT, tick, left - size, order_id))
            else:
                del resting[order_id]
                rows.append((flags | hft.CANCEL_ORDER_EVENT, tick, 0, order_id))
        else:
            raise ValueError(f"message type {kind}: the streams here hold types 1, 3 and 4 only")
    events = np.zeros(len(rows), hft.event_dtype)
    for name, column in zip(("ev", "px", "qty", "order_id"), zip(*rows, strict=True), strict=True):
        events[name] = column
    events["exch_ts"] = events["local_ts"] = np.arange(1, len(rows) + 1)
    return events


def sekai_replay(messages: np.ndarray) -> tuple[float, Depth]:
    """Seconds ``replay`` takes to drive a fresh OrderBook with ``messages``, and its end."""
    book = OrderBook(N_TICKS)
    start = time.process_time()
    replay(book, messages)
    elapsed = time.process_time() - start
    return elapsed, (book.depth(BUY, N_TICKS), book.depth(SELL, N_TICKS))


def floor_replay(messages: np.ndarray) -> tuple[float, Depth]:
    """Seconds the floor takes to replay ``messages``, and its end."""
    book = FloorBook()
    start = time.process_time()
    book.replay(messages)
    elapsed = time.process_time() - start
    return elapsed, book.depth()


def hft_replay(events: np.ndarray, vector_depth: bool) -> tuple[float, Depth]:
    """Seconds a fresh hftbacktest backtest (built untimed) takes to elapse through
    ``events``, and the local depth it ends in."""
    asset = (
        hft.BacktestAsset()
        .data(events)
        .linear_asset(1.0)
        .constant_order_latency(0, 0)
        .l3_fifo_queue_model()
        .no_partial_fill_exchange()
        .tick_size(1.0)
        .lot_size(1.0)
        .parallel_load(False)  # the stream is one array in memory: no loader thread
    )
    if vector_depth:
        backtest = hft.ROIVectorMarketDepthBacktest([asset.roi_lb(0.0).roi_ub(float(N_TICKS))])
    else:
        backtest = hft.HashMapMarketDepthBacktest([asset])
    start = time.process_time()
    status = backtest.elapse(len(events) + 1)
    elapsed = time.process_time() - start
    if status != 1:  # 1: the end of the data
        raise RuntimeError(f"hftbacktest stopped in the stream: elapse returned {status}")
    depth = backtest.depth(0)
    bids = [(p, int(q)) for p in range(N_TICKS - 1, -1, -1) if (q := depth.bid_qty_at_tick(p))]
    asks = [(p, int(q)) for p in range(N_TICKS) if (q := depth.ask_qty_at_tick(p))]
    backtest.close()
    return elapsed, (bids, asks)


def engine_rates(messages: np.ndarray, rounds: int) -> tuple[dict[str, float], int]:
    """Each book's events per second replaying ``messages`` into a fresh book, the books taking
    turns for ``rounds`` rounds after an untimed one (which compiles hftbacktest's jitted
    calls), and how many orders rest at the end. Every round checks that each book ends in
    the same depth as ours."""
    books: dict[str, Callable[[], tuple[float, Depth]]] = {SEKAI: lambda: sekai_replay(messages)}
    if hft is not None:
        events = hft_events(messages)  # converted once, untimed
        books["hftbacktest, hash-map depth"] = lambda: hft_replay(events, vector_depth=False)
        books["hftbacktest, vector depth"] = lambda: hft_replay(events, vector_depth=True)
    books["pure-Python floor"] = lambda: floor_replay(messages)
    best = dict.fromkeys(books, math.inf)
    for timed in [False] + [True] * rounds:
        ends = {name: run() for name, run in books.items()}
        for name, (elapsed, depth) in ends.items():
            assert depth == ends[SEKAI][1], f"{name} ends in another book than ours"
            if timed:
                best[name] = min(best[name], elapsed)
    book = OrderBook(N_TICKS)
    replay(book, messages)
    return {name: len(messages) / seconds for name, seconds in best.items()}, len(book)


def env_steps_per_second(env: Any, sessions: int) -> tuple[float, float]:
    """Steps/s and flow events/s of ``env`` (3 traders, intervals 1, 2, 5) with masked random
    actions: a LimitOrderBookMarket, or a one-book LimitOrderBookVecEnv (the market it drives)
    whose actions and masks carry a leading axis of one."""
    one_book = isinstance(env, LimitOrderBookVecEnv)
    for agent in env.possible_agents:
        env.action_space(agent).seed(0)

    def act(agent: str) -> np.ndarray:
        mask = env.action_mask(agent)
        if one_book:
            return env.action_space(agent).sample(mask=tuple(m[0] for m in mask))[None]
        return env.action_space(agent).sample(mask=mask)

    steps, events, elapsed = 0, 0, 0.0
    # a first untimed session compiles the kernels or loads them from numba's cache (the last
    # table times that)
    for seed in [sessions, *range(sessions)]:
        timed = seed < sessions
        result = env.reset(seed=seed)
        while not result.all_done:
            actions = {a: act(a) for a in result.observations}
            start = time.process_time()
            result = env.step(actions)
            if timed:
                elapsed += time.process_time() - start
                steps += 1
        events += env.flow_events if timed else 0
    return steps / elapsed, events / elapsed


def native_run(num_envs: int, flow: Any, session_length: float) -> Callable[[], int]:
    """A LimitOrderBookVecEnv session (traders keeping still) returning its book events,
    summed over books; the env is built (and its kernels compiled) before it is timed."""
    vec = LimitOrderBookVecEnv(
        num_envs, 3, decision_intervals=[1.0, 2.0, 5.0], session_length=session_length, flow=flow
    )
    keep = np.zeros((num_envs, 3), np.int64)

    def run() -> int:
        result = vec.reset(seed=0)
        while not result.all_done:
            result = vec.step(dict.fromkeys(result.observations, keep))
        return vec.flow_events

    run()
    return run


COMPILE_PROBE = """
import time
start = time.perf_counter()
import numpy as np
from sekai.envs.finance.limit_order_book_vec import LimitOrderBookVecEnv
from sekai.finance import ContStoikovTalreja, simulate_flow
for flow in (None, simulate_flow(ContStoikovTalreja(), 2.0, seed=0)):
    vec = LimitOrderBookVecEnv(2, 3, session_length=2.0, flow=flow)
    result = vec.reset(seed=0)
    while not result.all_done:
        result = vec.step(dict.fromkeys(result.observations, np.zeros((2, 3), np.int64)))
print(time.perf_counter() - start, time.process_time())
"""


def first_session_seconds() -> list[tuple[float, float]]:
    """(wall, CPU) seconds a fresh process takes to import the vector env and run a tiny
    session with each kind of flow: with an empty numba cache (it compiles the kernels), then
    with the cache that run filled (it loads them)."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        runs = [
            subprocess.run(
                [sys.executable, "-c", COMPILE_PROBE],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            for _ in range(2)
        ]
    return [(float(wall), float(cpu)) for wall, cpu in runs]


def print_rates(rates: dict[str, float], indent: int = 0) -> None:
    """One row per book: its events/s and its rate as a multiple of ours; the first row goes
    on the current line, the others ``indent`` spaces in."""
    for row, (name, rate) in enumerate(rates.items()):
        print(f"{' ' * indent * bool(row)}{name:>28} {rate:>12,.0f} {rate / rates[SEKAI]:>7.2f}x")
    if hft is None:
        print(f"{' ' * indent}{'hftbacktest':>28} {'not installed (see the docstring)':>30}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs, for a smoke test")
    args = parser.parse_args()
    rounds = 2 if args.quick else 5
    duration = 120.0 if args.quick else 600.0

    flow = simulate_flow(ContStoikovTalreja(), duration, n_ticks=N_TICKS, seed=0)
    messages = record_flow(flow, n_ticks=N_TICKS)
    rates, resting = engine_rates(messages, rounds)
    print(f"engine, CST flow ({len(messages):,} messages, {resting} resting at the end)")
    print(f"{'book':>28} {'events/s':>12} {'x sekai':>8}")
    print_rates(rates)

    print("\nengine by book depth (synthetic stream)")
    print(f"{'target depth':>13} {'at end':>7} {'book':>28} {'events/s':>12} {'x sekai':>8}")
    for depth in (10, 100, 1_000, 10_000):
        stream = synthetic_stream(depth, 20_000 if args.quick else 100_000, seed=depth)
        rates, resting = engine_rates(stream, rounds)
        print(f"{depth:>13,} {resting:>7,}", end=" ")
        print_rates(rates, indent=22)

    market = {"decision_intervals": [1.0, 2.0, 5.0], "session_length": 60.0}
    print("\nLimitOrderBookMarket, 3 traders, intervals 1, 2, 5 s, masked random actions")
    print(f"{'':>28} {'steps/s':>12} {'flow events/s':>14}")
    for label, env in (
        ("LimitOrderBookMarket", LimitOrderBookMarket(3, **market)),
        ("LimitOrderBookVecEnv, 1 book", LimitOrderBookVecEnv(1, 3, **market)),
    ):
        steps, env_events = env_steps_per_second(env, 1 if args.quick else 3)
        print(f"{label:>28} {steps:>12,.0f} {env_events:>14,.0f}")

    num_envs = 1024
    session = 10.0 if args.quick else 30.0
    given = simulate_flow(ContStoikovTalreja(), session, n_ticks=2000, seed=1)
    books = [OrderBook(N_TICKS) for _ in range(rounds)]  # built outside the timed runs

    def engine_run() -> int:
        replay(books.pop(), messages)
        return len(messages)

    def engine_live_run() -> int:
        return len(simulate_flow(ContStoikovTalreja(), session, n_ticks=2000, seed=2))

    native = best_rates(
        {
            "engine replay": engine_run,
            "engine live": engine_live_run,
            "live": native_run(num_envs, None, session),
            "replay": native_run(num_envs, given, session),
        },
        rounds,
    )
    print(f"\nLimitOrderBookVecEnv, {num_envs} books, {session:.0f} s sessions, against one book")
    print(f"{'flow':>28} {'1 book events/s':>16} {f'{num_envs} books':>12} {'ratio':>7}")
    for name, label, single in (
        ("replay", "given flow (replay)", "engine replay"),
        ("live", "live CST flow", "engine live"),
    ):
        ratio = native[name] / native[single]
        print(f"{label:>28} {native[single]:>16,.0f} {native[name]:>12,.0f} {ratio:>6.1f}x")
    print(
        f"{'live books / engine replay':>28} {'':>16} {'':>12} "
        f"{native['live'] / native['engine replay']:>6.1f}x"
    )
    print(
        "(1 book: the OrderBook engine replaying the LOBSTER stream, and simulate_flow, which\n"
        " samples the live flow in Python and matches it on an OrderBook)"
    )

    (cold_wall, cold_cpu), (warm_wall, warm_cpu) = first_session_seconds()
    print("\nfresh process: import, compile or load the kernels, a tiny session of each flow")
    print(f"{'':>28} {'wall s':>12} {'CPU s':>9}")
    print(f"{'empty numba cache':>28} {cold_wall:>12.2f} {cold_cpu:>9.2f}")
    print(f"{'cache filled':>28} {warm_wall:>12.2f} {warm_cpu:>9.2f}")
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    print("\nLobsterReplay-v0: a replayed day and its windows (benchmarks/replay_throughput.py)")
    replay_report(args.quick, 60.0)


if __name__ == "__main__":
    main()
