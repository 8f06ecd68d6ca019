"""What the tests of every slice-server backend share (ProcVecEnv's workers, RayVecEnv's actors):
a fixed command sequence, an env whose code a worker cannot read from disk, and replays with
kills.
"""

from __future__ import annotations

import linecache
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

# An env class as a notebook cell defines it: in __main__, its code in a "file" that only this
# process's linecache knows, so a worker must be sent its lines.
CELL = "<ipython-input-7-5eka1cafe>"
CELL_SOURCE = textwrap.dedent(
    """
    import numpy as np
    import sekai


    class CellEnv(sekai.Env):
        observation_space = sekai.Box(-1.0, 1.0, shape=(1,))
        action_space = sekai.Discrete(2)

        def reset(self, *, seed=None, options=None):
            return sekai.ResetResult(np.zeros(1, np.float32), {})

        def step(self, action):
            raise ValueError("the cell's env refuses to step")  # THE RAISING LINE
    """
)
RAISING_LINE = 'raise ValueError("the cell\'s env refuses to step")  # THE RAISING LINE'


def cell_env_class() -> type:
    """CellEnv, compiled from CELL_SOURCE under the cell's name, in a module named __main__."""
    lines = CELL_SOURCE.splitlines(keepends=True)
    linecache.cache[CELL] = (len(CELL_SOURCE), None, lines, CELL)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(CELL_SOURCE, CELL, "exec"), namespace)
    return namespace["CellEnv"]


def command_sequence(vec) -> list[Any]:
    """Every reply of a fixed sequence of commands (resets, steps, attributes, calls, an error)
    as plain values, to compare between backends."""
    replies: list[Any] = []
    n = vec.num_envs
    vec.single_action_space.seed(0)
    rng = np.random.default_rng(5)
    replies.append(_plain(vec.reset(seed=11)))
    for _ in range(12):
        replies.append(_plain(vec.step(_actions(vec))))
    replies.append(_plain(vec.reset(seed=[int(s) for s in rng.integers(0, 1000, size=n)])))
    replies.append(_plain(vec.step(_actions(vec))))
    replies.append(_outcome(lambda: vec.set_attr("marker", list(range(n)))))  # native: refused
    replies.append(_outcome(lambda: vec.get_attr("marker")))
    replies.append([repr(space) for space in vec.get_attr("action_space")])
    replies.append(_outcome(lambda: vec.call("no_such_method")))
    return replies


def _outcome(command: Callable[[], Any]) -> Any:
    """The command's value, or its error's type, rank and remote type."""
    try:
        return _plain(command())
    except Exception as error:  # a VecEnvWorkerError that is also an AttributeError
        return type(error).__name__, error.rank, error.exc_type


def _actions(vec) -> np.ndarray:
    return np.stack([vec.single_action_space.sample() for _ in range(vec.num_envs)])


def _plain(value: Any) -> Any:
    """Results, arrays and infos as nested lists and dicts."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in sorted(value.items())}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_plain(item) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def replay(vec, kill_worker: Callable[[int], None], steps: int = 30) -> list[np.ndarray]:
    """The observations of a run seeded with 3 in which worker 1 is killed at steps 10 and 20."""
    vec.single_action_space.seed(0)
    observations = [vec.reset(seed=3).observations]
    for step in range(steps):
        if step in (10, 20):
            kill_worker(1)
        observations.append(vec.step(_actions(vec)).observations)
    return observations
