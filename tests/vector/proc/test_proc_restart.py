"""Self-healing ProcVecEnv (restart=...): a dead worker is replaced and training goes on."""

from __future__ import annotations

import multiprocessing
import os
import signal

import pytest
from proc_envs import KILL, CounterEnv
from proc_leaks import (  # leaves_nothing_behind: autouse fixture
    leaves_nothing_behind,  # noqa: F401
    our_segments,
    running,
)
from restart_runs import KILLED, NUM_ENVS, NUM_WORKERS, check_healed, run
from test_proc_reliability import wait_exit

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
