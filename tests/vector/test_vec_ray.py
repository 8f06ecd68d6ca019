"""RayVecEnv on a local Ray (2 CPUs, no dashboard) started once for these tests: `nox -s ray`."""

from __future__ import annotations

import asyncio
import os

import numpy as np
import pytest
from ray_actors import kill

import sekai
import sekai.testing
from sekai.vector import SyncVecEnv, VecEnvWorkerError

pytestmark = [pytest.mark.needs("ray"), pytest.mark.usefixtures("local_ray")]


def _ray_vec(env_fns, **kwargs):
    from sekai.vector.ray import RayVecEnv

    return RayVecEnv(env_fns, num_workers=2, num_cpus=0.5, **kwargs)


def _cartpoles(n):
    return [lambda: sekai.make("CartPole-v1") for _ in range(n)]


@pytest.mark.parametrize("autoreset", [True, "next_step", False])
def test_same_seeds_give_the_same_trajectories_as_sync(autoreset):
    vec = _ray_vec(_cartpoles(5), autoreset=autoreset)
    sync = SyncVecEnv(_cartpoles(5), autoreset=autoreset)
    try:
        for result_ray, result_sync in zip(vec.reset(seed=3), sync.reset(seed=3), strict=True):
            np.testing.assert_equal(result_ray, result_sync)
        rng = np.random.default_rng(0)
        for _ in range(60):
            actions = rng.integers(0, 2, size=5)
            got, want = vec.step(actions), sync.step(actions)
            np.testing.assert_array_equal(got.observations, want.observations)
            np.testing.assert_array_equal(got.rewards, want.rewards)
            np.testing.assert_array_equal(got.terminated, want.terminated)
            np.testing.assert_array_equal(got.truncated, want.truncated)
            assert [sorted(i) for i in got.infos] == [sorted(i) for i in want.infos]
            if autoreset is False and got.dones.any():
                vec.reset(seed=7)
                sync.reset(seed=7)
    finally:
        vec.close()
        sync.close()


def test_check_vec_env_passes():
    sekai.testing.check_vec_env(_ray_vec(_cartpoles(3)))


def test_a_sub_env_error_names_its_rank_type_and_remote_traceback():
    vec = _ray_vec(_cartpoles(4))
    vec.reset(seed=0)
    with pytest.raises(VecEnvWorkerError) as caught:
        vec.call("no_such_method")
    assert caught.value.rank == 0
    assert caught.value.exc_type == "AttributeError"
    assert "no_such_method" in caught.value.remote_traceback
    assert isinstance(caught.value, AttributeError)
    vec.step(np.zeros(4, dtype=np.int64))  # the actors are still usable
    vec.close()


def test_a_killed_actor_raises_vec_env_worker_error_naming_its_sub_envs():
    vec = _ray_vec(_cartpoles(4))
    vec.reset(seed=0)
    kill(vec, 1)
    with pytest.raises(VecEnvWorkerError) as caught:
        vec.step(np.zeros(4, dtype=np.int64))
    assert caught.value.rank == 2
    assert "2-3" in str(caught.value)
    with pytest.raises(VecEnvWorkerError):  # broken for good: only close() is left
        vec.step(np.zeros(4, dtype=np.int64))
    vec.close()


def test_async_step_matches_step():
    vec = _ray_vec(_cartpoles(4))
    sync = SyncVecEnv(_cartpoles(4))

    async def run():
        await vec.async_reset(seed=1)
        return await vec.async_step(np.ones(4, dtype=np.int64))

    try:
        got = asyncio.run(run())
        sync.reset(seed=1)
        want = sync.step(np.ones(4, dtype=np.int64))
        np.testing.assert_array_equal(got.observations, want.observations)
        np.testing.assert_array_equal(got.rewards, want.rewards)
    finally:
        vec.close()
        sync.close()


@pytest.mark.needs("sekai-finance")
def test_make_vec_runs_a_native_env_per_actor_slice():
    vec = sekai.make_vec(
        "Portfolio-v0",
        8,
        vectorization_mode="ray",
        vector_kwargs={"num_workers": 2, "num_cpus": 0.5},
    )
    native = sekai.make_vec("Portfolio-v0", 4, vectorization_mode="native")
    try:
        observations, _ = vec.reset(seed=[1, 2, 3, 4, 5, 6, 7, 8])
        first, _ = native.reset(seed=[1, 2, 3, 4])  # actor 0's slice is this native env
        assert observations.shape == (8, *vec.single_observation_space.shape)
        np.testing.assert_array_equal(observations[:4], first)
        actions = np.stack([vec.single_action_space.sample() for _ in range(8)])
        result, want = vec.step(actions), native.step(actions[:4])
        np.testing.assert_array_equal(result.observations[:4], want.observations)
        np.testing.assert_array_equal(result.rewards[:4], want.rewards)
        assert len(result.infos) == 8
        assert [info["wealth"] for info in result.infos[:4]] == [i["wealth"] for i in want.infos]
        assert "wealth" in result.infos[7]
    finally:
        vec.close()
        native.close()


class _RecordingRay:
    """Stands for the ray module in _connect: records ray.init's arguments, joins nothing."""

    def __init__(self, initialized: bool = False) -> None:
        self.initialized = initialized
        self.inits: list[dict] = []

    def is_initialized(self) -> bool:
        return self.initialized

    def init(self, **kwargs):
        self.inits.append(kwargs)


@pytest.mark.parametrize(
    ("address", "environment", "want"),
    [
        (None, None, {"address": "local", "include_dashboard": False}),
        ("ray://head:10001", None, {"address": "ray://head:10001"}),
        (None, "10.0.0.7:6379", {"address": "10.0.0.7:6379"}),
        ("auto", "10.0.0.7:6379", {"address": "auto"}),  # the argument wins
    ],
)
def test_ray_joins_a_cluster_only_when_named_else_starts_a_local_one(
    monkeypatch, address, environment, want
):
    from sekai.vector import ray as ray_module

    recording = _RecordingRay()
    monkeypatch.setattr(ray_module, "ray", recording)
    if environment is None:
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
    else:
        monkeypatch.setenv("RAY_ADDRESS", environment)
    ray_module._connect(address)
    assert recording.inits == [want]


def test_ray_uses_the_runtime_this_process_has_joined(monkeypatch):
    from sekai.vector import ray as ray_module

    recording = _RecordingRay(initialized=True)
    monkeypatch.setattr(ray_module, "ray", recording)
    ray_module._connect("ray://elsewhere:10001")
    assert recording.inits == []


def test_without_an_address_a_new_local_ray_is_started_not_the_running_one(tmp_path):
    import subprocess
    import sys

    import ray

    script = (
        "import ray, sekai\n"
        "from sekai.vector.ray import RayVecEnv\n"
        "vec = RayVecEnv([lambda: sekai.make('CartPole-v1')], num_cpus=0.5)\n"
        "print(ray.get_runtime_context().gcs_address)\n"
        "vec.close()\n"
        "ray.shutdown()\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    running = ray.get_runtime_context().gcs_address  # the tests' own local Ray
    assert done.stdout.split()[-1] != running


# -- one slice server: the same commands get the same replies from ProcVecEnv and RayVecEnv -----
def test_proc_and_ray_reply_alike_to_the_same_commands():
    from slice_runs import command_sequence

    from sekai.vector.proc import ProcVecEnv

    with ProcVecEnv(_cartpoles(5), num_workers=2) as proc, _ray_vec(_cartpoles(5)) as ray_vec:
        assert command_sequence(proc) == command_sequence(ray_vec)


@pytest.mark.needs("sekai-finance")
def test_proc_and_ray_native_slices_reply_alike_to_the_same_commands():
    from slice_runs import command_sequence

    def make(mode, **vector_kwargs):
        return sekai.make_vec(
            "Portfolio-v0",
            8,
            vectorization_mode=mode,
            vector_kwargs={"num_workers": 2, **vector_kwargs},
        )

    with make("proc") as proc, make("ray", num_cpus=0.5) as ray_vec:
        assert proc.get_attr("num_envs") == ray_vec.get_attr("num_envs") == [4] * 8  # native
        assert command_sequence(proc) == command_sequence(ray_vec)


def test_a_traceback_from_a_notebook_cell_shows_the_raising_line():
    from slice_runs import CELL, RAISING_LINE, cell_env_class

    with _ray_vec([cell_env_class()] * 2) as vec:
        vec.reset(seed=0)
        with pytest.raises(VecEnvWorkerError) as caught:
            vec.step([0, 0])
    assert f'File "{CELL}", line 14, in step' in caught.value.remote_traceback
    assert RAISING_LINE in caught.value.remote_traceback
