"""Milliseconds per ``render()`` frame of each finance env (CartPole for scale), before and after.

"before" is the drawing code (``sekai/_raster.py``, the canvas every frame is drawn on, and
``sekai/envs/finance/_pictures.py``, the finance charts) as it is at a git revision,
``--before`` (default ``main``); "after" is the one installed. Both draw the same episode, in
turns (before, after, before, ...), timed in CPU time (``time.process_time``), best of
``--repeats``; the table also gives the largest pixel difference between their frames. Run from
the repository: ``python benchmarks/render_speed.py [--before REV] [--steps 120]``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import inspect
import os
import subprocess
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

import sekai
from sekai import _raster
from sekai.envs.finance import _pictures

ENV_IDS = ["Trading-v0", "Portfolio-v0", "MarketMaking-v0", "OptimalExecution-v0"]
ENV_IDS += ["LimitOrderBook-v0", "CartPole-v1"]
RASTER = "packages/sekai-core/src/sekai/_raster.py"
PICTURES = "packages/sekai-finance/src/sekai/envs/finance/_pictures.py"


@dataclasses.dataclass
class Drawing:
    """One version of the drawing code: the canvas module and the finance pictures module."""

    raster: types.ModuleType
    pictures: types.ModuleType


def _source_at(revision: str, path: str) -> str:
    root = Path(__file__).resolve().parents[1]
    command = ["git", "show", f"{revision}:{path}"]
    return subprocess.run(command, cwd=root, check=True, capture_output=True).stdout.decode()


def drawing_at(revision: str) -> Drawing:
    """The drawing code as it is at ``revision``, loaded as modules of their own (the pictures
    module importing that revision's canvas)."""
    raster = types.ModuleType(f"raster_at_{revision}")
    exec(compile(_source_at(revision, RASTER), f"{revision}:{RASTER}", "exec"), raster.__dict__)
    pictures = types.ModuleType(f"pictures_at_{revision}")
    sys.modules[pictures.__name__] = pictures  # dataclasses look their module up there
    installed = sys.modules["sekai._raster"]
    sys.modules["sekai._raster"] = raster  # what its `from sekai._raster import ...` finds
    try:
        code = compile(_source_at(revision, PICTURES), f"{revision}:{PICTURES}", "exec")
        exec(code, pictures.__dict__)
    finally:
        sys.modules["sekai._raster"] = installed
    return Drawing(raster, pictures)


def _as_trace(trace: Any, pictures: types.ModuleType) -> Any:
    """``trace`` (an installed ``EpisodeTrace``) as ``pictures``'s own ``EpisodeTrace``, with
    the picture fields and constructor arguments that version knows."""
    fields = {f.name for f in dataclasses.fields(pictures.Picture)}
    picture = pictures.Picture(
        **{k: v for k, v in dataclasses.asdict(trace.picture).items() if k in fields}
    )
    takes_env = len(inspect.signature(pictures.EpisodeTrace).parameters) > 1
    copy = (
        pictures.EpisodeTrace(picture, trace.env) if takes_env else pictures.EpisodeTrace(picture)
    )
    copy.rows = [row[: len(picture.names)] for row in trace.rows]
    return copy


@contextlib.contextmanager
def drawing_with(drawing: Drawing) -> Iterator[None]:
    """Every frame drawn with ``drawing``'s canvas and pictures while inside."""
    from sekai.envs.finance import _single, limit_order_book

    pictures = drawing.pictures
    patches = [
        (
            importlib.import_module("sekai.envs.classic_control._drawing"),
            "Canvas",
            drawing.raster.Canvas,
        ),
        (_single.FinanceEnv, "_frame", lambda env: _as_trace(env._trace, pictures).draw()),
        (
            limit_order_book,
            "draw_market",
            lambda trace, *args: pictures.draw_market(_as_trace(trace, pictures), *args),
        ),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, value in patches:
        setattr(owner, name, value)
    try:
        yield
    finally:
        for owner, name, value in saved:
            setattr(owner, name, value)


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


def cpu_ms(env: Any, repeats: int, drawing: Drawing) -> tuple[float, np.ndarray]:
    """The best of ``repeats`` frames' CPU milliseconds with ``drawing``, and the frame."""
    best = float("inf")
    with drawing_with(drawing):
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
    before, after = drawing_at(args.before), Drawing(_raster, _pictures)
    print(f"load average {os.getloadavg()[0]:.1f}; best of {args.repeats} frames, CPU time")
    print(f"{'env':22} {'steps':>5} {'before ms':>10} {'after ms':>9} {'speed-up':>9}", end="")
    print(f" {'max diff':>9}")
    for env_id in ENV_IDS:
        env, steps = played(env_id, args.steps)
        old_ms, new_ms = [], []
        for _ in range(2):  # interleaved: before, after, before, after
            ms, old_frame = cpu_ms(env, args.repeats, before)
            old_ms.append(ms)
            ms, new_frame = cpu_ms(env, args.repeats, after)
            new_ms.append(ms)
        difference = int(np.abs(old_frame.astype(int) - new_frame.astype(int)).max())
        old, new = min(old_ms), min(new_ms)
        print(f"{env_id:22} {steps:>5} {old:>10.1f} {new:>9.1f} {old / new:>8.1f}x {difference:>9}")
        env.close()


if __name__ == "__main__":
    main()
