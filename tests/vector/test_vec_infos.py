"""What ``infos`` is on every backend, decided.

SyncVecEnv and AsyncVecEnv return a list: their sub-envs' dicts are at hand. ProcVecEnv and
native vector envs return a read-only sequence that builds each dict when first read, because a
list would cost a large share of every step whether or not the caller reads an info: the parent
would unpickle every worker's infos (ProcVecEnv), or split info arrays into one dict per sub-env
(native envs, thousands of sub-envs). A list subclass filled on first read is no way out: every
list method it does not override (copy, +, *, reversed, ...) and C code that reads a list's items
directly (C extensions, Cython) read its empty storage without calling any method, so they would
silently see no infos. Instead every backend's infos read like the list of dicts they stand for,
and ``list(infos)`` makes that list.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Callable, Sequence

import pytest
from vector_envs import DriftVecEnv, WalkEnv

from sekai.vector import AsyncVecEnv, ProcVecEnv, SyncVecEnv, VecEnv

BACKENDS: dict[str, Callable[[], VecEnv]] = {
    "sync": lambda: SyncVecEnv([WalkEnv] * 3),
    "async": lambda: AsyncVecEnv([WalkEnv] * 3),
    "proc": lambda: ProcVecEnv([WalkEnv] * 3, num_workers=2),
    "native": lambda: DriftVecEnv(3, max_episode_steps=2),
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_infos_read_like_the_list_of_dicts_they_stand_for(backend: str) -> None:
    with BACKENDS[backend]() as vec:
        vec.reset(seed=0)
        for step in range(4):  # across episode ends, whose infos hold final observations
            infos = vec.step([1, 0, 1]).infos
            read_first = infos[1] if step % 2 else None  # one read first, or all at once
            as_list = list(infos)
            assert read_first is None or read_first is as_list[1]
            # each info is built once, then kept, however it is reached
            assert [id(infos[index]) for index in range(3)] == [id(info) for info in as_list]
            assert isinstance(infos, Sequence) and len(infos) == 3
            assert all(type(info) is dict for info in as_list)
            assert list(infos) == as_list and infos == as_list and as_list == infos
            assert infos[-1] is as_list[2]
            assert type(infos[1:]) is list and infos[1:] == as_list[1:]
            assert [id(info) for info in reversed(infos)] == [id(info) for info in as_list[::-1]]
            assert repr(infos) == repr(as_list)
            for restored in (pickle.loads(pickle.dumps(infos)), copy.deepcopy(infos)):
                assert type(restored) is list and repr(restored) == repr(as_list)
            assert json.dumps(list(infos), default=repr) == json.dumps(as_list, default=repr)
        infos[0]["seen"] = True  # a caller's change to an info stays in it
        assert infos[0]["seen"] and next(iter(infos))["seen"]


def test_step_infos_are_a_list_only_where_the_dicts_are_at_hand() -> None:
    # (reset infos, rarer, are a list on ProcVecEnv too)
    kinds = {}
    for backend, make in BACKENDS.items():
        with make() as vec:
            vec.reset(seed=0)
            kinds[backend] = isinstance(vec.step([0, 1, 0]).infos, list)
    assert kinds == {"sync": True, "async": True, "proc": False, "native": False}
