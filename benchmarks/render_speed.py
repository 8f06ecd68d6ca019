"""Milliseconds per ``render()`` frame of each finance env (CartPole for scale), before and after.

"before" is ``sekai/_raster.py`` (the canvas every frame is drawn on) as it is at a git revision,
``--before`` (default ``main``); "after" is the one installed. Both draw the same episode, in
turns (before, after, before, ...), timed in CPU time (``time.process_time``), best of
``--repeats``; the table also gives the largest pixel difference between their frames. Run from
the repository: ``python benchmarks/render_speed.py [--before REV] [--steps 120]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

import sekai
from sekai import _raster

ENV_IDS = ["Trading-v0", "Portfolio-v0", "MarketMaking-v0", "OptimalExecution-v0"]
ENV_IDS += ["LimitOrderBook-v0", "CartPole-v1"]
RASTER = "packages/sekai-core/src/sekai/_raster.py"
# the modules that draw, each holding the canvas classes under these names
DRAWERS = {
    "sekai.envs.finance._pictures": ("Canvas", "Plot"),
    "sekai.envs.classic_control._drawing": ("Canvas",),
}


def raster_at(revision: str) -> types.ModuleType:
    """``sekai/_raster.py`` as it is at ``revision``, loaded as a module of its own."""
    root = Path(__file__).resolve().parents[1]
    source = subprocess.run(
        ["git", "show", f"{revision}:{RASTER}"], cwd=root, check=True, capture_output=True
    ).stdout.decode()
    module = types.ModuleType(f"raster_at_{revision}")
    exec(compile(source, f"{revision}:{RASTER}", "exec"), module.__dict__)
    return module


@contextlib.contextmanager
def drawing_with(raster: types.ModuleType) -> Iterator[None]:
    """Every frame drawn with ``raster``'s Canvas and Plot while inside."""
    import importlib

    saved = []
    for name, attributes in DRAWERS.items():
        module = importlib.import_module(name)
        for attribute in attributes:
            saved.append((module, attribute, getattr(module, attribute)))
            setattr(module, attribute, getattr(raster, attribute))
    try:
        yield
    finally:
        for module, attribute, value in saved:
            setattr(module, attribute, value)


def played(env_id: str, steps: int) -> tuple[Any, int]:
    """``env_id`` with ``render_mode="rgb_array"`` after a reset and up to ``steps`` seeded
    random steps (fewer if the episode ends), and how many it took."""
    env = sekai.make(env_id, render_mode="rgb_array")
    observations, _ = env.reset(seed=0)
    multi_agent = isinstance(env.unwrapped, sekai.MultiAgentEnv)
    spaces = env.action_spaces if multi_agent else {None: env.action_space}
    for space in spaces.values():
        space.seed(0)
    for taken in range(1, steps + 1):
        if multi_agent:
            actions = {a: spaces[a].sample(mask=env.action_mask(a)) for a in observations}
            result = env.step(actions)
            observations = result.observations
        else:
            result = env.step(spaces[None].sample())
        if result.all_done:
            return env, taken
    return env, steps


def cpu_ms(env: Any, repeats: int, raster: types.ModuleType) -> tuple[float, np.ndarray]:
    """The best of ``repeats`` frames' CPU milliseconds with ``raster``, and the frame."""
    best = float("inf")
    with drawing_with(raster):
        for _ in range(repeats):
            start = time.process_time()
            frame = env.render()
            best = min(best, time.process_time() - start)
    return best * 1000, frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main", help="git revision of the 'before' canvas")
    parser.add_argument("--steps", type=int, default=120, help="steps before the frame")
    parser.add_argument("--repeats", type=int, default=5, help="frames timed per variant")
    args = parser.parse_args()
    before = raster_at(args.before)
    print(f"load average {os.getloadavg()[0]:.1f}; best of {args.repeats} frames, CPU time")
    print(f"{'env':22} {'steps':>5} {'before ms':>10} {'after ms':>9} {'speed-up':>9}", end="")
    print(f" {'max diff':>9}")
    for env_id in ENV_IDS:
        env, steps = played(env_id, args.steps)
        old_ms, new_ms = [], []
        for _ in range(2):  # interleaved: before, after, before, after
            ms, old_frame = cpu_ms(env, args.repeats, before)
            old_ms.append(ms)
            ms, new_frame = cpu_ms(env, args.repeats, _raster)
            new_ms.append(ms)
        difference = int(np.abs(old_frame.astype(int) - new_frame.astype(int)).max())
        old, new = min(old_ms), min(new_ms)
        print(f"{env_id:22} {steps:>5} {old:>10.1f} {new:>9.1f} {old / new:>8.1f}x {difference:>9}")
        env.close()


if __name__ == "__main__":
    main()
