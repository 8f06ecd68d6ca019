"""ProcVecEnv's workers serve their slices with the SliceServer RayVecEnv's actors use: native
slices, restarts that replay, and remote tracebacks that show their source lines."""

from __future__ import annotations

import os
import pickle
import signal

import numpy as np
import pytest
from proc_envs import CounterEnv
from proc_leaks import leaves_nothing_behind  # noqa: F401  (autouse fixture)
from slice_runs import CELL, RAISING_LINE, cell_env_class, command_sequence, replay
from test_proc_reliability import wait_exit
from test_proc_user_errors import run_script

import sekai
from sekai.vector.backend import dumps_slice
from sekai.vector.errors import VecEnvWorkerError
from sekai.vector.proc import ProcVecEnv

finance = pytest.mark.needs("sekai-finance")


def proc_portfolio(num_envs: int, **vector_kwargs):
    return sekai.make_vec(
        "Portfolio-v0",
        num_envs,
        vectorization_mode="proc",
        vector_kwargs={"num_workers": 2, **vector_kwargs},
    )


@finance
@pytest.mark.parametrize("shared_memory", [None, False])
def test_make_vec_runs_a_native_env_per_worker_slice(shared_memory):
    vec = proc_portfolio(8, shared_memory=shared_memory)
    native = sekai.make_vec("Portfolio-v0", 4, vectorization_mode="native")
    try:
        assert vec.shared_memory is (shared_memory is None)
        assert vec.get_attr("num_envs") == [4] * 8  # a single Portfolio env has no num_envs
        observations, _ = vec.reset(seed=[1, 2, 3, 4, 5, 6, 7, 8])
        first, _ = native.reset(seed=[1, 2, 3, 4])  # worker 0's slice is this native env
        np.testing.assert_array_equal(observations[:4], first)
        actions = np.stack([vec.single_action_space.sample() for _ in range(8)])
        result, want = vec.step(actions), native.step(actions[:4])
        np.testing.assert_array_equal(result.observations[:4], want.observations)
        np.testing.assert_array_equal(result.rewards[:4], want.rewards)
        assert [info["wealth"] for info in result.infos[:4]] == [i["wealth"] for i in want.infos]
        assert len(result.infos) == 8 and "wealth" in result.infos[7]
    finally:
        vec.close()
        native.close()


@finance
def test_a_native_slice_heals_as_one_native_env():
    with proc_portfolio(8, restart=True) as vec:
        vec.reset(seed=list(range(8)))
        pids = [handle.process.pid for handle in vec._pool.handles]
        os.kill(pids[1], signal.SIGKILL)
        assert wait_exit(pids[1], 5.0)
        actions = np.stack([vec.single_action_space.sample() for _ in range(8)])
        result = vec.step(actions)
        assert result.truncated[4:].all() and (result.rewards[4:] == 0).all()
        assert all(info["worker_restarted"] for info in result.infos[4:])
        assert not any("worker_restarted" in info for info in result.infos[:4])
        assert vec.get_attr("num_envs") == [4] * 8  # rebuilt as one native env


def _kill_worker(vec: ProcVecEnv, worker: int) -> None:
    pid = vec.get_attr("pid")[vec._slices[worker].start]
    os.kill(pid, signal.SIGKILL)
    assert wait_exit(pid, 5.0)


def test_two_runs_with_the_same_kills_give_the_same_observations():
    runs = []
    for _ in range(2):
        with ProcVecEnv([CounterEnv] * 4, num_workers=2, restart=True) as vec:
            runs.append(replay(vec, lambda worker, vec=vec: _kill_worker(vec, worker)))
    for got, want in zip(*runs, strict=True):
        np.testing.assert_array_equal(got, want)
    # the rebuilt sub-envs start episodes (count 0) from seeds of their own
    first_kill, second_kill = runs[0][11], runs[0][21]
    assert (first_kill[2:, 0] == 0).all() and (second_kill[2:, 0] == 0).all()
    assert not np.array_equal(first_kill[2:, 1:], second_kill[2:, 1:])


def test_a_traceback_from_a_notebook_cell_shows_the_raising_line():
    with ProcVecEnv([cell_env_class()] * 2, num_workers=2) as vec:
        vec.reset(seed=0)
        with pytest.raises(VecEnvWorkerError) as caught:
            vec.step([0, 0])
    assert f'File "{CELL}", line 14, in step' in caught.value.remote_traceback
    assert RAISING_LINE in caught.value.remote_traceback


def test_a_traceback_from_a_script_shows_the_raising_line(tmp_path):
    source = """
        import numpy as np
        import sekai


        class ScriptEnv(sekai.Env):
            observation_space = sekai.Box(-1.0, 1.0, shape=(1,))
            action_space = sekai.Discrete(2)

            def reset(self, *, seed=None, options=None):
                return sekai.ResetResult(np.zeros(1, np.float32), {})

            def step(self, action):
                raise RuntimeError("stepped on " + str(action))  # the line to see


        if __name__ == "__main__":
            with sekai.ProcVecEnv([ScriptEnv] * 2) as vec:
                vec.reset(seed=0)
                vec.step(np.array([0, 1]))
    """
    run = run_script(source, tmp_path)
    assert run.returncode == 1
    assert f'File "{tmp_path / "train.py"}", line 14, in step' in run.stderr
    assert 'raise RuntimeError("stepped on " + str(action))  # the line to see' in run.stderr
    assert "<dynamic-code>" not in run.stderr


def test_the_same_command_sequence_gives_the_same_replies_with_one_or_two_workers():
    with ProcVecEnv([CounterEnv] * 4, num_workers=2) as two, ProcVecEnv([CounterEnv] * 4) as four:
        assert command_sequence(two) == command_sequence(four)


def test_source_lines_travel_only_for_code_pickled_by_value():
    sources, _ = pickle.loads(dumps_slice([CounterEnv, cell_env_class()], True))
    assert list(sources) == [CELL]  # CounterEnv is imported by reference in the worker
    assert RAISING_LINE in "".join(sources[CELL])
