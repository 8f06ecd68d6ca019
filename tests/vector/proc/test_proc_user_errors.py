"""What a user sees when things go wrong in the workers: a script without the main guard, a
remote exception, a hung worker, a dead one."""

from __future__ import annotations

import asyncio
import multiprocessing
import subprocess
import sys
import textwrap
import time
import traceback

import pytest
from proc_envs import KILL, CounterEnv, FragileCounterEnv, HangingEnv
from proc_leaks import (  # leaves_nothing_behind: autouse fixture
    leaves_nothing_behind,  # noqa: F401
    our_segments,
)

from sekai.vector import SyncVecEnv
from sekai.vector.errors import VecEnvWorkerError
from sekai.vector.proc import ProcVecEnv

SCRIPT = """
import sekai
print("top level ran", flush=True)
vec = sekai.ProcVecEnv([lambda: sekai.make("CartPole-v1")] * 4, num_workers=2{context})
print(vec.reset(seed=0).observations.shape, flush=True)
vec.close()
"""


def run_script(
    source: str, tmp_path, *, from_stdin: bool = False, as_module: bool = False
) -> subprocess.CompletedProcess:
    """Run ``source`` as train.py in ``tmp_path``: by its path, piped to ``python -`` or as
    ``python -m train``."""
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(source))
    command = [sys.executable, str(script)]
    if from_stdin:
        command = [sys.executable, "-"]
    elif as_module:
        command = [sys.executable, "-m", "train"]
    return subprocess.run(
        command,
        input=script.read_text() if from_stdin else None,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )


# Each process that runs the script's top level adds its pid to the marker file.
MARKER = """
import os
import sekai
with open("marker", "a") as marker:
    marker.write(f"{os.getpid()}\\n")
"""
TRAIN = """
print(os.getpid(), flush=True)
vec = sekai.ProcVecEnv([lambda: sekai.make("CartPole-v1")] * 4, num_workers=2, **OPTIONS)
vec.reset(seed=0)
print(vec.step([0, 1, 0, 1]).rewards, flush=True)
vec.close()
"""


def marked_script(options: dict, *, guard: bool) -> str:
    """MARKER, then TRAIN with ``options`` for the ProcVecEnv, under the main guard or not."""
    train = textwrap.indent(TRAIN, "    ") if guard else TRAIN
    guard_line = 'if __name__ == "__main__":' if guard else ""
    return f"{MARKER}OPTIONS = {options!r}\n{guard_line}{train}"


@pytest.mark.parametrize(
    ("context", "as_module"),
    [(None, False), ("forkserver", False), ("spawn", False), (None, True), ("spawn", True)],
)
def test_workers_do_not_rerun_a_script_without_the_main_guard(tmp_path, context, as_module):
    options = {} if context is None else {"context": context}
    run = run_script(marked_script(options, guard=False), tmp_path, as_module=as_module)
    assert run.returncode == 0, run.stderr
    pid, rewards = run.stdout.splitlines()
    assert rewards == "[1. 1. 1. 1.]"
    assert (tmp_path / "marker").read_text().splitlines() == [pid]  # the script's line alone


def test_a_restarted_worker_does_not_rerun_a_script_without_the_main_guard(tmp_path):
    heal = """
    import multiprocessing, signal
    vec = sekai.ProcVecEnv([lambda: sekai.make("CartPole-v1")] * 4, num_workers=2, restart=True)
    vec.reset(seed=0)
    workers = sorted(multiprocessing.active_children(), key=lambda worker: worker.name)
    os.kill(workers[1].pid, signal.SIGKILL)  # the one running sub-envs 2 and 3
    print(vec.step([0, 1, 0, 1]).truncated, flush=True)
    vec.close()
    """
    run = run_script(MARKER + textwrap.dedent(heal), tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout == "[False False  True  True]\n"  # the second worker was rebuilt
    assert len((tmp_path / "marker").read_text().splitlines()) == 1


@pytest.mark.parametrize(
    ("context", "as_module"), [("forkserver", False), ("spawn", False), ("forkserver", True)]
)
def test_with_import_main_every_worker_imports_the_main_module(tmp_path, context, as_module):
    script = marked_script({"context": context, "import_main": True}, guard=True)
    run = run_script(script, tmp_path, as_module=as_module)
    assert run.returncode == 0, run.stderr
    pid, rewards = run.stdout.splitlines()
    assert rewards == "[1. 1. 1. 1.]"
    lines = (tmp_path / "marker").read_text().splitlines()
    assert lines[0] == pid and len(set(lines[1:]) - {pid}) == 2  # then each of the 2 workers


def test_import_main_must_be_a_bool():
    with pytest.raises(TypeError, match="import_main must be True or False, got 1"):
        ProcVecEnv([CounterEnv], import_main=1)


@pytest.mark.parametrize("context", ["forkserver", "spawn"])
def test_with_import_main_a_script_without_the_main_guard_gets_one_error_naming_it(
    tmp_path, context
):
    run = run_script(SCRIPT.format(context=f", context={context!r}, import_main=True"), tmp_path)
    assert run.returncode == 1
    assert 'if __name__ == "__main__":' in run.stderr
    assert "leave import_main off" in run.stderr
    assert f"with import_main=True each {context!r} worker" in run.stderr
    assert run.stderr.count("Traceback (most recent call last)") == 1  # no flood from workers
    assert "bootstrapping phase" not in run.stderr


def test_the_same_script_works_with_fork(tmp_path):
    run = run_script(SCRIPT.format(context=', context="fork"'), tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["top level ran", "(4, 4)"]


def test_a_script_piped_to_python_dash_runs(tmp_path):
    run = run_script(SCRIPT.format(context=""), tmp_path, from_stdin=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["top level ran", "(4, 4)"]  # the workers did not re-run it


def test_the_remote_traceback_is_chained_as_the_cause_like_concurrent_futures():
    with ProcVecEnv([CounterEnv, FragileCounterEnv], num_workers=2) as vec:
        vec.reset(seed=0)
        with pytest.raises(VecEnvWorkerError) as caught:
            vec.step([0, 1])
    error = caught.value
    assert isinstance(error, ValueError)  # also the type the sub-env raised
    assert str(error) == "sub-env 1 raised ValueError: action 1 is not supported"
    printed = "".join(traceback.format_exception(error))
    remote, _, local = printed.partition("The above exception was the direct cause")
    assert 'raise ValueError("action 1 is not supported")' in remote
    assert "in step" in remote
    assert "VecEnvWorkerError[ValueError]: sub-env 1 raised ValueError" in local


def test_get_attr_of_a_missing_attribute_raises_attribute_error_on_every_backend():
    for vec in (SyncVecEnv([CounterEnv] * 2), ProcVecEnv([CounterEnv] * 2)):
        with vec, pytest.raises(AttributeError, match="nope"):
            vec.get_attr("nope")
    with ProcVecEnv([CounterEnv] * 2) as vec:
        with pytest.raises(VecEnvWorkerError) as caught:
            vec.call("nope")
        assert isinstance(caught.value, AttributeError) and caught.value.rank == 0
        assert vec.get_attr("count") == [0, 0]  # the workers stay usable


def test_a_worker_error_of_a_type_not_built_in_is_a_plain_worker_error():
    class Custom(Exception):
        pass

    def raise_custom() -> CounterEnv:
        raise Custom("no data feed")

    with pytest.raises(VecEnvWorkerError) as caught:
        ProcVecEnv([CounterEnv, raise_custom], num_workers=2)
    assert type(caught.value) is VecEnvWorkerError
    assert (caught.value.rank, caught.value.exc_type) == (1, "Custom")


def test_a_dead_worker_with_one_sub_env_is_named_in_the_singular():
    with ProcVecEnv([CounterEnv] * 3, num_workers=3, close_timeout=2.0) as vec:
        vec.reset(seed=0)
        with pytest.raises(VecEnvWorkerError, match=r"running sub-env 1 died \(exit code -9\)"):
            vec.step([0, KILL, 0])
    with ProcVecEnv([CounterEnv] * 4, num_workers=2, close_timeout=2.0) as vec:
        vec.reset(seed=0)
        with pytest.raises(VecEnvWorkerError, match=r"running sub-envs 2\.\.3 died"):
            vec.step([0, 0, KILL, 0])


def test_a_step_timeout_names_the_silent_sub_envs_and_leaves_the_vec_env_closable():
    vec = ProcVecEnv([CounterEnv, CounterEnv, HangingEnv], num_workers=3, timeout=2.0)
    vec.reset(seed=0)
    start = time.monotonic()
    with pytest.raises(VecEnvWorkerError) as caught:
        vec.step([0, 0, 0])
    assert 2.0 <= time.monotonic() - start < 10.0
    assert isinstance(caught.value, TimeoutError)
    assert caught.value.rank == 2
    assert str(caught.value).startswith("sub-env 2 did not answer within timeout=2.0 s")
    with pytest.raises(TimeoutError):
        vec.get_attr("count")  # it stays broken: every later call says so
    start = time.monotonic()
    vec.close()
    assert time.monotonic() - start < 3.0
    assert not our_segments() and not multiprocessing.active_children()


def test_an_async_step_times_out_too():
    async def main() -> None:
        with ProcVecEnv([CounterEnv, HangingEnv], num_workers=2, timeout=2.0) as vec:
            await vec.async_reset(seed=0)
            with pytest.raises(TimeoutError, match="sub-env 1 did not answer"):
                await vec.async_step([0, 0])

    asyncio.run(main())


def test_a_timeout_must_be_a_number_of_seconds():
    with pytest.raises(TypeError, match="timeout must be a number of seconds"):
        ProcVecEnv([CounterEnv], timeout="1")
    with pytest.raises(ValueError, match="timeout must be >= 0 seconds"):
        ProcVecEnv([CounterEnv], timeout=-1)
