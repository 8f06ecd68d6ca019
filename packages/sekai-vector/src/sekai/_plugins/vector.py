"""sekai-vector's plugin: its vectorization modes, its public names, its test kit and
``sekai bench`` (it has no envs).

Native vector versions are registered by the distributions that own the envs
(``vector_entry_point``). This module stays small and imports nothing heavy: the modes and
names are strings, and ``sekai bench`` imports its code when it runs.
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable

from sekai.hookspecs import hookimpl


@hookimpl
def sekai_register_vectorization_modes(register: Callable[[str, str], None]) -> None:
    register("sync", "sekai.vector.sync:SyncVecEnv")
    register("async", "sekai.vector.async_:AsyncVecEnv")
    register("proc", "sekai.vector.proc:ProcVecEnv")
    if importlib.util.find_spec("ray") is not None:  # the `ray` extra
        register("ray", "sekai.vector.ray:RayVecEnv")


@hookimpl
def sekai_register_names(register: Callable[..., None]) -> None:
    register("vector", "sekai.vector")
    for name in _PUBLIC:
        register(name, "sekai.vector")
    for name in _TEST_KIT:
        register(name, "sekai.vector.testing", namespace="sekai.testing")


_PUBLIC = (  # sekai.vector.__all__, reachable as sekai.<name> without importing sekai.vector
    "VecEnv",
    "SyncVecEnv",
    "AsyncVecEnv",
    "ProcVecEnv",
    "NativeVecEnv",
    "VecEnvWorkerError",
    "VecEnvClosed",
    "VecResetResult",
    "VecStepResult",
    "make_vec",
    "stack_infos",
    "VecWrapper",
    "VecObservationWrapper",
    "VecRewardWrapper",
    "VecActionWrapper",
    "VecRecordEpisodeStatistics",
    "VecNormalizeObservation",
    "VecNormalizeReward",
    "VecTransformObservation",
    "VecTransformReward",
)
_TEST_KIT = (  # sekai.vector.testing.__all__, reachable as sekai.testing.<name>
    "check_native_vec_env",
    "check_vec_env",
    "check_vectorization_mode",
    "native_env_ids",
    "vectorization_modes",
)


@hookimpl
def sekai_add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``sekai bench``: its arguments here, its code in ``sekai.vector.bench``."""
    command = commands.add_parser(
        "bench",
        help="measure an env's random-action throughput",
        description="Measure random-action throughput in env steps per second: a warm-up, then "
        "repeated timed runs, reporting their median, min and max. With --compare, run every "
        "backend at several numbers of sub-envs and print a table.",
    )
    command.add_argument("id", help="a registered env id, e.g. CartPole-v1")
    command.add_argument(
        "--num-envs",
        type=int,
        nargs="+",
        metavar="N",
        help="number of sub-envs (default 16; with --compare, several: default 16 64 256 1024)",
    )
    command.add_argument(
        "--mode",
        help="vectorization mode passed to make_vec: native, sync, async, proc, ... "
        "(default: native where the env has one, else sync)",
    )
    command.add_argument(
        "--workers", type=int, metavar="W", help="worker processes for --mode proc"
    )
    command.add_argument(
        "--seconds",
        type=float,
        default=2.0,
        metavar="S",
        help="timed seconds per measurement, split over the repeats (default 2)",
    )
    command.add_argument(
        "--seed", type=int, default=0, metavar="K", help="seed for the env and actions"
    )
    command.add_argument(
        "--compare",
        action="store_true",
        help="run native (where the env has one), sync, proc with 1..cores workers and the "
        "single env, and print the table",
    )
    command.add_argument(
        "--plot", metavar="FILE.png", help="with --compare: draw the table (needs matplotlib)"
    )
    command.add_argument("--json", metavar="FILE", help="write the figures to FILE as JSON")
    command.set_defaults(run=_run_bench)


def _run_bench(args: argparse.Namespace) -> int:
    from sekai.vector import bench

    return bench.run(args)
