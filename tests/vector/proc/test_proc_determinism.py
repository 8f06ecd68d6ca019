"""The same seed gives identical trajectories on sync, async and proc, whatever num_workers is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from proc_envs import (
    CounterEnv,
    EchoEnv,
)
from proc_leaks import leaves_nothing_behind  # noqa: F401 - autouse fixture

import sekai
from sekai.spaces import Box, Dict, Discrete, MultiBinary


def assert_same(a: Any, b: Any, where: str = "") -> None:
    """Equal values of equal types, recursing through dicts and sequences."""
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype, where
        np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), where
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, Sequence) and not isinstance(a, str | bytes):  # incl. lazy infos
        assert isinstance(b, Sequence) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{i}]")
    else:
        assert type(a) is type(b) and a == b, f"{where}: {a!r} != {b!r}"


def trajectory(vec: sekai.VecEnv, steps: int) -> list[Any]:
    """Reset with seed 7, then step with actions from a seeded batch action space."""
    actions = vec.batch_action_space
    actions.seed(3)
    with vec:
        results = [vec.reset(seed=7)]
        results += [vec.step(actions.sample()) for _ in range(steps)]
    assert any(result.dones.any() for result in results), "no autoreset was exercised"
    return [tuple(result) for result in results]


def cartpole() -> sekai.Env:
    return sekai.make("CartPole-v1")


@pytest.mark.parametrize("make_env", [cartpole, CounterEnv], ids=["CartPole-v1", "counter"])
def test_same_seed_same_trajectory_on_every_backend(make_env) -> None:
    fns = [make_env] * 5
    expected = trajectory(sekai.SyncVecEnv(fns), 40)
    runs = {
        "async": sekai.AsyncVecEnv(fns),
        "proc, 1 worker": sekai.ProcVecEnv(fns, num_workers=1),
        "proc, 2 workers": sekai.ProcVecEnv(fns, num_workers=2),
        "proc, 3 workers, no shared memory": sekai.ProcVecEnv(
            fns, num_workers=3, shared_memory=False
        ),
    }
    for name, vec in runs.items():
        assert_same(trajectory(vec, 40), expected, name)


@pytest.mark.parametrize(
    "action_space",
    [
        Box(-1.0, 1.0, shape=(2,)),
        Box(0, 9, shape=(2, 2), dtype=np.int16),
        MultiBinary(3),
        Dict(side=Discrete(3), size=Box(0.0, 1.0, shape=(1,))),
    ],
    ids=["Box", "int Box", "MultiBinary", "Dict"],
)
def test_sub_envs_get_the_same_action_values_and_types_as_on_sync(action_space) -> None:
    fns = [lambda: EchoEnv(action_space)] * 3
    with sekai.SyncVecEnv(fns) as sync, sekai.ProcVecEnv(fns, num_workers=2) as proc:
        actions = sync.batch_action_space
        actions.seed(0)
        for batch in [actions.sample() for _ in range(3)]:
            assert_same(proc.step(batch).infos, sync.step(batch).infos)


def test_an_object_array_of_actions_reaches_each_sub_env_as_its_element() -> None:
    """Workers get array slices of the actions; an object array's elements are Python objects
    that no raw-bytes copy could carry, so they must arrive as the objects themselves."""
    fns = [lambda: EchoEnv(Discrete(3))] * 3
    batch = np.array([2, (1, "a"), None], dtype=object)
    with sekai.SyncVecEnv(fns) as sync, sekai.ProcVecEnv(fns, num_workers=2) as proc:
        expected = [info["action"] for info in sync.step(batch).infos]
        assert (
            [info["action"] for info in proc.step(batch).infos] == expected == [2, (1, "a"), None]
        )
