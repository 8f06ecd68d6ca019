"""Replayed LOBSTER messages per second through the replay env's windows (LobsterReplay-v0).

    python benchmarks/replay_throughput.py [--quick]

The day: a long recording of the Cont-Stoikov-Talreja flow as LOBSTER messages
(``lobster.record_flow``). Figures:

1. The day replayed once (``_replay_kernel.replay_record``, what every window then indexes):
   messages per second, alone and reconciled with the day's own 10-level orderbook rows (every
   row checked, none needing a correction), and ``lobster.replay`` (the OrderBook engine) on
   the same day for the ratio.
2. Windows: messages per second that the windows step through (each window's agent holds a
   bid and an ask in the real queues; random allowed actions, chosen before timing), for 1 and
   for 1,024 windows, both for the compiled call alone (``step_windows``) and for the whole
   step of the model (decoding the actions against the masks, the call, marking to the mid)
   plus an observation. A step spans ``--span`` seconds of exchange time; an episode half a
   day, the windows starting at steps 0, 1, 2, ... (wrapping round).
3. The same over a set of ``DAYS`` days (the flow with seeds 1, 2, ..., each a ``DAYS``-th of
   the long day, so the set has about as many messages): window w in day ``w % DAYS``, every
   window of every day stepped by one compiled call.
4. Impact: messages per second through ``make_vec("LobsterReplay-v0", 1024, impact=...)``
   (the whole vector step, random allowed actions: market orders two steps in three), with
   impact off and on over the long day, and their ratio. The two runs alternate, so that a
   change of load on a shared machine touches both.

Each figure is the best of a few rounds, in wall time (the window kernel runs on every core);
the machine's load average is printed beside them: on a shared machine quote ratios.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import sekai
from sekai.envs.finance.lobster_replay import LobsterReplayEnv
from sekai.finance import BUY, SELL, ContStoikovTalreja, OrderBook, simulate_flow
from sekai.finance.lob._replay_kernel import replay_levels, replay_record
from sekai.finance.lob._replay_windows import step_windows
from sekai.finance.lob.lobster import orderbook_dtype, record_flow, replay, to_events
from sekai.finance.lob.replay_model import ReplayModel

N_TICKS = 4000
ROW_LEVELS = 10
DAYS = 4


def day_rates(messages: np.ndarray, rounds: int) -> tuple[float, float, float]:
    """Messages per second of the one-off compiled replay of the day's order events (their
    checks and conversion to replay messages included), of the same reconciled with
    ``ROW_LEVELS``-level orderbook rows, and of ``lobster.replay``."""
    opening = np.zeros((2, N_TICKS), np.int64)
    events = to_events(messages)
    rows = _own_rows(events, opening)
    replay_record(events[:100], opening, n_ticks=N_TICKS, levels=5)  # compile
    replay_record(events[:100], opening, n_ticks=N_TICKS, levels=5, orderbook=rows[:100])
    compiled = reconciled = engine = 0.0
    for _ in range(rounds):
        start = time.perf_counter()
        replay_record(events, opening, n_ticks=N_TICKS, levels=5)
        compiled = max(compiled, len(messages) / (time.perf_counter() - start))
        start = time.perf_counter()
        replay_record(events, opening, n_ticks=N_TICKS, levels=5, orderbook=rows)
        reconciled = max(reconciled, len(messages) / (time.perf_counter() - start))
        start = time.perf_counter()
        replay(OrderBook(N_TICKS), messages)
        engine = max(engine, len(messages) / (time.perf_counter() - start))
    return compiled, reconciled, engine


def _own_rows(events: np.ndarray, opening: np.ndarray) -> np.ndarray:
    """The day's own orderbook rows, ``ROW_LEVELS`` levels: the reconciled replay checks
    every row and corrects none, its cost on a file that the messages explain."""
    top, _, _ = replay_levels(events, opening, n_ticks=N_TICKS, levels=ROW_LEVELS)
    rows = np.zeros(len(events), orderbook_dtype(ROW_LEVELS))
    for side, name in ((BUY, "bid"), (SELL, "ask")):
        lots = top[:, side, :, 1]
        rows[f"{name}_size"] = lots
        rows[f"{name}_price"] = np.where(lots > 0, top[:, side, :, 0] * 100, 0)
    return rows


def window_rates(
    env: LobsterReplayEnv, windows: int, steps: int, rounds: int
) -> tuple[float, float, int]:
    """Messages per second through ``windows`` windows (window w in day ``w % days``):
    the compiled call alone and the model's whole step plus an observation; and the messages
    one round stepped through."""
    model = ReplayModel(env.terms, windows)
    rng = np.random.default_rng(0)
    n_days, last = len(env.terms.days), env.terms.last_starts
    starts = [
        {"day": w % n_days, "start": w // n_days % int(last[w % n_days] + 1)}
        for w in range(windows)
    ]
    best_kernel = best_step = 0.0
    messages = 0
    for _ in range(rounds + 1):  # the first round compiles and warms up
        model.reset(np.arange(windows), starts, rng)
        kernel_seconds = step_seconds = 0.0
        moved = 0
        for _ in range(steps):
            actions = np.empty((windows, 1, 3), np.int64)
            for entry, mask in enumerate(model.masks(0)):
                actions[:, 0, entry] = np.argmax(rng.random(mask.shape) * mask, axis=1)
            before = model.cursor.copy()
            start = time.perf_counter()
            model.step(actions, ["agent"], strict=True)
            model.observe()
            step_seconds += time.perf_counter() - start
            moved += int((model.cursor - before).sum())
        # the compiled call alone, over the same windows and spans, keeping the orders
        model.reset(np.arange(windows), starts, rng)
        _rest_orders(model)
        terms = (1, 10, 0.0, 0.0)  # order size, inventory cap, maker and taker fees
        days = model.terms.days
        for _ in range(steps):
            stop = days.after(model.day, model.now() + model.terms.step_seconds)
            keep = np.full((windows, 1), -1, np.int64)
            entry = model.cursor[:, None].copy()
            start = time.perf_counter()
            step_windows(model._tape, stop, (entry, keep, keep, keep, keep), terms, model.state)
            kernel_seconds += time.perf_counter() - start
            model.steps += 1
        best_kernel = max(best_kernel, moved / kernel_seconds)
        best_step = max(best_step, moved / step_seconds)
        messages = moved
    return best_kernel, best_step, messages


def vec_rates(
    messages: np.ndarray, steps: int, span: float, rounds: int, windows: int = 1024
) -> dict[bool, float]:
    """Messages per second through ``make_vec("LobsterReplay-v0", windows, impact=...)``
    over ``steps`` steps, impact off and on (the best of ``rounds`` alternating rounds)."""
    vecs = {
        impact: sekai.make_vec(
            "LobsterReplay-v0",
            windows,
            messages=messages,
            n_ticks=N_TICKS,
            step_seconds=span,
            episode_steps=steps + 1,  # no window resets inside the timed steps
            book_levels=5,
            impact=impact,
        )
        for impact in (False, True)
    }
    best = dict.fromkeys(vecs, 0.0)
    last = int(vecs[False].template.terms.last_starts[0])
    options = [{"start": w % (last + 1)} for w in range(windows)]
    for _ in range(rounds + 1):  # the first round compiles and warms up
        for impact, vec in vecs.items():
            rng = np.random.default_rng(0)
            vec.reset(seed=0, options=options)
            model = vec._model.model
            seconds, moved = 0.0, 0
            for _ in range(steps):
                actions = np.stack(
                    [np.argmax(rng.random(m.shape) * m, axis=1) for m in model.masks(0)], 1
                )
                before = model.cursor.copy()
                start = time.perf_counter()
                vec.step(actions)
                seconds += time.perf_counter() - start
                moved += int((model.cursor - before).sum())
            best[impact] = max(best[impact], moved / seconds)
    for vec in vecs.values():
        vec.close()
    return best


def _rest_orders(model: ReplayModel) -> None:
    """Every window's agent joins the best bid and the best ask, so each message is checked
    against two resting orders."""
    top = model.terms.days.top[model.cursor]
    model.orders[:, 0, :, 0] = top[:, :, 0, 0]
    model.orders[:, 0, :, 1] = 1
    model.orders[:, 0, :, 2] = top[:, :, 0, 1]
    model.orders[:, 0, :, 3] = model.cursor[:, None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller runs, for a smoke test")
    parser.add_argument("--span", type=float, default=60.0, help="seconds per step")
    args = parser.parse_args()
    report(args.quick, args.span)


def report(quick: bool, span: float) -> None:
    """Measure and print every figure above (``lob_throughput.py`` prints them too)."""
    rounds = 2 if quick else 4
    hours = 1 if quick else 4
    flow = simulate_flow(ContStoikovTalreja(), 3600.0 * hours, n_ticks=N_TICKS, seed=0)
    messages = record_flow(flow, n_ticks=N_TICKS)
    print(f"load average {os.getloadavg()} on {os.cpu_count()} cores")
    compiled, reconciled, engine = day_rates(messages, rounds)
    print(f"day: {len(messages):,} messages over {messages['time'][-1]:.0f} s")
    print(f"  replayed once, compiled:  {compiled:>12,.0f} messages/s")
    print(
        f"  reconciled, {ROW_LEVELS} levels:   {reconciled:>12,.0f} messages/s  "
        f"(x{reconciled / compiled:.2f} of unreconciled)"
    )
    print(f"  lobster.replay:           {engine:>12,.0f} messages/s  (x{compiled / engine:.1f})")
    steps = int(messages["time"][-1] // span) // 2
    env = LobsterReplayEnv(
        messages, n_ticks=N_TICKS, step_seconds=span, episode_steps=steps, book_levels=5
    )
    print(f"windows of the day: {steps} steps of {span:g} s each, starting at steps 0, 1, ...")
    _window_table(env, steps, rounds)
    impact_steps = min(steps - 1, 20)
    rates = vec_rates(messages, impact_steps, span, rounds)
    print(
        f"make_vec(..., 1024), {impact_steps} steps: impact off {rates[False]:>12,.0f} "
        f"messages/s, on {rates[True]:>12,.0f} (x{rates[True] / rates[False]:.2f})"
    )
    days = [
        record_flow(
            simulate_flow(ContStoikovTalreja(), 3600.0 * hours / DAYS, n_ticks=N_TICKS, seed=seed),
            n_ticks=N_TICKS,
        )
        for seed in range(1, DAYS + 1)
    ]
    steps = int(min(day["time"][-1] for day in days) // span) // 2
    env = LobsterReplayEnv(
        days, n_ticks=N_TICKS, step_seconds=span, episode_steps=steps, book_levels=5
    )
    print(
        f"windows of {DAYS} days ({sum(map(len, days)):,} messages), window w in day w % "
        f"{DAYS}: {steps} steps of {span:g} s each"
    )
    _window_table(env, steps, rounds)
    print(f"load average {os.getloadavg()}")


def _window_table(env: LobsterReplayEnv, steps: int, rounds: int) -> None:
    print(f"{'windows':>8} {'messages':>12} {'kernel msg/s':>14} {'step+obs msg/s':>16}")
    figures = {}
    for windows in (1, 1024):
        kernel, step, moved = window_rates(env, windows, steps, rounds)
        figures[windows] = kernel
        print(f"{windows:>8,} {moved:>12,} {kernel:>14,.0f} {step:>16,.0f}")
    print(f"1,024 windows / 1 window (kernel): x{figures[1024] / figures[1]:.1f}")


if __name__ == "__main__":
    main()
