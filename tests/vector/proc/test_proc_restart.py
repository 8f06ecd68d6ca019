"""Self-healing ProcVecEnv (restart=...): a dead worker is replaced and training goes on."""

from __future__ import annotations

import multiprocessing
import os
import signal

import numpy as np
import pytest
from proc_envs import KILL, CounterEnv
from proc_leaks import (  # leaves_nothing_behind: autouse fixture
    leaves_nothing_behind,  # noqa: F401
    our_segments,
    running,
)
from test_proc_reliability import wait_exit

from sekai.vector.errors import VecEnvWorkerError
from sekai.vector.proc import ProcVecEnv

STEPS = 1000
CRASH_AT = 400
NUM_ENVS = 6  # three workers of two sub-envs; the middle one (sub-envs 2, 3) is killed
KILLED = [2, 3]
SURVIVORS = [0, 1, 4, 5]


def run(autoreset, *, crash: bool) -> list[tuple]:
    """Every step's result, SIGKILLing the middle worker between steps CRASH_AT-1 and CRASH_AT."""
    actions = np.random.default_rng(1).integers(0, 2, size=(STEPS, NUM_ENVS))
    results = []
    with ProcVecEnv(
        [CounterEnv] * NUM_ENVS, num_workers=3, autoreset=autoreset, restart=True
    ) as vec:
        vec.reset(seed=7)
        for step, action in enumerate(actions):
            if autoreset is False and step > 0:  # the caller resets; when a survivor finishes,
                last = results[-1]  # so that both runs reset at the same steps
                if (last[2] | last[3])[SURVIVORS].any():
                    vec.reset()
            if crash and step == CRASH_AT:
                pid = vec.get_attr("pid")[KILLED[0]]
                os.kill(pid, signal.SIGKILL)
                assert wait_exit(pid, 5.0)
            result = vec.step(action)
            results.append(
                (
                    result.observations,
                    result.rewards,
                    result.terminated,
                    result.truncated,
                    list(result.infos),
                )
            )
        pids = vec.get_attr("pid")
    assert not running(pids) and not our_segments()
    return results


def same(a, b) -> bool:
    """Equal infos, whose values may be arrays (final_observation) or dicts (final_info)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return bool(np.array_equal(a, b))


@pytest.mark.parametrize("autoreset", [True, "next_step", False])
def test_a_killed_worker_heals_and_the_others_go_on_exactly_as_without_the_crash(autoreset):
    reference, healed = run(autoreset, crash=False), run(autoreset, crash=True)
    for step, (want, got) in enumerate(zip(reference, healed, strict=True)):
        np.testing.assert_array_equal(got[0][SURVIVORS], want[0][SURVIVORS])
        for field in (1, 2, 3):
            np.testing.assert_array_equal(got[field][SURVIVORS], want[field][SURVIVORS])
        assert all(same(got[4][i], want[4][i]) for i in SURVIVORS)
        if step == CRASH_AT:
            assert got[3][KILLED].all() and not got[2][KILLED].any()
            assert (got[1][KILLED] == 0).all()
            for i in KILLED:
                assert got[4][i]["worker_restarted"] is True
                assert "final_observation" not in got[4][i]
                assert got[0][i][0] == 0  # the first observation of a new episode
        else:
            assert not any("worker_restarted" in info for info in got[4])


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
