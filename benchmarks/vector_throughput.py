"""Vector env throughput, measured in one run so the ratios compare like with like.

    python benchmarks/vector_throughput.py [--seconds 1] [--rounds 3] [--skip-proc]

(a) SyncVecEnv of sekai's CartPole-v1 against gymnasium's SyncVectorEnv of its CartPole-v1,
    16 sub-envs each (target: at least 1.2x).
(b) ProcVecEnv, 16 sub-envs on 2 workers with shared memory, against gymnasium's AsyncVectorEnv
    (shared memory) and SB3's SubprocVecEnv when installed; the backends come from
    ``proc_throughput.py`` next to this script.
(c) The native DriftVecEnv of the docs at 1024 sub-envs against the same numpy arithmetic as a
    bare loop with no API around it (target: at least half its steps/s). The native env builds
    its ``infos`` lazily, and the caller here never reads them, as a training loop that ignores
    infos would not.

Random actions are drawn before timing. Within each comparison the backends take turns, one
``--seconds`` slice each per round, and each reports its best round in env steps per second
(sub-envs times vector steps), so a burst of load from other processes does not land on one
backend only.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
from _timing import Step, race

import sekai


def _print(title: str, best: dict[str, float], reference: str) -> None:
    print(title)
    print(f"  {'backend':<52} {'steps/s':>12} {'ratio':>8}")
    for name, rate in best.items():
        print(f"  {name:<52} {rate:>12,.0f} {rate / best[reference]:>7.2f}x")
    print()


# -- (a) SyncVecEnv against gymnasium's SyncVectorEnv ---------------------------------------------
@contextlib.contextmanager
def sekai_sync(num_envs: int) -> Iterator[Step]:
    with sekai.make_vec("CartPole-v1", num_envs, vectorization_mode="sync") as vec:
        vec.reset(seed=0)
        yield vec.step


@contextlib.contextmanager
def gymnasium_sync(num_envs: int) -> Iterator[Step]:
    import gymnasium

    vec = gymnasium.make_vec("CartPole-v1", num_envs, vectorization_mode="sync")
    try:
        vec.reset(seed=0)
        yield vec.step
    finally:
        vec.close()


# -- (c) a native env against the bare numpy loop -------------------------------------------------
class DriftVecEnv(sekai.NativeVecEnv):
    """The docs' native Drift env."""

    def __init__(self, num_envs: int, *, max_episode_steps: int | None = None) -> None:
        super().__init__(
            num_envs,
            sekai.Box(-10.0, 10.0, shape=(1,)),
            sekai.Discrete(2),
            max_episode_steps=max_episode_steps,
        )
        self.x = np.zeros(num_envs)

    def _reset_envs(self, indices: np.ndarray, options: list[Any]) -> None:
        self.x[indices] = self.rng.normal(size=len(indices))

    def _observe(self) -> np.ndarray:
        return np.clip(self.x, -10, 10)[:, None].astype(np.float32)

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        push = np.where(np.asarray(actions) == 1, 0.5, -0.5)
        self.x += push + self.rng.normal(0.0, 0.1, size=self.num_envs)
        terminated = np.abs(self.x) > 5
        return -np.abs(self.x), terminated, np.zeros(self.num_envs, bool), {}


@contextlib.contextmanager
def sekai_native(num_envs: int) -> Iterator[Step]:
    with DriftVecEnv(num_envs, max_episode_steps=100) as vec:
        vec.reset(seed=0)
        yield vec.step


@contextlib.contextmanager
def bare_loop(num_envs: int) -> Iterator[Step]:
    """The same arithmetic, time limit and same-step resets, with no API around it."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=num_envs)
    elapsed = np.zeros(num_envs, np.int64)

    def step(actions: np.ndarray) -> tuple[Any, ...]:
        nonlocal x
        x += np.where(actions == 1, 0.5, -0.5) + rng.normal(0.0, 0.1, size=num_envs)
        rewards = -np.abs(x)
        terminated = np.abs(x) > 5
        elapsed[:] += 1
        truncated = elapsed >= 100
        observations = np.clip(x, -10, 10)[:, None].astype(np.float32)
        done = terminated | truncated
        if done.any():
            finished = np.flatnonzero(done)
            x[finished] = rng.normal(size=len(finished))
            elapsed[finished] = 0
            observations = np.clip(x, -10, 10)[:, None].astype(np.float32)
        return observations, rewards, terminated, truncated

    yield step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--skip-proc", action="store_true", help="leave out comparison (b)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)

    actions = rng.integers(0, 2, size=(200, 16))
    best = race(
        {"gymnasium SyncVectorEnv": gymnasium_sync(16), "sekai SyncVecEnv": sekai_sync(16)},
        actions,
        args.seconds,
        args.rounds,
    )
    _print("(a) CartPole-v1, 16 sub-envs, in process", best, "gymnasium SyncVectorEnv")

    if not args.skip_proc:
        from proc_throughput import _sb3_installed, gymnasium_async, sb3_subproc, sekai_proc

        backends = {
            "gymnasium AsyncVectorEnv (shared memory)": gymnasium_async(16),
            "sekai ProcVecEnv (2 workers, shared memory)": sekai_proc(16, 2),
        }
        if _sb3_installed():
            backends["SB3 SubprocVecEnv"] = sb3_subproc(16)
        best = race(backends, actions, args.seconds, args.rounds)
        _print(
            "(b) CartPole-v1, 16 sub-envs, worker processes",
            best,
            "gymnasium AsyncVectorEnv (shared memory)",
        )
        if "SB3 SubprocVecEnv" in best:
            proc = best["sekai ProcVecEnv (2 workers, shared memory)"]
            print(
                f"  sekai ProcVecEnv / SB3 SubprocVecEnv: {proc / best['SB3 SubprocVecEnv']:.2f}x\n"
            )
        else:
            print("  (SB3 SubprocVecEnv not run: stable-baselines3 is not installed)\n")

    actions = rng.integers(0, 2, size=(200, 1024))
    best = race(
        {
            "bare numpy loop": bare_loop(1024),
            "sekai NativeVecEnv (DriftVecEnv)": sekai_native(1024),
        },
        actions,
        args.seconds,
        args.rounds,
    )
    _print("(c) Drift, 1024 sub-envs, array form", best, "bare numpy loop")


if __name__ == "__main__":
    main()
