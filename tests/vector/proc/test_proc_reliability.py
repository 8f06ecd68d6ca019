"""ProcVecEnv leaves nothing behind: killed or stubborn workers, a dead parent, many cycles."""

from __future__ import annotations

import functools
import gc
import multiprocessing
import os
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from proc_envs import (
    INTERRUPT,
    KILL,
    CounterEnv,
    HangingEnv,
    InterruptedCloseEnv,
    StubbornEnv,
)
from proc_leaks import (  # leaves_nothing_behind: autouse fixture
    leaves_nothing_behind,  # noqa: F401
    our_segments,
    running,
)

from sekai.vector import SyncVecEnv
from sekai.vector.errors import VecEnvWorkerError
from sekai.vector.proc import ProcVecEnv

HERE = Path(__file__).resolve().parent


def wait_exit(pid: int, timeout: float) -> bool:
    """Block until process ``pid`` (not our child) has exited, or ``timeout`` passes."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([pidfd], [], [], timeout)[0])
    finally:
        os.close(pidfd)


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def rss_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_a_killed_worker_raises_on_the_next_call_and_close_returns_in_time() -> None:
    vec = ProcVecEnv([CounterEnv] * 4, num_workers=2, close_timeout=2.0)
    vec.reset(seed=0)
    pids = vec.get_attr("pid")
    os.kill(pids[2], signal.SIGKILL)
    assert wait_exit(pids[2], 5.0)
    with pytest.raises(VecEnvWorkerError) as caught:
        vec.step([0, 0, 0, 0])
    assert caught.value.rank == 2  # the dead worker's first sub-env
    assert "died" in str(caught.value)
    with pytest.raises(VecEnvWorkerError):
        vec.get_attr("count")  # it stays broken: every later call says so
    start = time.monotonic()
    vec.close()
    assert time.monotonic() - start < 2.0
    assert not running(pids) and not our_segments()
    assert not multiprocessing.active_children()


def test_a_worker_killed_in_the_middle_of_a_step_raises_that_step() -> None:
    with ProcVecEnv([CounterEnv] * 2, close_timeout=2.0) as vec:
        vec.reset(seed=0)
        pids = vec.get_attr("pid")
        with pytest.raises(VecEnvWorkerError) as caught:
            vec.step([0, KILL])  # sub-env 1 kills its own worker during the step
        assert caught.value.rank == 1
    assert not running(pids) and not our_segments()


def test_a_worker_that_ignores_close_is_terminated_then_killed() -> None:
    vec = ProcVecEnv([CounterEnv, StubbornEnv], close_timeout=0.3)
    pids = vec.get_attr("pid")
    start = time.monotonic()
    vec.close()
    elapsed = time.monotonic() - start
    assert 0.3 <= elapsed < 3.0
    assert not running(pids) and not our_segments()
    assert not multiprocessing.active_children()


def test_ctrl_c_interrupts_the_wait_for_a_hung_worker_and_close_stops_it() -> None:
    vec = ProcVecEnv([functools.partial(CounterEnv, os.getpid()), HangingEnv], close_timeout=0.2)
    pids = vec.get_attr("pid")
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        vec.step([INTERRUPT, 0])  # sub-env 0 interrupts us; sub-env 1 does not answer
    vec.close()  # the hung worker is still busy with that step: terminated
    assert time.monotonic() - start < 10.0
    assert not running(pids) and not our_segments()


def test_ctrl_c_during_close_still_stops_every_worker_and_frees_the_segment() -> None:
    vec = ProcVecEnv(
        [CounterEnv, functools.partial(InterruptedCloseEnv, os.getpid())], close_timeout=30.0
    )
    pids = vec.get_attr("pid")
    with pytest.raises(KeyboardInterrupt):
        vec.close()  # sub-env 1 interrupts us while we wait for it
    assert vec.closed and not running(pids) and not our_segments()
    assert not multiprocessing.active_children()
    vec.close()


@pytest.mark.parametrize("context", ["forkserver", "fork"])
def test_workers_exit_when_the_parent_process_dies(context: str) -> None:
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        sys.path.insert(0, {str(HERE)!r})
        from proc_envs import CounterEnv
        from sekai.vector.proc import ProcVecEnv

        if __name__ == "__main__":
            vec = ProcVecEnv([CounterEnv] * 2, context={context!r})
            vec.reset(seed=0)
            print(*vec.get_attr("pid"), flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    parent = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert parent.returncode == -signal.SIGKILL, parent.stderr
    pids = [int(pid) for pid in parent.stdout.split()]
    assert len(pids) == 2
    for pid in pids:
        assert wait_exit(pid, 10.0), f"worker {pid} outlived its parent"
    assert "Traceback" not in parent.stderr


@pytest.mark.parametrize("context", ["forkserver", "fork", "spawn"])
def test_the_resource_tracker_has_nothing_to_clean_up_or_warn_about(context: str) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(HERE)!r})
        from proc_envs import CounterEnv
        from sekai.vector.proc import ProcVecEnv

        if __name__ == "__main__":
            with ProcVecEnv([CounterEnv] * 3, num_workers=2, context={context!r}) as vec:
                vec.reset(seed=0)
                print(vec.shared_memory, vec.step([0, 0, 0]).rewards)
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "True [1. 1. 1.]\n"
    assert run.stderr == ""  # no "leaked shared_memory" warning, no failed unlink


def test_workers_ignore_sigint_sent_to_them_and_keep_serving() -> None:
    actions = np.random.default_rng(0).integers(0, 2, size=(5, 4))
    with SyncVecEnv([CounterEnv] * 4) as reference:
        reference.reset(seed=0)
        want = [reference.step(action).observations for action in actions]
    with ProcVecEnv([CounterEnv] * 4, num_workers=2) as vec:
        vec.reset(seed=0)
        pids = vec.get_attr("pid")
        for pid in set(pids):
            os.kill(pid, signal.SIGINT)
        got = [vec.step(action).observations for action in actions]
        assert vec.get_attr("pid") == pids  # the same workers, none replaced
    np.testing.assert_array_equal(np.stack(got), np.stack(want))


CTRL_C_SCRIPT = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from proc_envs import CounterEnv
from sekai.vector.proc import ProcVecEnv

vec = ProcVecEnv([CounterEnv] * 4, num_workers=2)
vec.reset(seed=0)
pids = vec.get_attr("pid")
try:
    vec.step([0, 0, 0, 0])
    print("ready", flush=True)
    while True:
        vec.step([0, 0, 0, 0])
except KeyboardInterrupt:
    print("interrupted", flush=True)
print("same workers", vec.get_attr("pid") == pids, vec.step([1, 1, 1, 1]).rewards.shape)
vec.close()
print("closed")
"""


def process_group(pgid: int) -> list[int]:
    """The processes in process group ``pgid`` (the process table, read from /proc)."""
    members = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            if os.getpgid(int(entry.name)) == pgid:
                members.append(int(entry.name))
        except ProcessLookupError:
            continue  # gone meanwhile
    return members


def test_ctrl_c_while_stepping_reaches_the_parent_alone_which_goes_on_and_closes_cleanly() -> None:
    script = subprocess.Popen(
        [sys.executable, "-c", CTRL_C_SCRIPT],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        assert script.stdout is not None
        assert script.stdout.readline() == "ready\n"  # it has stepped, and steps on
        group = process_group(script.pid)  # the script, its workers, forkserver, tracker
        assert len(group) >= 4
        os.killpg(script.pid, signal.SIGINT)  # Ctrl-C in the terminal
        out, err = script.communicate(timeout=60)
    finally:
        if script.poll() is None:
            script.kill()
            script.wait()
    assert (script.returncode, err) == (0, "")
    assert out.splitlines() == ["interrupted", "same workers True (4,)", "closed"]
    for pid in group:  # nothing of the script outlives it
        assert wait_exit(pid, 10.0), f"process {pid} of the script's group outlived it"


def test_a_vec_env_dropped_without_close_is_cleaned_up_when_collected() -> None:
    vec = ProcVecEnv([CounterEnv] * 2)
    pids = vec.get_attr("pid")
    del vec
    gc.collect()
    assert not running(pids) and not our_segments()


def test_a_vec_env_never_closed_is_cleaned_up_at_interpreter_exit() -> None:
    script = textwrap.dedent(
        f"""
        import os, sys
        sys.path.insert(0, {str(HERE)!r})
        from proc_envs import CounterEnv
        from sekai.vector.proc import ProcVecEnv

        if __name__ == "__main__":
            vec = ProcVecEnv([CounterEnv] * 2)
            vec.reset(seed=0)
            print(os.getpid(), *vec.get_attr("pid"), flush=True)
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stderr) == (0, "")
    parent, *workers = (int(pid) for pid in run.stdout.split())
    assert not running(workers)
    assert not list(Path("/dev/shm").glob(f"sekai_{parent}_*"))


def test_repeated_create_step_close_cycles_leak_nothing() -> None:
    def cycle() -> None:
        with ProcVecEnv([CounterEnv] * 2, num_workers=1) as vec:
            vec.reset(seed=0)
            vec.step([0, 0])

    for _ in range(10):  # warm up: the forkserver, imports, allocator pools
        cycle()
    fds, rss = open_fds(), rss_bytes()
    for _ in range(200):
        cycle()
    assert open_fds() == fds
    assert not multiprocessing.active_children()
    assert not our_segments()
    assert rss_bytes() - rss < 8 * 2**20
