"""ProcVecEnv's behaviour: results, errors with ranks, workers, shared memory, attributes."""

from __future__ import annotations

import functools
import multiprocessing
import os
import subprocess
import sys
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest
from proc_envs import (
    INTERRUPT,
    CompositeEnv,
    CounterEnv,
    FailingCloseEnv,
    FragileCounterEnv,
    FragileEnv,
    SequenceEnv,
    ThreadPoolsEnv,
)
from proc_leaks import (  # leaves_nothing_behind: autouse fixture
    leaves_nothing_behind,  # noqa: F401
    our_segments,
    running,
)

import sekai
from sekai.spaces import Box, Discrete
from sekai.vector.errors import VecEnvClosed, VecEnvWorkerError
from sekai.vector.proc import ProcVecEnv
from sekai.vector.sync import SyncVecEnv


def counts(result) -> list[int]:
    return [int(c) for c in result.observations[:, 0]]


SPEC_EXAMPLE = """
import numpy as np
import sekai


class FragileEnv(sekai.Env):
    def __init__(self):
        self.observation_space = sekai.Box(-1.0, 1.0, shape=(2,))
        self.action_space = sekai.Discrete(2)

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(2, np.float32), {})

    def step(self, action):
        if action == 1:
            raise ValueError("action 1 is not supported")
        return sekai.StepResult(np.zeros(2, np.float32), 0.0, False, False, {})


if __name__ == "__main__":
    with sekai.ProcVecEnv([FragileEnv] * 2) as vec:
        vec.reset(seed=0)
        try:
            vec.step(np.array([0, 1]))
        except sekai.VecEnvWorkerError as e:
            print(e.rank, e.exc_type)  # 1 ValueError
            # e.remote_traceback holds the worker's formatted traceback
        print(vec.step(np.array([0, 0])).rewards)  # [0. 0.]
"""


def test_the_spec_example_runs_as_a_script(tmp_path: Path) -> None:
    # the workers do not import the script: its class travels by value
    script = tmp_path / "fragile.py"
    script.write_text(SPEC_EXAMPLE)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert (run.stdout, run.stderr) == ("1 ValueError\n[0. 0.]\n", "")


def test_make_vec_builds_it_with_vector_kwargs() -> None:
    vec = sekai.make_vec(
        "CartPole-v1", num_envs=4, vectorization_mode="proc", vector_kwargs={"num_workers": 2}
    )
    with vec:
        assert isinstance(vec, ProcVecEnv)
        assert (vec.num_workers, vec.shared_memory) == (2, True)
        assert vec.spec.id == "CartPole-v1"
        vec.reset(seed=0)
        assert vec.step(np.zeros(4, np.int64)).observations.shape == (4, 4)


def test_spec_example_error_in_sub_env_1_then_the_next_step_works() -> None:
    with ProcVecEnv([FragileEnv] * 2) as vec:
        vec.reset(seed=0)
        with pytest.raises(VecEnvWorkerError) as caught:
            vec.step(np.array([0, 1]))
        assert (caught.value.rank, caught.value.exc_type) == (1, "ValueError")
        assert "Traceback" in caught.value.remote_traceback
        assert "action 1 is not supported" in caught.value.remote_traceback
        np.testing.assert_array_equal(vec.step(np.array([0, 0])).rewards, [0.0, 0.0])


def test_rank_is_the_sub_env_index_when_a_worker_runs_several() -> None:
    with ProcVecEnv([FragileCounterEnv] * 4, num_workers=2) as vec:
        vec.reset(seed=0)
        with pytest.raises(VecEnvWorkerError) as caught:
            vec.step([0, 0, 0, 1])
        assert caught.value.rank == 3
        with pytest.raises(VecEnvWorkerError) as caught:
            vec.step([0, 1, 0, 1])  # both workers fail: the lowest rank is raised
        assert caught.value.rank == 1


def test_after_an_error_every_worker_reply_was_read_and_workers_stay_in_step() -> None:
    with ProcVecEnv([FragileCounterEnv] * 4, num_workers=2) as vec:
        vec.reset(seed=0)
        with pytest.raises(VecEnvWorkerError):
            vec.step([0, 1, 0, 0])  # sub-env 1 fails before counting; the others step
        result = vec.step([0, 0, 0, 0])
        assert counts(result) == [2, 1, 2, 2]
        assert [info["count"] for info in result.infos] == [2, 1, 2, 2]


def test_results_match_sync_vec_env() -> None:
    fns = [CounterEnv] * 3
    with ProcVecEnv(fns, num_workers=2) as proc, SyncVecEnv(fns) as sync:
        assert proc.observation_space == sync.observation_space
        assert proc.batch_action_space == sync.batch_action_space
        for a, b in [(proc.reset(seed=3), sync.reset(seed=3))] + [
            (proc.step([0, 1, 0]), sync.step([0, 1, 0])) for _ in range(5)
        ]:
            assert type(a) is type(b)
            np.testing.assert_array_equal(a.observations, b.observations)
            assert a.observations.dtype == b.observations.dtype
            assert str(a.infos) == str(b.infos)
        assert proc.step([0, 0, 0]).rewards.dtype == np.float64
        assert repr(proc) == "ProcVecEnv(num_envs=3)"


def test_sub_envs_are_split_evenly_between_workers() -> None:
    with ProcVecEnv([CounterEnv] * 5, num_workers=2) as vec:
        pids = vec.get_attr("pid")
        assert vec.num_workers == 2
        assert pids[0] == pids[1] == pids[2] != pids[3] == pids[4]
        assert os.getpid() not in pids
    with ProcVecEnv([CounterEnv] * 3) as vec:
        assert vec.num_workers == 3
        assert len(set(vec.get_attr("pid"))) == 3


def test_shared_memory_is_used_when_the_space_allows_and_results_are_the_same() -> None:
    with (
        ProcVecEnv([CounterEnv] * 2) as shared,
        ProcVecEnv([CounterEnv] * 2, shared_memory=False) as piped,
    ):
        assert shared.shared_memory is True and piped.shared_memory is False
        assert our_segments()
        np.testing.assert_array_equal(
            shared.reset(seed=1).observations, piped.reset(seed=1).observations
        )
        np.testing.assert_array_equal(
            shared.step([0, 0]).observations, piped.step([0, 0]).observations
        )


def test_observations_are_copies_that_the_next_step_does_not_overwrite() -> None:
    with ProcVecEnv([CounterEnv] * 2, shared_memory=True) as vec:
        first = vec.reset(seed=0).observations
        kept = first.copy()
        second = vec.step([0, 0]).observations
        np.testing.assert_array_equal(first, kept)
        assert not np.shares_memory(first, second)
        assert counts(vec.step([0, 0])) == [2, 2] and list(second[:, 0]) == [1, 1]


def test_composite_observations_through_shared_memory_match_sync() -> None:
    with (
        ProcVecEnv([CompositeEnv] * 3, num_workers=2) as proc,
        SyncVecEnv([CompositeEnv] * 3) as sync,
    ):
        assert proc.shared_memory is True
        for a, b in [
            (proc.reset(seed=5).observations, sync.reset(seed=5).observations),
            (proc.step([0, 1, 0]).observations, sync.step([0, 1, 0]).observations),
        ]:
            assert a.keys() == b.keys()
            for key in ("prices", "regime"):
                np.testing.assert_array_equal(a[key], b[key])
                assert a[key].dtype == b[key].dtype
            for key in ("values", "mask"):
                np.testing.assert_array_equal(a["book"][key], b["book"][key])
                assert a["book"][key].dtype == b["book"][key].dtype
            assert isinstance(a["pair"], tuple)
            for x, y in zip(a["pair"], b["pair"], strict=True):
                np.testing.assert_array_equal(x, y)
                assert x.dtype == y.dtype


class _MisshapenObservationEnv(CounterEnv):
    """Resets to an observation of ``options["length"]`` values for its Box of shape (3,)."""

    def reset(self, *, seed=None, options=None):
        result = super().reset(seed=seed, options=options)
        length = options["length"]
        return result._replace(observation=np.resize(result.observation, length))


@pytest.mark.parametrize("num_workers", [1, 2])
@pytest.mark.parametrize("lengths", [(3, 1), (4, 2)], ids=["short", "same-total-size"])
def test_an_observation_of_the_wrong_shape_is_not_broadcast_into_shared_memory(
    num_workers: int, lengths: tuple[int, int]
) -> None:
    with ProcVecEnv([_MisshapenObservationEnv] * 2, num_workers=num_workers) as vec:
        assert vec.shared_memory
        with pytest.raises(VecEnvWorkerError) as caught:  # SyncVecEnv raises ValueError
            vec.reset(options=[{"length": length} for length in lengths])
        rank = 0 if lengths[0] != 3 else 1
        assert (caught.value.rank, caught.value.exc_type) == (rank, "ValueError")
        assert f"shape ({lengths[rank]},)" in str(caught.value)


class _Cycle:
    """An object that refers to itself: only the cyclic garbage collector frees it."""

    def __init__(self) -> None:
        self.me = self


class _CycleLeavingEnv(CounterEnv):
    """Leaves 1,000 reference cycles behind on every step, and counts those still alive."""

    def __init__(self) -> None:
        super().__init__()
        self.cycles: weakref.WeakSet[_Cycle] = weakref.WeakSet()

    def step(self, action):
        for _ in range(1000):
            self.cycles.add(_Cycle())
        return super().step(action)

    def live_cycles(self) -> int:
        return len(self.cycles)


def test_workers_still_collect_garbage_in_reference_cycles() -> None:
    # the workers leave long-lived objects out of collections, not the garbage of each step
    with ProcVecEnv([_CycleLeavingEnv] * 2, num_workers=2) as vec:
        vec.reset(seed=0)
        for _ in range(150):
            vec.step([0, 1])
        assert all(live < 150 * 1000 for live in vec.call("live_cycles"))


def test_a_space_that_cannot_be_shared_uses_pipes_or_refuses_shared_memory_true() -> None:
    with (
        ProcVecEnv([SequenceEnv] * 3, num_workers=2) as proc,
        SyncVecEnv([SequenceEnv] * 3) as sync,
    ):
        assert proc.shared_memory is False
        proc.reset(seed=0), sync.reset(seed=0)
        a, b = proc.step([0, 0, 0]).observations, sync.step([0, 0, 0]).observations
        assert isinstance(a, tuple) and len(a) == 3
        assert str(a) == str(b)
    with pytest.raises(TypeError, match="shared_memory=True"):
        ProcVecEnv([SequenceEnv] * 2, shared_memory=True)
    assert not our_segments()
    assert not multiprocessing.active_children()


def test_get_attr_set_attr_and_call_reach_every_sub_env() -> None:
    with ProcVecEnv([CounterEnv] * 3, num_workers=2) as vec:
        vec.reset(seed=0)
        vec.set_attr("count", [10, 20, 30])
        assert vec.get_attr("count") == [10, 20, 30]
        vec.set_attr("count", 7)
        assert vec.call("add", 1, b=2) == [10, 10, 10]
        assert vec.call("count") == [7, 7, 7]  # not callable: its value
        vec.set_attr("scale", lambda x: 2 * x)  # values go with cloudpickle
        assert [f(3) for f in vec.get_attr("scale")] == [6, 6, 6]
        with pytest.raises(VecEnvWorkerError) as caught:
            vec.get_attr("missing")
        assert caught.value.exc_type == "AttributeError" and caught.value.rank == 0
        with pytest.raises(ValueError, match="one per sub-env"):
            vec.set_attr("count", [1, 2])
        assert vec.get_attr("count") == [7, 7, 7]


def test_large_messages_cross_in_both_directions() -> None:
    big = np.arange(2_000_000, dtype=np.float64)  # 16 MB, far beyond a socket buffer
    with ProcVecEnv([CounterEnv] * 2) as vec:
        vec.set_attr("payload", [big, big[::-1].copy()])
        first, second = vec.get_attr("payload")
        np.testing.assert_array_equal(first, big)
        np.testing.assert_array_equal(second, big[::-1])
        assert vec.call("add", 1) == [1, 1]  # the channels are still in step


def test_factories_travel_with_cloudpickle_lambdas_and_local_classes() -> None:
    class LocalEnv(CounterEnv):
        def step(self, action):
            result = super().step(action)
            return result._replace(reward=-1.0)

    offset = 4
    fns = [lambda: LocalEnv(), lambda: LocalEnv()]
    with ProcVecEnv(fns, num_workers=1, autoreset=False) as vec:
        vec.reset(options={"start": offset})
        result = vec.step([0, 0])
        np.testing.assert_array_equal(result.rewards, [-1.0, -1.0])
        assert counts(result) == [offset + 1] * 2


def test_an_unpicklable_action_fails_before_anything_is_sent() -> None:
    with ProcVecEnv([CounterEnv] * 2) as vec:
        vec.reset(seed=0)
        with pytest.raises(TypeError, match="picklable"):
            vec.step([0, threading.Lock()])
        assert counts(vec.step([0, 0])) == [1, 1]  # neither worker stepped


def test_keyboard_interrupt_during_step_leaves_the_next_command_in_step() -> None:
    make = functools.partial(CounterEnv, os.getpid())
    with ProcVecEnv([make] * 2) as vec:
        vec.reset(seed=0)
        with pytest.raises(KeyboardInterrupt):
            vec.step([INTERRUPT, 0])  # sub-env 0 sends SIGINT here before replying
        result = vec.step([0, 0])
        assert counts(result) == [2, 2]
        assert vec.get_attr("count") == [2, 2]


def test_a_failing_factory_raises_with_its_rank_and_leaves_nothing_behind() -> None:
    def broken() -> CounterEnv:
        raise OSError("no data feed")

    with pytest.raises(VecEnvWorkerError) as caught:
        ProcVecEnv([CounterEnv, CounterEnv, broken], num_workers=2)
    assert (caught.value.rank, caught.value.exc_type) == (2, "OSError")
    assert "no data feed" in str(caught.value)
    assert not our_segments()
    assert not multiprocessing.active_children()


def test_factories_sharing_one_env_in_a_worker_are_refused_as_in_sync() -> None:
    shared = CounterEnv()  # pickled once with the worker's slice, so both would step one env
    with pytest.raises(VecEnvWorkerError) as caught:
        ProcVecEnv([lambda: shared, lambda: shared], num_workers=1)
    assert (caught.value.rank, caught.value.exc_type) == (1, "ValueError")
    assert "same env object" in str(caught.value)
    assert not multiprocessing.active_children()


def test_sub_envs_must_agree_on_their_spaces() -> None:
    class Other(CounterEnv):
        def __init__(self) -> None:
            super().__init__()
            self.action_space = Discrete(5)

    with pytest.raises(ValueError, match="same action_space"):
        ProcVecEnv([CounterEnv, Other])
    assert not multiprocessing.active_children()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"num_workers": 0}, ValueError, "num_workers"),
        ({"num_workers": 3}, ValueError, "num_workers"),
        ({"num_workers": 1.5}, TypeError, "num_workers"),
        ({"context": "teleport"}, ValueError, "context"),
        ({"close_timeout": -1.0}, ValueError, "close_timeout"),
        ({"shared_memory": "yes"}, TypeError, "shared_memory"),
        ({"autoreset": "sometimes"}, ValueError, "autoreset"),
    ],
)
def test_bad_arguments_are_refused_before_any_worker_starts(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        ProcVecEnv([CounterEnv] * 2, **kwargs)
    assert not multiprocessing.active_children()


def test_unpicklable_env_fns_fail_before_any_worker_starts() -> None:
    lock = threading.Lock()
    with pytest.raises(TypeError, match="env_fns must be picklable"):
        ProcVecEnv([lambda: CounterEnv(lock)] * 2)
    assert not multiprocessing.active_children()


def test_env_fns_must_be_a_non_empty_list_of_callables() -> None:
    with pytest.raises(ValueError, match="at least one"):
        ProcVecEnv([])
    with pytest.raises(TypeError, match="callables"):
        ProcVecEnv([CounterEnv()])


def test_close_closes_sub_envs_once_and_later_commands_raise() -> None:
    vec = ProcVecEnv([CounterEnv] * 2)
    pids = vec.get_attr("pid")
    vec.close()
    vec.close()
    assert vec.closed and not running(pids) and not our_segments()
    with pytest.raises(VecEnvClosed):
        vec.step([0, 0])
    with pytest.raises(VecEnvClosed):
        vec.get_attr("count")


def test_a_sub_env_close_error_is_raised_after_everything_is_released() -> None:
    vec = ProcVecEnv([CounterEnv, FailingCloseEnv, FailingCloseEnv], num_workers=2)
    pids = vec.get_attr("pid")
    with pytest.raises(VecEnvWorkerError) as caught:
        vec.close()
    assert (caught.value.rank, caught.value.exc_type) == (1, "RuntimeError")
    assert vec.closed and not running(pids) and not our_segments()


def test_fork_context_works_too() -> None:
    with ProcVecEnv([CounterEnv] * 2, context="fork", num_workers=2) as vec:
        vec.reset(seed=0)
        assert counts(vec.step([0, 0])) == [1, 1]


def test_top_level_name() -> None:
    assert sekai.ProcVecEnv is ProcVecEnv
    assert isinstance(CounterEnv().observation_space, Box)


@pytest.mark.parametrize("context", ["forkserver", "fork", "spawn"])
def test_workers_run_blas_and_openmp_pools_of_one_thread(context: str) -> None:
    """Workers run one per core side by side, so a pool of one thread per core in each would
    fight the others for the cores; the parent keeps its own settings."""
    parent_variable = os.environ.get("OMP_NUM_THREADS")
    with ProcVecEnv([ThreadPoolsEnv] * 2, num_workers=2, context=context) as vec:
        reports = vec.call("thread_pools")
    for report in reports:
        assert report["threads"], "NumPy's BLAS pool should be loaded in the worker"
        assert set(report["threads"].values()) == {1}
        assert report["OMP_NUM_THREADS"] == "1"
    assert os.environ.get("OMP_NUM_THREADS") == parent_variable
