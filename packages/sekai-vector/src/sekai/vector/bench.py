"""``sekai bench``: the random-action throughput of an env, alone and under each vector backend.

A measurement builds the env (with ``make_vec``, so every mode that
make_vec knows works here), samples a few batches of random actions up front, warms up, then
times ``REPEATS`` runs and keeps each run's env steps per second. ``--compare`` measures
every backend at several numbers of sub-envs and prints the table of the Performance section of
the vector docs. sekai-vector's plugin adds the command to ``sekai`` (``sekai_add_commands``
in ``sekai._plugins.vector``, which declares its arguments) and calls ``run``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import itertools
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from tqdm import tqdm

from sekai.cli import UsageError
from sekai.core import Env
from sekai.making import make
from sekai.registration import EnvSpec, UnknownEnvError, spec
from sekai.vector.base import VecEnv
from sekai.vector.making import make_vec

__all__ = [
    "COMPARE_NUM_ENVS",
    "DEFAULT_NUM_ENVS",
    "REPEATS",
    "SINGLE_ENV",
    "WARM_UP",
    "Backend",
    "Measurement",
    "compare_backends",
    "format_table",
    "measure",
    "plot",
    "run",
]

REPEATS = 5
"""Timed runs per measurement; the report gives their median, min and max."""
WARM_UP = 0.2
"""Warm-up time as a fraction of ``--seconds``: caches, allocations and worker start-up settle."""
DEFAULT_NUM_ENVS = 16
COMPARE_NUM_ENVS = (16, 64, 256, 1024)
_ACTION_BATCHES = 16  # sampled before timing, then cycled: sampling is not what is measured


@dataclasses.dataclass(frozen=True)
class Backend:
    """One row of the table: how the env is built (``mode`` None: the single env, no VecEnv)."""

    label: str
    mode: str | None
    workers: int | None = None


SINGLE_ENV = Backend("single env", None)


@dataclasses.dataclass(frozen=True)
class Measurement:
    """The env steps per second of each timed run of one backend at one ``num_envs``."""

    backend: Backend
    num_envs: int
    rates: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.rates)

    def summary(self) -> str:
        return (
            f"{_where(self.backend, self.num_envs)}: {_figure(self.median)} steps/s "
            f"(min {_figure(min(self.rates))}, max {_figure(max(self.rates))})"
        )

    def record(self) -> dict[str, Any]:
        return {
            "backend": self.backend.label,
            "mode": self.backend.mode,
            "workers": self.backend.workers,
            "num_envs": self.num_envs,
            "median": self.median,
            "min": min(self.rates),
            "max": max(self.rates),
            "runs": list(self.rates),
        }


def _where(backend: Backend, num_envs: int) -> str:
    """``"sync, 16 sub-envs"``; the single env has no sub-envs to count."""
    return backend.label if backend is SINGLE_ENV else f"{backend.label}, {num_envs} sub-envs"


def run(args: argparse.Namespace) -> int:
    """Run ``sekai bench`` with the parsed command line; print the result, return 0."""
    _check_arguments(args)
    try:
        env_spec = spec(args.id)
    except UnknownEnvError as error:
        raise UsageError(str(error)) from None
    if args.compare:
        backends = compare_backends(env_spec, _cores())
        sizes = sorted(set(args.num_envs or COMPARE_NUM_ENVS))
        plan = [(SINGLE_ENV, 1)] + [
            (backend, n) for backend in backends for n in sizes if (backend.workers or 0) <= n
        ]
    else:
        plan = [(_chosen_backend(env_spec, args.mode, args.workers), _one_num_envs(args))]

    with _Progress(total=len(plan) * REPEATS) as progress:
        measurements = []
        for backend, num_envs in plan:
            progress.describe(_where(backend, num_envs))
            measurement = measure(
                env_spec, backend, num_envs, args.seconds, args.seed, progress.advance
            )
            measurements.append(measurement)
            if args.compare:
                progress.report(measurement.summary())
    if args.compare:
        print(format_table(env_spec.id, measurements, args.seconds))
    else:
        print(f"{env_spec.id}: {measurements[0].summary()}")
    if args.json:
        _write(args.json, "--json", lambda path: _write_json(path, args, measurements))
    if args.plot:
        _write(args.plot, "--plot", lambda path: plot(path, env_spec.id, measurements))
    return 0


def _check_arguments(args: argparse.Namespace) -> None:
    for num_envs in args.num_envs or ():
        if num_envs < 1:
            raise UsageError(f"--num-envs must be at least 1, got {num_envs}")
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    if not args.seconds > 0:
        raise UsageError(f"--seconds must be a positive number, got {args.seconds}")
    if args.compare and (args.mode is not None or args.workers is not None):
        raise UsageError("--compare runs every mode itself: drop --mode and --workers")
    if not args.compare and args.num_envs and len(args.num_envs) > 1:
        raise UsageError("several --num-envs values need --compare")
    if args.plot and not args.compare:
        raise UsageError("--plot draws the --compare table: add --compare")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise UsageError(
            "--plot needs matplotlib, which is not installed; "
            "install it with: pip install 'sekai-vector[plot]'"
        )
    for option, path in (("--json", args.json), ("--plot", args.plot)):
        if path is not None:
            _check_writable(Path(path), option)


def _check_writable(path: Path, option: str) -> None:
    """Fail before the measurements, not after them, when the output cannot be written."""
    if path.is_dir():
        raise UsageError(f"{option} {path}: is a directory, not a file")
    parent = path.parent
    if not parent.is_dir():
        raise UsageError(f"{option} {path}: the directory {parent} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise UsageError(f"{option} {path}: not writable")


def _write(path: str, option: str, write: Callable[[str], None]) -> None:
    try:
        write(path)
    except OSError as error:
        raise UsageError(f"{option} {path}: {error.strerror or error}") from None


def _one_num_envs(args: argparse.Namespace) -> int:
    return args.num_envs[0] if args.num_envs else DEFAULT_NUM_ENVS


def _cores() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _cores_text() -> str:
    cores = _cores()
    return f"{cores} core" if cores == 1 else f"{cores} cores"


def _load_average() -> float:
    """The one-minute load average (0 where the system has none): other work skews the figures."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0


def _chosen_backend(env_spec: EnvSpec, mode: str | None, workers: int | None) -> Backend:
    """The backend of a single ``sekai bench`` run; ``mode`` None is make_vec's default."""
    if mode is None:
        mode = "native" if env_spec.vector_entry_point is not None else "sync"
    if mode in ("native", "vector_entry_point"):
        return _native_backend(env_spec, workers)
    label = mode if workers is None else f"{mode} --workers {workers}"
    return Backend(label, mode, workers)


def _native_backend(env_spec: EnvSpec, workers: int | None = None) -> Backend:
    """The native env's row, named after its class; ``workers`` only to be refused by make_vec."""
    entry_point = env_spec.vector_entry_point
    name = entry_point.rpartition(":")[2] if isinstance(entry_point, str) else None
    name = name or getattr(entry_point, "__name__", None)
    return Backend(f"native ({name})" if name else "native", "native", workers)


def compare_backends(env_spec: EnvSpec, cores: int) -> list[Backend]:
    """The rows of ``--compare``: native where the env has one, sync, proc with 1..cores workers."""
    backends = [_native_backend(env_spec)] if env_spec.vector_entry_point is not None else []
    backends.append(Backend("sync", "sync"))
    backends += [Backend(f"proc --workers {w}", "proc", w) for w in range(1, cores + 1)]
    return backends


def measure(
    env_spec: EnvSpec,
    backend: Backend,
    num_envs: int,
    seconds: float,
    seed: int,
    after_run: Callable[[], None] = lambda: None,
) -> Measurement:
    """Warm up, then time ``REPEATS`` runs of ``seconds / REPEATS`` each."""
    env = _build(env_spec, backend, num_envs)
    try:
        step, env_steps_per_call = _random_stepper(env, backend, seed)
        _calls_per_second(step, WARM_UP * seconds)
        rates = []
        for _ in range(REPEATS):
            rates.append(_calls_per_second(step, seconds / REPEATS) * env_steps_per_call)
            after_run()
    finally:
        env.close()
    return Measurement(backend, num_envs, tuple(rates))


def _build(env_spec: EnvSpec, backend: Backend, num_envs: int) -> Any:
    """The env or VecEnv; an argument make/make_vec refuses is the user's mistake."""
    vector_kwargs = {} if backend.workers is None else {"num_workers": backend.workers}
    try:
        if backend.mode is None:
            env = make(env_spec)
        else:
            env = make_vec(env_spec, num_envs, backend.mode, vector_kwargs=vector_kwargs)
    except (ValueError, TypeError) as error:
        if backend.workers is not None and isinstance(error, TypeError):
            raise UsageError(f"--mode {backend.mode} does not take --workers ({error})") from None
        raise UsageError(str(error)) from None
    if not isinstance(env, Env | VecEnv):  # a MultiAgentEnv, or its native vector version
        env.close()
        raise UsageError(
            f"sekai bench measures single-agent envs; {env_spec.id} builds a "
            f"{type(env).__name__}, which takes one action per agent"
        )
    return env


def _random_stepper(env: Any, backend: Backend, seed: int) -> tuple[Callable[[], None], int]:
    """A function that steps ``env`` once with the next pre-sampled random action."""
    env.reset(seed=seed)
    space = env.action_space if backend.mode is None else env.batch_action_space
    space.seed(seed)
    actions = itertools.cycle([space.sample() for _ in range(_ACTION_BATCHES)])
    if backend.mode is not None:  # a VecEnv resets finished sub-envs itself

        def step_vec() -> None:
            env.step(next(actions))

        return step_vec, env.num_envs

    def step_single() -> None:
        if env.step(next(actions)).done:
            env.reset()

    return step_single, 1


def _calls_per_second(step: Callable[[], None], seconds: float) -> float:
    """Call ``step`` for at least ``seconds`` (at least once); calls per second."""
    calls = 0
    start = time.perf_counter()
    while True:
        step()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return calls / elapsed


def _figure(rate: float) -> str:
    """A rate to three significant digits with thousands separators, as in the docs' table."""
    return f"{round(float(f'{rate:.3g}')):,}"


def format_table(env_id: str, measurements: Sequence[Measurement], seconds: float) -> str:
    """The Performance table: one row per backend, one column per num_envs, median steps/s."""
    rows: dict[Backend, dict[int, Measurement]] = {}
    single = None
    for measurement in measurements:
        if measurement.backend is SINGLE_ENV:
            single = measurement
        else:
            rows.setdefault(measurement.backend, {})[measurement.num_envs] = measurement
    sizes = sorted({n for row in rows.values() for n in row})
    header = ["Backend (--mode)", *(f"{n} sub-envs" for n in sizes)]
    body = [
        [backend.label, *(_figure(row[n].median) if n in row else "-" for n in sizes)]
        for backend, row in rows.items()
    ]
    sync = rows.get(Backend("sync", "sync"), {})
    ratios = [
        [backend.label, *(_ratio(row.get(n), sync.get(n)) for n in sizes)]
        for backend, row in rows.items()
        if sync and row is not sync
    ]
    lines = [
        f"{env_id}: random-action env steps per second on {_cores_text()} (load average "
        f"{_load_average():.1f}), median of {REPEATS} runs of {seconds / REPEATS:g} s",
        "",
        *_aligned([header, *body]),
    ]
    if ratios:
        lines += ["", *_aligned([["relative to sync", *header[1:]], *ratios])]
    if single is not None:
        lines += ["", f"A single {env_id} env runs {_figure(single.median)} steps per second."]
    return "\n".join(lines)


def _ratio(measured: Measurement | None, sync: Measurement | None) -> str:
    if measured is None or sync is None:
        return "-"
    ratio = measured.median / sync.median
    return f"{ratio:.1f}x" if ratio >= 1 else f"{ratio:.2f}x"


def _aligned(rows: list[list[str]]) -> list[str]:
    """Text columns: the first left-aligned, the others right-aligned."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            [
                row[0].ljust(widths[0]),
                *(cell.rjust(w) for cell, w in zip(row[1:], widths[1:], strict=True)),
            ]
        ).rstrip()
        for row in rows
    ]


def _write_json(path: str, args: argparse.Namespace, measurements: list[Measurement]) -> None:
    figures = {
        "env_id": args.id,
        "unit": "env steps per second",
        "cores": _cores(),
        "load_average": _load_average(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "seconds": args.seconds,
        "repeats": REPEATS,
        "seed": args.seed,
        "measurements": [measurement.record() for measurement in measurements],
    }
    Path(path).write_text(json.dumps(figures, indent=2) + "\n")


def plot(path: str, env_id: str, measurements: Sequence[Measurement]) -> None:
    """Steps per second against num_envs on log axes, one line per backend, to a PNG."""
    # the optional extra: imported only for --plot; Figure needs no pyplot and no GUI backend
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    figure = Figure(figsize=(7.0, 4.5), layout="constrained")
    axes = figure.add_subplot()
    rows: dict[Backend, list[Measurement]] = {}
    for measurement in measurements:
        rows.setdefault(measurement.backend, []).append(measurement)
    for backend, row in rows.items():
        if backend is SINGLE_ENV:
            axes.axhline(row[0].median, color="0.4", linestyle="--", label="single env")
            continue
        row.sort(key=lambda m: m.num_envs)
        sizes = [m.num_envs for m in row]
        (line,) = axes.plot(sizes, [m.median for m in row], marker="o", label=backend.label)
        axes.fill_between(
            sizes,
            [min(m.rates) for m in row],
            [max(m.rates) for m in row],
            color=line.get_color(),
            alpha=0.2,
        )
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_xticks(sorted({m.num_envs for m in measurements if m.backend is not SINGLE_ENV}))
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    axes.yaxis.set_minor_formatter(FuncFormatter(_label_2_and_5))
    axes.set_xlabel("sub-envs (num_envs)")
    axes.set_ylabel("env steps per second")
    axes.set_title(f"{env_id}: random-action throughput, {_cores_text()}")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.savefig(path, dpi=120)


def _label_2_and_5(value: float, _: object) -> str:
    """Minor ticks of a log axis: label 2x and 5x a power of ten, so the scale reads at a glance."""
    leading = f"{value:.0e}"[0]
    return f"{value:,.0f}" if leading in "25" else ""


class _Progress:
    """A tqdm bar on a terminal; plain lines (from ``report``) whatever the output is."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self._stream = stream or sys.stderr
        self._bar = tqdm(
            total=total,
            unit="run",
            file=self._stream,
            disable=not self._stream.isatty(),
            leave=False,
            dynamic_ncols=True,
        )

    def describe(self, text: str) -> None:
        self._bar.set_description_str(text)

    def advance(self) -> None:
        self._bar.update()

    def report(self, line: str) -> None:
        self._bar.write(line, file=self._stream)

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._bar.close()
