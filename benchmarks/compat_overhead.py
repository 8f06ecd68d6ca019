"""What the bridges cost: to_sb3 and to_gymnasium_vector over a native env, measured in one run.

    python benchmarks/compat_overhead.py [--seconds 1] [--rounds 3] [--num-envs 1024]

The native DriftVecEnv of ``vector_throughput.py`` (1024 sub-envs, 100-step episodes, same-step
autoreset) stepped directly, through ``to_sb3`` (SB3's ``step``: ``step_async`` + ``step_wait``)
and through ``to_gymnasium_vector`` (infos converted to gymnasium's dict of arrays on every
step). Target: each bridge keeps at least 0.8x of the native env's steps/s. SB3 needs
stable-baselines3 and torch (``nox -s sb3`` installs them); without them that row is left out.
Timing as in ``vector_throughput.py``: backends take turns, each keeps its best round.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
from collections.abc import Iterator

import numpy as np
from _timing import Step, race
from vector_throughput import DriftVecEnv, _print, sekai_native

from sekai.compat import to_gymnasium_vector

TARGET = 0.8


@contextlib.contextmanager
def through_sb3(num_envs: int) -> Iterator[Step]:
    from sekai.compat import to_sb3

    env = to_sb3(DriftVecEnv(num_envs, max_episode_steps=100))
    env.seed(0)
    env.reset()
    try:
        yield env.step
    finally:
        env.close()


@contextlib.contextmanager
def through_gymnasium_vector(num_envs: int) -> Iterator[Step]:
    env = to_gymnasium_vector(DriftVecEnv(num_envs, max_episode_steps=100))
    env.reset(seed=0)
    try:
        yield env.step
    finally:
        env.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--num-envs", type=int, default=1024)
    args = parser.parse_args()
    n = args.num_envs
    backends = {
        "sekai NativeVecEnv (DriftVecEnv)": sekai_native(n),
        "to_gymnasium_vector(native)": through_gymnasium_vector(n),
    }
    if importlib.util.find_spec("stable_baselines3") is not None:
        backends["to_sb3(native)"] = through_sb3(n)
    actions = np.random.default_rng(0).integers(0, 2, size=(200, n))
    best = race(backends, actions, args.seconds, args.rounds)
    native = "sekai NativeVecEnv (DriftVecEnv)"
    _print(f"Drift, {n} sub-envs: the bridges against the native env", best, native)
    if "to_sb3(native)" not in best:
        print("  (to_sb3 not run: stable-baselines3 is not installed)")
    for name, rate in best.items():
        if name != native:
            verdict = "ok" if rate / best[native] >= TARGET else "BELOW TARGET"
            print(f"  {name}: {rate / best[native]:.2f}x of native (target {TARGET}x): {verdict}")


if __name__ == "__main__":
    main()
