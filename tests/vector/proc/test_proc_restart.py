"""Self-healing ProcVecEnv (restart=...): a dead worker is replaced and training goes on."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
from typing import Any

import numpy as np
import pytest
from proc_envs import KILL, CounterEnv
from proc_leaks import (  # leaves_nothing_behind: autouse fixture
    leaves_nothing_behind,  # noqa: F401
    our_segments,
    running,
)
from restart_runs import KILLED, NUM_ENVS, NUM_WORKERS, check_healed, run
from test_proc_reliability import wait_exit

from sekai.vector import SyncVecEnv
from sekai.vector.errors import VecEnvWorkerError
from sekai.vector.proc import ProcVecEnv


def healing_vec(autoreset) -> ProcVecEnv:
    return ProcVecEnv(
        [CounterEnv] * NUM_ENVS, num_workers=NUM_WORKERS, autoreset=autoreset, restart=True
    )


def sigkill(vec: ProcVecEnv, rank: int) -> None:
    """SIGKILL the worker running sub-env ``rank`` and wait until it has exited."""
    pid = vec.get_attr("pid")[rank]
    os.kill(pid, signal.SIGKILL)
    assert wait_exit(pid, 5.0)


@pytest.mark.parametrize("autoreset", [True, "next_step", False])
def test_a_killed_worker_heals_and_the_others_go_on_exactly_as_without_the_crash(autoreset):
    with healing_vec(autoreset) as vec:
        reference = run(vec)
    with healing_vec(autoreset) as vec:
        healed = run(vec, lambda: sigkill(vec, KILLED[0]))
        pids = vec.get_attr("pid")
    assert not running(pids) and not our_segments()
    check_healed(reference, healed)


def test_a_crash_loop_hits_the_restart_limit_and_raises():
    with ProcVecEnv([CounterEnv] * 2, num_workers=2, restart=(2, 60.0), close_timeout=2.0) as vec:
        vec.reset(seed=0)
        for _ in range(2):  # sub-env 1 kills its own worker in the middle of the step
            result = vec.step([0, KILL])
            assert result.truncated.tolist() == [False, True]
            assert result.infos[1]["worker_restarted"] is True
        assert vec.get_attr("count") == [2, 0]  # the healed worker answers like any other
        with pytest.raises(VecEnvWorkerError, match=r"restarted 2 times within 60.0 s already"):
            vec.step([0, KILL])
        with pytest.raises(VecEnvWorkerError, match="gives up"):
            vec.step([0, 0])  # it stays broken
    assert not multiprocessing.active_children() and not our_segments()


def test_other_commands_are_answered_by_the_new_worker():
    with ProcVecEnv([CounterEnv] * 4, num_workers=2, restart=True) as vec:
        vec.reset(seed=0)
        vec.step([1, 1, 1, 1])
        pid = vec.get_attr("pid")[3]
        os.kill(pid, signal.SIGKILL)
        assert wait_exit(pid, 5.0)
        assert vec.get_attr("count") == [1, 1, 0, 0]  # rebuilt from the factories
        assert vec.get_attr("pid")[2] != pid
        assert vec.reset(seed=0).observations.shape == (4, 3)


@pytest.mark.parametrize("restart", [(0, 60.0), (2, 0), (2,), "yes", 3])
def test_restart_must_be_a_bool_or_a_count_and_a_window(restart):
    with pytest.raises(ValueError, match="restart must be False, True"):
        ProcVecEnv([CounterEnv], restart=restart)


def restart_seed(seed: int, restarts: int, rank: int) -> int:
    """The documented seed of sub-env ``rank`` rebuilt by restart number ``restarts``, from its
    last seed: ``numpy.random.SeedSequence((seed, restarts, rank))``."""
    return int(np.random.SeedSequence((seed, restarts, rank)).generate_state(1, np.uint64)[0])


def healed_run(vec: ProcVecEnv, resets: list) -> tuple[list[Any], list[list[int | None]]]:
    """``resets`` (blocking or awaited), a kill of the worker of sub-envs 2 and 3, then 20
    steps: the step results, and the seeds that each reset reported for sub-envs 2 and 3."""
    seeds = []
    for reset in resets:
        result = asyncio.run(reset(vec)) if asyncio.iscoroutinefunction(reset) else reset(vec)
        seeds.append([result.infos[rank]["seed"] for rank in (2, 3)])
    sigkill(vec, 2)
    actions = np.random.default_rng(0).integers(0, 2, size=(20, 4))
    return [vec.step(action) for action in actions], seeds


def sync_reset(seed):
    return lambda vec: vec.reset(seed=seed)


def async_reset(seed):
    async def reset(vec):
        return await vec.async_reset(seed=seed)

    return reset


@pytest.mark.parametrize("reset", [sync_reset, async_reset], ids=["reset", "async_reset"])
def test_rebuilt_sub_envs_are_seeded_from_the_latest_reset_seed(reset):
    with ProcVecEnv([CounterEnv] * 4, num_workers=2, restart=True) as vec:
        # reset() without a seed keeps each sub-env's last one
        steps, (first, last, _) = healed_run(vec, [reset(1), reset(2), reset(None)])
    assert None not in first + last and first != last
    actions = np.random.default_rng(0).integers(0, 2, size=(20, 4))
    for seeds, same in [(last, True), (first, False)]:
        restart_seeds = [restart_seed(s, 1, rank) for s, rank in zip(seeds, (2, 3), strict=True)]
        with SyncVecEnv([CounterEnv] * 2) as fresh:  # sub-envs 2, 3 as the 1st restart seeds them
            start = fresh.reset(seed=restart_seeds)
            want = [start.observations] + [
                fresh.step(action[2:]).observations for action in actions[1:]
            ]
        got = [step.observations[2:] for step in steps]
        assert np.array_equal(np.stack(got), np.stack(want)) == same
    assert steps[0].truncated.tolist() == [False, False, True, True]
