"""What the bridges cost: to_sb3 and to_gymnasium_vector over a native env, measured in one run.

    python benchmarks/compat_overhead.py [--seconds 1] [--rounds 3] [--num-envs 1024] [--env ID]

A native env (the DriftVecEnv of ``vector_throughput.py``: 100-step episodes, same-step
autoreset; or with ``--env`` the native env registered under that id) at 1024 sub-envs, stepped
directly, through ``to_sb3`` (SB3's ``step``: ``step_async`` + ``step_wait``) and through
``to_gymnasium_vector`` (infos converted to gymnasium's dict of arrays on every step). Target:
each bridge keeps at least 0.8x of the native env's steps/s. SB3 needs stable-baselines3 and
torch (``nox -s sb3`` installs them); without them that row is left out. Timing as in
``vector_throughput.py``: backends take turns, each keeps its best round.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
from collections.abc import Iterator

import numpy as np
from _timing import Step, race
from vector_throughput import DriftVecEnv, _print

import sekai
from sekai.compat import to_gymnasium_vector

TARGET = 0.8


def _native(env_id: str | None, num_envs: int) -> sekai.VecEnv:
    if env_id is None:
        return DriftVecEnv(num_envs, max_episode_steps=100)
    vec = sekai.make_vec(env_id, num_envs)
    if not isinstance(vec, sekai.NativeVecEnv):
        raise SystemExit(f"{env_id} has no native vector env")
    return vec


@contextlib.contextmanager
def direct(env_id: str | None, num_envs: int) -> Iterator[Step]:
    with _native(env_id, num_envs) as vec:
        vec.reset(seed=0)
        yield vec.step


@contextlib.contextmanager
def through_sb3(env_id: str | None, num_envs: int) -> Iterator[Step]:
    from sekai.compat import to_sb3

    env = to_sb3(_native(env_id, num_envs))
    env.seed(0)
    env.reset()
    try:
        yield env.step
    finally:
        env.close()


@contextlib.contextmanager
def through_gymnasium_vector(env_id: str | None, num_envs: int) -> Iterator[Step]:
    env = to_gymnasium_vector(_native(env_id, num_envs))
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
    parser.add_argument("--env", default=None, help="a registered id with a native vector env")
    args = parser.parse_args()
    n, env_id = args.num_envs, args.env
    native = f"sekai NativeVecEnv ({env_id or 'DriftVecEnv'})"
    backends = {
        native: direct(env_id, n),
        "to_gymnasium_vector(native)": through_gymnasium_vector(env_id, n),
    }
    if importlib.util.find_spec("stable_baselines3") is not None:
        backends["to_sb3(native)"] = through_sb3(env_id, n)
    with _native(env_id, n) as vec:
        vec.batch_action_space.seed(0)
        actions = np.stack([vec.batch_action_space.sample() for _ in range(200)])
    best = race(backends, actions, args.seconds, args.rounds)
    _print(f"{env_id or 'Drift'}, {n} sub-envs: the bridges against the native env", best, native)
    if "to_sb3(native)" not in best:
        print("  (to_sb3 not run: stable-baselines3 is not installed)")
    for name, rate in best.items():
        if name != native:
            verdict = "ok" if rate / best[native] >= TARGET else "BELOW TARGET"
            print(f"  {name}: {rate / best[native]:.2f}x of native (target {TARGET}x): {verdict}")


if __name__ == "__main__":
    main()
