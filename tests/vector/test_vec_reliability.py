"""Repeated create/step/close cycles leave file descriptors, threads and memory flat."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable

import numpy as np
import pytest
from vector_envs import DriftVecEnv, WalkEnv

from sekai.vector import AsyncVecEnv, SyncVecEnv, VecEnv

CYCLES = 2000


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _cycle(build: Callable[[], VecEnv]) -> None:
    vec = build()
    vec.reset(seed=0)
    for _ in range(3):
        vec.step(np.ones(vec.num_envs, int))
    vec.close()


BUILDERS = {
    "sync": lambda: SyncVecEnv([lambda: WalkEnv(2)] * 2),
    "async": lambda: AsyncVecEnv([lambda: WalkEnv(2)] * 2),
    "native": lambda: DriftVecEnv(8, max_episode_steps=2),
}


@pytest.mark.parametrize("name", list(BUILDERS))
def test_create_step_close_cycles_leave_resources_flat(name):
    build = BUILDERS[name]
    for _ in range(200):  # warm up caches and allocator pools before measuring
        _cycle(build)
    gc.collect()
    fds, threads, rss = _open_fds(), threading.active_count(), _rss_bytes()
    for _ in range(CYCLES):
        _cycle(build)
    gc.collect()
    assert _open_fds() == fds
    assert threading.active_count() == threads
    assert _rss_bytes() - rss < 4 * 2**20, "RSS grew by more than 4 MiB over 2,000 cycles"
