"""Limit order book throughput: the engine, the env and the native vector env, in one run.

    python benchmarks/lob_throughput.py [--quick]

1. Engine: book events per second (adds, cancels, market orders) replaying a LOBSTER message
   stream of the Cont-Stoikov-Talreja flow through ``sekai.finance.lobster.replay``, side by side
   with the simplest correct pure-Python book (the floor) on the same stream; then the same for
   synthetic streams holding 10 to 10,000 resting orders.
2. Env: LimitOrderBookMarket steps per second, 3 traders, intervals 1, 2 and 5 s; and the same
   market as a one-book LimitOrderBookVecEnv, i.e. what the single env would gain from the
   compiled kernels.
3. Native: LimitOrderBookVecEnv book events per second summed over 1,024 books, with the live
   flow and with a given (replayed) flow, as a ratio to the engine's rate measured in the same
   rounds (engine, live, replay, engine, ...), by wall and by CPU time; and what compiling the
   numba kernels costs a fresh process, with an empty cache and with the cache filled.
Each figure is the best of a few rounds, so a burst of load from other processes counts less.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from sekai.envs.finance import LimitOrderBookMarket
from sekai.envs.finance.limit_order_book_vec import LimitOrderBookVecEnv
from sekai.finance import BUY, SELL, ContStoikovTalreja, OrderBook, simulate_flow
from sekai.finance.lobster import DELETE, EXECUTE, MESSAGE_DTYPE, SUBMIT, record_flow, replay

N_TICKS = 4000


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


def best_rate(run: Callable[[], int], rounds: int) -> float:
    """The best of ``rounds`` runs of events per second; ``run`` returns its event count."""
    return best_rates({"run": run}, rounds)["run"][0]


def best_rates(runs: dict[str, Callable[[], int]], rounds: int) -> dict[str, tuple[float, float]]:
    """Each run's best events per second by wall and by CPU time over ``rounds`` rounds, the
    runs interleaved within each round so that they meet the same load."""
    best = dict.fromkeys(runs, (0.0, 0.0))
    for _ in range(rounds):
        for name, run in runs.items():
            wall, cpu = time.perf_counter(), time.process_time()
            events = run()
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best[name] = (max(best[name][0], events / wall), max(best[name][1], events / cpu))
    return best


def synthetic_stream(depth: int, events: int, seed: int) -> np.ndarray:
    """Messages that rest ``depth`` one-lot orders around a fixed mid, then keep that many
    resting: one-lot market orders (10%), else an add a power-law distance behind the best
    while the book holds fewer than ``depth`` orders and a cancel of a random resting order
    otherwise. A book follows along to know which orders still rest."""
    rng = np.random.default_rng(seed)
    mid = N_TICKS // 2
    width = max(5, min(depth // 4, N_TICKS // 2 - 10))
    book = OrderBook(N_TICKS)
    rows: list[tuple[float, int, int, int, int, int]] = []
    live: list[int] = []
    while len(rows) < depth + events:
        if len(rows) >= depth and rng.random() < 0.1:
            side = int(rng.integers(2))
            book.market(side, 1)
            rows.append((0.0, EXECUTE, 0, 1, 0, -1 if side == BUY else 1))
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


def engine_rates(messages: np.ndarray, rounds: int) -> tuple[float, float, int]:
    """(engine, floor) events per second replaying ``messages`` into a fresh book each round,
    and how many orders rest at the end."""

    books = [OrderBook(N_TICKS) for _ in range(rounds)]  # built outside the timed runs

    def engine() -> int:
        replay(books.pop(), messages)
        return len(messages)

    def floor() -> int:
        FloorBook().replay(messages)
        return len(messages)

    engine_book, floor_book = OrderBook(N_TICKS), FloorBook()
    replay(engine_book, messages)
    floor_book.replay(messages)
    for side in (BUY, SELL):  # the floor is a check too: both end in the same book
        floor_levels = sorted(
            ((p, sum(o[1] for o in q)) for p, q in floor_book.levels[side].items()),
            reverse=side == BUY,
        )
        assert engine_book.depth(side, N_TICKS) == floor_levels
    return best_rate(engine, rounds), best_rate(floor, rounds), len(engine_book)


def env_steps_per_second(env: Any, sessions: int) -> tuple[float, float]:
    """Steps/s and flow events/s of ``env`` (3 traders, intervals 1, 2, 5) with masked random
    actions: a LimitOrderBookMarket, or a one-book LimitOrderBookVecEnv (the same market run
    by the compiled kernels) whose actions and masks carry a leading axis of one."""
    one_book = isinstance(env, LimitOrderBookVecEnv)
    for agent in env.possible_agents:
        env.action_space(agent).seed(0)

    def act(agent: str) -> np.ndarray:
        mask = env.action_mask(agent)
        if one_book:
            return env.action_space(agent).sample(mask=tuple(m[0] for m in mask))[None]
        return env.action_space(agent).sample(mask=mask)

    steps, events, elapsed = 0, 0, 0.0
    for seed in range(sessions):
        result = env.reset(seed=seed)
        while not result.all_done:
            actions = {a: act(a) for a in result.observations}
            start = time.perf_counter()
            result = env.step(actions)
            elapsed += time.perf_counter() - start
            steps += 1
        events += env.flow_events
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
print(time.perf_counter() - start)
"""


def first_session_seconds() -> tuple[float, float]:
    """Seconds a fresh process takes to import the vector env and run a tiny session with each
    kind of flow: with an empty numba cache (it compiles the kernels) and then with the cache
    it filled (it loads them)."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        seconds = [
            float(
                subprocess.run(
                    [sys.executable, "-c", COMPILE_PROBE],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            for _ in range(2)
        ]
    return seconds[0], seconds[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs, for a smoke test")
    args = parser.parse_args()
    rounds = 2 if args.quick else 5
    duration = 120.0 if args.quick else 600.0

    flow = simulate_flow(ContStoikovTalreja(), duration, n_ticks=N_TICKS, seed=0)
    messages = record_flow(flow, n_ticks=N_TICKS)
    engine, floor, resting = engine_rates(messages, rounds)
    print(f"engine, CST flow ({len(messages):,} messages, {resting} resting at the end)")
    print(f"{'book':>28} {'events/s':>12}")
    print(f"{'sekai OrderBook':>28} {engine:>12,.0f}")
    print(f"{'pure-Python floor':>28} {floor:>12,.0f}")
    print(f"{'ratio':>28} {engine / floor:>12.1f}x")

    print("\nengine by book depth (synthetic stream)")
    header = f"{'target depth':>13} {'at end':>7} {'sekai events/s':>15} {'floor events/s':>15}"
    print(f"{header} {'ratio':>7}")
    for depth in (10, 100, 1_000, 10_000):
        stream = synthetic_stream(depth, 20_000 if args.quick else 100_000, seed=depth)
        sekai_rate, floor_rate, resting = engine_rates(stream, rounds)
        print(
            f"{depth:>13,} {resting:>7,} {sekai_rate:>15,.0f} {floor_rate:>15,.0f} "
            f"{sekai_rate / floor_rate:>6.1f}x"
        )

    market = {"decision_intervals": [1.0, 2.0, 5.0], "session_length": 60.0}
    print("\nLimitOrderBookMarket, 3 traders, intervals 1, 2, 5 s, masked random actions")
    print(f"{'':>28} {'steps/s':>12} {'flow events/s':>14}")
    for label, env in (
        ("LimitOrderBookMarket", LimitOrderBookMarket(3, **market)),
        ("the same, compiled (1 book)", LimitOrderBookVecEnv(1, 3, **market)),
    ):
        steps, env_events = env_steps_per_second(env, 1 if args.quick else 3)
        print(f"{label:>28} {steps:>12,.0f} {env_events:>14,.0f}")

    num_envs = 1024
    session = 10.0 if args.quick else 30.0
    given = simulate_flow(ContStoikovTalreja(), session, n_ticks=2000, seed=1)
    engine_book = [OrderBook(N_TICKS)]

    def engine_run() -> int:
        replay(engine_book[0], messages)
        engine_book[0] = OrderBook(N_TICKS)  # the next round's book, built outside its timing
        return len(messages)

    rates = best_rates(
        {
            "engine": engine_run,
            "live": native_run(num_envs, None, session),
            "replay": native_run(num_envs, given, session),
        },
        rounds,
    )
    engine_wall, engine_cpu = rates["engine"]
    print(f"\nLimitOrderBookVecEnv, {num_envs} books, {session:.0f} s sessions")
    print(f"{'flow':>28} {'events/s':>12} {'x engine':>9} {'CPU events/s':>13} {'x engine':>9}")
    print(f"{'sekai OrderBook (engine)':>28} {engine_wall:>12,.0f} {'':>9} {engine_cpu:>13,.0f}")
    for name, label in (("live", "live CST flow"), ("replay", "given flow (replay)")):
        wall, cpu = rates[name]
        print(
            f"{label:>28} {wall:>12,.0f} {wall / engine_wall:>8.1f}x {cpu:>13,.0f} "
            f"{cpu / engine_cpu:>8.1f}x"
        )
    cold, warm = first_session_seconds()
    print("\nfresh process: import, compile or load the kernels, a tiny session of each flow")
    print(f"{'empty numba cache':>28} {cold:>11.2f}s")
    print(f"{'cache filled':>28} {warm:>11.2f}s")
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
