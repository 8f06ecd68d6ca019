"""Leak checks for the ProcVecEnv tests: worker processes and shared-memory segments."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from pathlib import Path

import pytest


def stray_processes() -> list[int]:
    """Processes left by ProcVecEnvs: children of this process or of its forkserver, other than
    the forkserver and the resource tracker themselves (the process table, read from /proc)."""
    from multiprocessing import forkserver, resource_tracker

    servers = {forkserver._forkserver._forkserver_pid, resource_tracker._resource_tracker._pid}
    parents = {os.getpid(), *servers}
    strays = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            ppid = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError):
            continue  # gone meanwhile
        pid = int(stat.parent.name)
        if ppid in parents and pid not in servers:
            strays.append(pid)
    return strays


@pytest.fixture(autouse=True)
def leaves_nothing_behind() -> Iterator[None]:
    """After every test: no worker process and no shared-memory segment of ours is left."""
    yield
    assert not multiprocessing.active_children()
    assert not stray_processes()
    assert not our_segments()


def our_segments() -> list[str]:
    """The shared-memory segments this process created and did not unlink."""
    return sorted(path.name for path in Path("/dev/shm").glob(f"sekai_{os.getpid()}_*"))


def running(pids: list[int]) -> list[int]:
    """The pids that still exist as processes (zombies count: nobody reaped them)."""
    return [pid for pid in set(pids) if os.path.exists(f"/proc/{pid}")]
