"""RayVecEnv against ProcVecEnv on Portfolio-v0, measured in one run so the ratio compares like
with like.

    python benchmarks/ray_throughput.py [--envs 16384] [--seconds 2] [--rounds 3]

Both run 2 workers over ``--envs`` sub-envs made by ``make_vec``: RayVecEnv's 2 actors each run
their slice as one native PortfolioVecEnv (one round trip per actor per step), ProcVecEnv's 2
worker processes each step their slice of single Portfolio-v0 envs. Needs the ``ray`` extra; Ray
is started locally with 2 CPUs and no dashboard. Random actions are drawn before timing; the two
take turns, one ``--seconds`` slice each per round, and each reports its best round in env steps
per second (sub-envs times vector steps).
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Iterator

import numpy as np
import ray
from _timing import Step, race

import sekai


@contextlib.contextmanager
def _vec(mode: str, num_envs: int) -> Iterator[Step]:
    kwargs: dict[str, object] = {"num_workers": 2}
    if mode == "ray":
        kwargs["num_cpus"] = 1
    vec = sekai.make_vec("Portfolio-v0", num_envs, vectorization_mode=mode, vector_kwargs=kwargs)
    try:
        vec.reset(seed=0)
        yield vec.step
    finally:
        vec.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=16_384)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    space = sekai.make("Portfolio-v0").action_space
    space.seed(0)
    actions = np.stack([np.stack([space.sample() for _ in range(args.envs)]) for _ in range(4)])
    best = race(
        {
            "ray (2 actors, native)": _vec("ray", args.envs),
            "proc (2 workers)": _vec("proc", args.envs),
        },
        actions,
        args.seconds,
        args.rounds,
    )
    print(f"Portfolio-v0, {args.envs} sub-envs, load average {os.getloadavg()[0]:.1f}")
    for name, steps in best.items():
        print(f"  {name:<24} {steps:>14,.0f} env steps/s")
    ratio = best["ray (2 actors, native)"] / best["proc (2 workers)"]
    print(f"  ray / proc: {ratio:.1f}x")
    ray.shutdown()


if __name__ == "__main__":
    main()
