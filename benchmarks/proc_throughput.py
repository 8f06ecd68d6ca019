"""ProcVecEnv throughput on CartPole-v1 against gymnasium's AsyncVectorEnv (and SB3's
SubprocVecEnv when it is installed), measured in one run so the ratios compare like with like.

    python benchmarks/proc_throughput.py [--num-envs 16] [--workers 2] [--seconds 1] [--rounds 3]

Every backend runs random actions (drawn before timing) on num_envs CartPole-v1 sub-envs. The
backends take turns, one ``--seconds`` slice each per round, and each reports its best round in
env steps per second (num_envs per vector step), so a burst of load from other processes on the
machine does not land on one backend only. gymnasium's AsyncVectorEnv and SB3's SubprocVecEnv
start one process per sub-env, so above 64 sub-envs (1024 processes on two cores would take
minutes to start) they are left out and the table compares ProcVecEnv with SyncVecEnv.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator

import numpy as np
from _timing import Step, race

_MAX_PROCESSES = 64  # sub-envs up to which the one-process-per-sub-env backends run


@contextlib.contextmanager
def sekai_proc(num_envs: int, workers: int) -> Iterator[Step]:
    import sekai

    fns = [lambda: sekai.make("CartPole-v1") for _ in range(num_envs)]
    with sekai.ProcVecEnv(fns, num_workers=workers, shared_memory=True) as vec:
        vec.reset(seed=0)
        yield vec.step


@contextlib.contextmanager
def sekai_sync(num_envs: int) -> Iterator[Step]:
    import sekai

    with sekai.SyncVecEnv([lambda: sekai.make("CartPole-v1") for _ in range(num_envs)]) as vec:
        vec.reset(seed=0)
        yield vec.step


@contextlib.contextmanager
def gymnasium_async(num_envs: int) -> Iterator[Step]:
    import gymnasium

    fns = [lambda: gymnasium.make("CartPole-v1") for _ in range(num_envs)]
    vec = gymnasium.vector.AsyncVectorEnv(fns, shared_memory=True)
    try:
        vec.reset(seed=0)
        yield vec.step
    finally:
        vec.close()


@contextlib.contextmanager
def sb3_subproc(num_envs: int) -> Iterator[Step]:
    import gymnasium
    from stable_baselines3.common.vec_env import SubprocVecEnv

    vec = SubprocVecEnv([lambda: gymnasium.make("CartPole-v1") for _ in range(num_envs)])
    try:
        vec.reset()
        yield vec.step
    finally:
        vec.close()


def _sb3_installed() -> bool:
    try:
        import stable_baselines3  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=16)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    n = args.num_envs
    actions = np.random.default_rng(0).integers(0, 2, size=(200, n))

    proc_name = f"sekai ProcVecEnv ({args.workers} workers, shared memory)"
    backends = {proc_name: sekai_proc(n, args.workers), "sekai SyncVecEnv": sekai_sync(n)}
    one_process_per_env = n <= _MAX_PROCESSES
    if one_process_per_env:
        backends["gymnasium AsyncVectorEnv (shared memory)"] = gymnasium_async(n)
    if one_process_per_env and _sb3_installed():
        backends["SB3 SubprocVecEnv"] = sb3_subproc(n)

    best = race(backends, actions, args.seconds, args.rounds)
    proc = best[proc_name]
    print(f"CartPole-v1, {n} sub-envs, random actions, env steps per second (best of rounds)")
    print(f"{'backend':<48} {'steps/s':>10} {'ProcVecEnv is':>14}")
    for name, rate in best.items():
        print(f"{name:<48} {rate:>10,.0f} {proc / rate:>13.1f}x")
    if not one_process_per_env:
        print(f"(one-process-per-sub-env backends not run above {_MAX_PROCESSES} sub-envs)")
    elif not _sb3_installed():
        print("(SB3 SubprocVecEnv not run: stable-baselines3 is not installed)")


if __name__ == "__main__":
    main()
