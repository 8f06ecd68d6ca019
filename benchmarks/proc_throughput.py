"""ProcVecEnv throughput on CartPole-v1 against gymnasium's AsyncVectorEnv (and SB3's
SubprocVecEnv when it is installed), measured in one run so the ratios compare like with like.

    python benchmarks/proc_throughput.py [--num-envs 16] [--workers 2] [--seconds 1] [--rounds 3]

Every backend runs random actions (drawn before timing) on num_envs CartPole-v1 sub-envs. The
backends take turns, one ``--seconds`` slice each per round, and each reports its best round in
env steps per second (num_envs per vector step), so a burst of load from other processes on the
machine does not land on one backend only. gymnasium's AsyncVectorEnv and SB3's SubprocVecEnv
start one process per sub-env, so above 64 sub-envs (1024 processes on two cores would take
minutes to start) they are left out and the table compares ProcVecEnv with SyncVecEnv.

Wall-clock rates swing with the load of a shared machine, so (on Linux) a second table gives the
CPU time per vector step that ProcVecEnv spends in the parent (the serial part) and in each
worker, beside SyncVecEnv's, measured over the same steps.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
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


def _worker_cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of process ``pid`` so far, from /proc (Linux)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_table(num_envs: int, workers: int, actions: np.ndarray, seconds: float) -> None:
    """Print CPU milliseconds per vector step: ProcVecEnv's parent and workers, SyncVecEnv's."""
    import sekai

    def fns() -> list:
        return [lambda: sekai.make("CartPole-v1") for _ in range(num_envs)]

    with sekai.ProcVecEnv(fns(), num_workers=workers) as proc, sekai.SyncVecEnv(fns()) as sync:
        # the benchmark reaches into the pool only to find the worker processes' ids
        pids = [handle.process.pid for handle in proc._pool.handles]
        rows: dict[str, list[float]] = {"ProcVecEnv": [], "SyncVecEnv": []}
        for vec in (proc, sync):
            vec.reset(seed=0)
        for name, vec in (("ProcVecEnv", proc), ("SyncVecEnv", sync)):
            workers_before = [_worker_cpu_seconds(pid) for pid in pids]
            cpu, wall, steps = time.process_time(), time.perf_counter(), 0
            while time.perf_counter() - wall < seconds:
                for batch in actions:
                    vec.step(batch)
                steps += len(actions)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            spent = zip(pids, workers_before, strict=True)
            worker_cpu = [(_worker_cpu_seconds(p) - t) / steps * 1e3 for p, t in spent]
            worker_cpu = worker_cpu if vec is proc else []
            rows[name] = [wall / steps * 1e3, cpu / steps * 1e3, *worker_cpu]
    print(f"\nms per vector step of {num_envs} sub-envs: wall, CPU in the parent, CPU per worker")
    for name, (wall_ms, parent_ms, *worker_ms) in rows.items():
        per_worker = " ".join(f"{t:.2f}" for t in worker_ms) or "-"
        print(f"{name:<12} wall {wall_ms:6.2f}  parent {parent_ms:6.2f}  workers {per_worker}")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


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
    if os.path.exists("/proc/self/stat"):
        cpu_table(n, args.workers, actions, args.seconds)


if __name__ == "__main__":
    main()
