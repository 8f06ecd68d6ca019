"""LobsterReplay-v0 on a 20-day Parquet event store: its first reset's time and its memory
(issue 34: "the replay env's first reset under 2 s, resident memory under 2x the largest
day's event table").

    python benchmarks/replay_store.py [--quick] [--hours H] [--days N] [--store PATH]

The store: ``--days`` days (20) of the Cont-Stoikov-Talreja flow recorded as LOBSTER messages
(``lobster.record_flow``, seeds 1, 2, ..., ``--hours`` hours each from midnight, about 88,000
events an hour), dated one a day from 2024-01-02 and written with ``store.write_events``. It
is kept in ``--store`` (by default a folder of the temporary directory named after its size)
and reused by later runs of the same size.

Each measurement runs in a fresh process, so that its memory is its own. The process first
imports everything and warms up on a tiny store (numba's compiled code, pyarrow and the
vector env's thread pool are then in the baseline), then reads its resident memory (VmRSS
of /proc/self/status) as the baseline. Figures:

1. ``stored``: ``LobsterReplayEnv(store, symbol=, days=(first, last))``: construction (reads
   the files' statistics and replays day 0) and the first ``reset()`` (a day drawn at random:
   read and replayed) timed apart; the growth of VmRSS over the baseline after the first
   reset and, at its highest, over 50 resets to random days (the tape holds one day: the
   growth must stay bounded); the peak (VmHWM) over the baseline; the days on the tape.
2. ``eager``: the env given the same days as a list of event arrays (read from the store
   inside the measurement, so the growth includes them, as a user holding them pays them).
3. ``vec``: ``make_vec("LobsterReplay-v0", 64, messages=store, symbol=...)``, its reset and
   100 steps of random actions: memory and the days on the tape (windows of many days keep
   many days: the tape then joins them into one copy).

Growths are given in MB and as a multiple of the largest day's event table
(``events.nbytes``, 35 bytes an event). A measurement whose estimated memory (from the
``stored`` figures) exceeds half of the machine's available memory is skipped, and says so.
The ``stored`` process also prints what the replayed day holds, in bytes per event by array
(arrays that are views count their base once, under the first name that holds it).
The last lines hold the ``stored`` figures to issue 34's bound, ``BOUND`` (2) times the
largest day's event table: the resident day's live arrays, and the growth of VmRSS after the
first reset and at its highest over the resets.

Times are wall time on a machine that may be shared: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

N_TICKS = 4000
SYMBOL = "SYNTH"
FIRST_DATE = datetime.date(2024, 1, 2)
STEP_SECONDS = 1.0
EPISODE_STEPS = 300
RESETS = 50
VEC_WINDOWS = 64
VEC_STEPS = 100
MB = 1e6
BOUND = 2.0  # issue 34: resident memory under 2x the largest day's event table


# -- the store ---------------------------------------------------------------------------------
def day_events(d: int, hours: float) -> np.ndarray:
    """Day d of the store: the flow with seed d + 1, ``hours`` long, on date FIRST_DATE + d."""
    from sekai.finance import ContStoikovTalreja, simulate_flow
    from sekai.finance.lob.lobster import record_flow, to_events

    flow = simulate_flow(ContStoikovTalreja(), 3600.0 * hours, n_ticks=N_TICKS, seed=d + 1)
    messages = record_flow(flow, n_ticks=N_TICKS)
    return to_events(messages, date=FIRST_DATE + datetime.timedelta(days=d))


def build_store(root: Path, days: int, hours: float) -> None:
    """Write the store into ``root`` unless a complete one of this size is there (a marker
    file, written last, says what it holds)."""
    from sekai.finance.lob import store

    marker = root / "benchmark.json"
    wanted = {"days": days, "hours": hours, "n_ticks": N_TICKS, "symbol": SYMBOL}
    if marker.is_file() and json.loads(marker.read_text()) == wanted:
        return
    marker.unlink(missing_ok=True)
    start = time.perf_counter()
    for d in range(days):
        events = day_events(d, hours)
        store.write_events(root, SYMBOL, events)
        print(f"  day {d + 1}/{days}: {len(events):,} events", flush=True)
    marker.write_text(json.dumps(wanted))
    print(f"store written in {time.perf_counter() - start:.0f} s: {root}")


def day_sizes(root: Path) -> dict[str, int]:
    """Events per stored day, from the files' metadata."""
    import pyarrow.parquet as pq

    from sekai.finance.lob import store

    return {
        str(date): pq.ParquetFile(
            root / f"symbol={SYMBOL}" / f"date={date}" / store.FILE_NAME
        ).metadata.num_rows
        for date in store.days(root, SYMBOL)
    }


# -- one measurement, in its own process -------------------------------------------------------
def memory() -> dict[str, int]:
    """VmRSS and VmHWM of this process, in bytes."""
    found = {}
    with open("/proc/self/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                found[name] = int(value.split()[0]) * 1024
    return found


def warm_up(folder: Path) -> None:
    """Compile and import everything a measurement uses, on a tiny store of two days."""
    import sekai
    from sekai.envs.finance.lobster_replay import LobsterReplayEnv
    from sekai.finance.lob import store

    tiny = []
    for d in range(2):
        events = day_events(d, 0.1)
        store.write_events(folder, SYMBOL, events)
        tiny.append(events)
    terms = dict(symbol=SYMBOL, step_seconds=STEP_SECONDS, episode_steps=EPISODE_STEPS)
    for messages in (folder, tiny):
        env = LobsterReplayEnv(messages, **terms)
        for d in (1, 0):
            env.reset(seed=0, options={"day": d})
            for _ in range(5):
                env.step(env.action_space.sample())
    vec = sekai.make_vec("LobsterReplay-v0", VEC_WINDOWS, messages=folder, **terms)
    vec.reset(seed=0)
    for _ in range(5):
        vec.step(random_actions(vec))
    vec.close()


def random_actions(vec: Any) -> np.ndarray:
    """One random action per window (masked entries are done as keep)."""
    return np.stack([vec.single_action_space.sample() for _ in range(vec.num_envs)])


def measure(kind: str, root: Path) -> dict[str, Any]:
    """The figures of one measurement (``kind``: stored, eager or vec), as a dict."""
    import sekai
    from sekai.envs.finance.lobster_replay import LobsterReplayEnv
    from sekai.finance.lob import store

    with tempfile.TemporaryDirectory() as folder:
        warm_up(Path(folder))
    gc.collect()
    dates = store.days(root, SYMBOL)
    terms = dict(symbol=SYMBOL, step_seconds=STEP_SECONDS, episode_steps=EPISODE_STEPS)
    base = memory()["VmRSS"]
    out: dict[str, Any] = {"baseline": base}
    messages: Any = root
    if kind == "eager":
        start = time.perf_counter()
        messages = [store.read_day(root, SYMBOL, date) for date in dates]
        out["read_s"] = time.perf_counter() - start
        out["events_bytes"] = sum(events.nbytes for events in messages)
        terms.pop("symbol")
    else:
        terms["days"] = (dates[0], dates[-1])
    start = time.perf_counter()
    if kind == "vec":
        env: Any = sekai.make_vec("LobsterReplay-v0", VEC_WINDOWS, messages=messages, **terms)
    else:
        env = LobsterReplayEnv(messages, **terms)
    out["construct_s"] = time.perf_counter() - start
    out["after_construct"] = memory()["VmRSS"] - base
    start = time.perf_counter()
    env.reset(seed=0)
    out["reset_s"] = time.perf_counter() - start
    out["after_reset"] = memory()["VmRSS"] - base
    days = env.terms.days
    out["resident"] = len(days.resident)
    if kind == "vec":
        start = time.perf_counter()
        for _ in range(VEC_STEPS):
            env.step(random_actions(env))
        out["steps_s"] = time.perf_counter() - start
        out["highest"] = memory()["VmRSS"] - base
        out["resident"] = len(days.resident)
    else:
        if kind == "stored":
            out["arrays"] = held_arrays(days)
        rng = np.random.default_rng(1)
        highest, seconds, most = out["after_reset"], [], out["resident"]
        for _ in range(RESETS):
            start = time.perf_counter()
            env.reset(options={"day": int(rng.integers(len(dates)))})
            seconds.append(time.perf_counter() - start)
            highest = max(highest, memory()["VmRSS"] - base)
            most = max(most, len(days.resident))
        out["highest"], out["resets_s"], out["most_resident"] = highest, seconds, most
    out["peak"] = memory()["VmHWM"] - base
    return out


def held_arrays(days: Any) -> dict[str, Any]:
    """Bytes per event of each array the resident day holds (``ReplayDay``'s, and the
    tape's own: ``ReplayDays``'), each buffer counted once, under the first name to hold it."""
    (d,) = days.resident
    day = days[d]
    named = [(name, value) for name, value in vars(day).items()]
    named += [("tape." + name, value) for name, value in vars(days).items()]
    seen: set[int] = set()
    held = {}
    for name, value in named:
        if not isinstance(value, np.ndarray):
            continue
        base = value
        while isinstance(base.base, np.ndarray):
            base = base.base
        if id(base) in seen:
            continue
        seen.add(id(base))
        view = "" if base is value else f" (a view of {base.dtype}{list(base.shape)})"
        held[name] = (base.nbytes, f"{value.dtype}{list(value.shape)}{view}")
    return {"events": len(day), "arrays": held}


# -- the report --------------------------------------------------------------------------------
def child(kind: str, root: Path) -> dict[str, Any]:
    """``measure(kind)`` in a fresh Python process."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", kind, "--store", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"the {kind} measurement failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def available() -> int:
    """MemAvailable of /proc/meminfo, in bytes."""
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def report(root: Path, days: int, hours: float, kinds: list[str]) -> None:
    print(f"load average {os.getloadavg()} on {os.cpu_count()} cores")
    build_store(root, days, hours)
    sizes = day_sizes(root)
    from sekai.finance.lob.events import EVENT_DTYPE

    largest = max(sizes.values()) * EVENT_DTYPE.itemsize
    total = sum(sizes.values())
    print(
        f"store: {len(sizes)} days, {total:,} events ({min(sizes.values()):,} to "
        f"{max(sizes.values()):,} a day); largest day's event table {largest / MB:.1f} MB"
    )
    results: dict[str, dict[str, Any]] = {}
    for kind in kinds:
        if kind != "stored" and "stored" in results:
            need = _estimate(kind, results["stored"], len(sizes), total * EVENT_DTYPE.itemsize)
            if need > available() / 2:
                print(
                    f"{kind}: skipped, it would need about {need / 1e9:.1f} GB "
                    f"(available {available() / 1e9:.1f} GB)"
                )
                continue
        results[kind] = child(kind, root)
        print(f"{kind}: measured (load average {os.getloadavg()[0]:.2f})", flush=True)
    _table(results, largest)
    if "stored" in results:
        _arrays(results["stored"]["arrays"], largest)
        _bound(results["stored"], largest)
    print(f"load average {os.getloadavg()}")


def _estimate(kind: str, stored: dict[str, Any], n_days: int, events_bytes: int) -> float:
    """Bytes a measurement of every day on the tape would hold: each day's replay as the
    stored env's, twice (the days and their joined copy), plus the event arrays for eager."""
    one_day = stored["highest"]
    return 2 * n_days * one_day + (events_bytes if kind == "eager" else 0)


def _table(results: dict[str, dict[str, Any]], largest: int) -> None:
    head = (
        f"{'':8} {'construct':>10} {'1st reset':>10} {'after reset':>18} "
        f"{'highest':>18} {'peak':>18} {'days on tape':>13}"
    )
    print(head)

    def size(value: int) -> str:
        return f"{value / MB:>9.1f} MB x{value / largest:<5.2f}"

    for kind, r in results.items():
        resident = r.get("most_resident", r["resident"])
        print(
            f"{kind:8} {r['construct_s']:>9.2f}s {r['reset_s']:>9.2f}s {size(r['after_reset'])} "
            f"{size(r['highest'])} {size(r['peak'])} {resident:>13}"
        )
    print(
        "(growth of VmRSS over the warmed-up baseline, x: multiple of the largest day's event "
        "table; highest: over the resets, or after the vec env's steps; peak: VmHWM)"
    )
    for kind, r in results.items():
        if "resets_s" in r:
            s = np.array(r["resets_s"])
            print(
                f"{kind}: {RESETS} resets to random days: median {np.median(s):.2f} s, "
                f"max {s.max():.2f} s"
            )
        if "steps_s" in r:
            print(
                f"{kind}: {VEC_WINDOWS} windows, {VEC_STEPS} steps in {r['steps_s']:.2f} s "
                f"({VEC_STEPS * VEC_WINDOWS / r['steps_s']:,.0f} env steps/s)"
            )
        if "read_s" in r:
            print(
                f"{kind}: the days read from the store in {r['read_s']:.1f} s, "
                f"{r['events_bytes'] / MB:.0f} MB of events (in its growth)"
            )


def _arrays(found: dict[str, Any], largest: int) -> None:
    n = found["events"]
    rows = sorted(found["arrays"].items(), key=lambda item: -item[1][0])
    total = sum(nbytes for nbytes, _ in found["arrays"].values())
    print(f"the resident day's arrays ({n:,} replay messages), bytes per message:")
    for name, (nbytes, what) in rows:
        if nbytes / n >= 0.05:
            print(f"  {name:22} {nbytes / n:>7.1f}  {what}")
    print(
        f"  {'total':22} {total / n:>7.1f}  ({total / MB:.0f} MB, x{total / largest:.2f} the "
        "largest day's event table)"
    )


def _bound(stored: dict[str, Any], largest: int) -> None:
    """The stored env's memory as multiples of the largest day's event table, to BOUND."""
    live = sum(nbytes for nbytes, _ in stored["arrays"]["arrays"].values())
    figures = {
        "live arrays of the resident day": live,
        "VmRSS growth after the first reset": stored["after_reset"],
        f"VmRSS growth, highest over {RESETS} resets": stored["highest"],
    }
    print(
        f"bound (issue 34): under x{BOUND:g} the largest day's event table ({largest / MB:.1f} MB)"
    )
    for name, value in figures.items():
        verdict = "within" if value < BOUND * largest else "OVER"
        print(f"  {name:40} x{value / largest:.2f}  {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short days, for a smoke test")
    parser.add_argument("--hours", type=float, help="hours of flow a day (default 16, quick 0.25)")
    parser.add_argument("--days", type=int, default=20, help="days in the store")
    parser.add_argument("--store", type=Path, help="the store's folder (kept for reruns)")
    parser.add_argument(
        "--only", nargs="+", choices=("stored", "eager", "vec"), help="measurements to run"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.store)))
        return
    hours = args.hours or (0.25 if args.quick else 16.0)
    if not 0 < hours < 24:
        parser.error(f"--hours must be in (0, 24): a day's flow starts at midnight, got {hours}")
    if args.days < 2:
        parser.error(f"--days must be at least 2, got {args.days}")
    root = args.store or Path(tempfile.gettempdir()) / f"sekai-replay-store-{args.days}x{hours:g}h"
    report(root, args.days, hours, args.only or ["stored", "eager", "vec"])


if __name__ == "__main__":
    main()
