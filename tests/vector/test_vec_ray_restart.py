"""Self-healing RayVecEnv (restart=...): a killed actor is replaced and training goes on.

On the local Ray of `nox -s ray`, like test_vec_ray.py.
"""

from __future__ import annotations

import asyncio
import os
import select
import sys
from typing import Any

import cloudpickle
import numpy as np
import pytest
from ray_actors import kill
from restart_runs import NUM_ENVS, NUM_WORKERS, check_healed, run

import sekai
from sekai.spaces import Box, Discrete
from sekai.vector import SyncVecEnv, VecEnvWorkerError

pytestmark = [pytest.mark.needs("ray"), pytest.mark.usefixtures("local_ray")]

# The actors cannot import this module: its env travels by value, like a class of a user's script.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


class CounterEnv(sekai.Env):
    """Counts steps; observations and episode ends are drawn from the env's seeded rng."""

    def __init__(self) -> None:
        self.observation_space = Box(-np.inf, np.inf, shape=(3,))
        self.action_space = Discrete(2)
        self.pid = os.getpid()  # of the actor holding it
        self.count = 0

    def _observation(self) -> np.ndarray:
        return np.array([self.count, *self.rng.normal(size=2)], dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._set_rng(seed)
        self.count = 0
        return sekai.ResetResult(self._observation(), {"seed": seed})

    def step(self, action: Any) -> sekai.StepResult:
        self.count += 1
        terminated = bool(self.rng.random() < 0.2)
        info = {"count": self.count, "action": int(action)}
        return sekai.StepResult(self._observation(), float(self.count), terminated, False, info)


def ray_vec(num_envs: int, num_workers: int, **kwargs: Any):
    from sekai.vector.ray import RayVecEnv

    return RayVecEnv([CounterEnv] * num_envs, num_workers=num_workers, num_cpus=0.5, **kwargs)


def all_exited(pids: list[int], timeout: float = 30.0) -> bool:
    """Block until every process of ``pids`` (not our children) has exited, or ``timeout``."""
    for pid in pids:
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            if not select.select([pidfd], [], [], timeout)[0]:
                return False
        finally:
            os.close(pidfd)
    return True


@pytest.mark.parametrize("autoreset", [True, "next_step", False])
def test_a_killed_actor_heals_and_the_others_go_on_exactly_as_without_the_crash(autoreset):
    # without the crash, the same seeds give SyncVecEnv's trajectories (test_vec_ray.py)
    with SyncVecEnv([CounterEnv] * NUM_ENVS, autoreset=autoreset) as sync:
        reference = run(sync)
    vec = ray_vec(NUM_ENVS, NUM_WORKERS, autoreset=autoreset, restart=True)
    pids = set(vec.get_attr("pid"))
    with vec:
        healed = run(vec, lambda: kill(vec, 1))
        pids |= set(vec.get_attr("pid"))
    assert len(pids) == NUM_WORKERS + 1  # the replacement is a new actor, in its own process
    assert all_exited(sorted(pids))  # no actor outlives close()
    check_healed(reference, healed)


def test_a_crash_loop_hits_the_restart_limit_and_raises():
    with ray_vec(4, 2, restart=(2, 60.0)) as vec:
        vec.reset(seed=0)
        for _ in range(2):
            kill(vec, 1)
            result = vec.step([0, 0, 0, 0])
            assert result.truncated.tolist() == [False, False, True, True]
            assert result.infos[3]["worker_restarted"] is True
        assert vec.get_attr("count") == [2, 2, 0, 0]  # the new actor answers like any other
        kill(vec, 0)  # a third restart within the window, of any actor, is one too many
        with pytest.raises(VecEnvWorkerError, match=r"restarted 2 times within 60.0 s already"):
            vec.step([0, 0, 0, 0])
        with pytest.raises(VecEnvWorkerError, match="gives up"):
            vec.step([0, 0, 0, 0])  # it stays broken


def test_other_commands_are_answered_by_the_new_actor(caplog):
    with ray_vec(4, 2, restart=True) as vec:
        vec.reset(seed=0)
        vec.step([1, 1, 1, 1])
        pid = vec.get_attr("pid")[2]
        kill(vec, 1)
        assert vec.get_attr("count") == [1, 1, 0, 0]  # rebuilt from the factories
        assert "running sub-envs 2-3 died (ActorDiedError); restarting it" in caplog.text
        assert vec.get_attr("pid")[2] != pid
        assert vec.reset(seed=0).observations.shape == (4, 3)


def test_async_step_heals_a_killed_actor():
    async def steps(vec, crash: bool):
        await vec.async_reset(seed=3)
        await vec.async_step([0, 1, 0, 1])
        if crash:
            kill(vec, 0)
        return await vec.async_step([1, 1, 1, 1])

    with ray_vec(4, 2, restart=True) as vec:
        want = asyncio.run(steps(vec, crash=False))
        got = asyncio.run(steps(vec, crash=True))
    np.testing.assert_array_equal(got.observations[2:], want.observations[2:])
    assert got.truncated.tolist() == [True, True, False, False]
    assert got.observations[:2, 0].tolist() == [0, 0]
    assert [info.get("worker_restarted") for info in got.infos] == [True, True, None, None]


def test_a_dead_actor_is_not_an_error_at_close_when_actors_heal():
    vec = ray_vec(4, 2, restart=True)
    vec.reset(seed=0)
    pids = vec.get_attr("pid")
    kill(vec, 1)
    vec.close()  # the dead actor has nothing left to close
    assert all_exited(pids)


@pytest.mark.needs("sekai-finance")
def test_a_native_slice_comes_back_as_one_native_env():
    vec = sekai.make_vec(
        "Portfolio-v0",
        8,
        vectorization_mode="ray",
        vector_kwargs={"num_workers": 2, "num_cpus": 0.5, "restart": True},
    )
    native = sekai.make_vec("Portfolio-v0", 4, vectorization_mode="native")
    try:
        vec.reset(seed=list(range(8)))
        actions = np.stack([vec.single_action_space.sample() for _ in range(8)])
        kill(vec, 1)
        result = vec.step(actions)
        assert result.truncated[4:].all() and (result.rewards[4:] == 0).all()
        assert all(info["worker_restarted"] for info in result.infos[4:])
        assert not any("worker_restarted" in info for info in result.infos[:4])
        # seeded as one native env of its slice, as before the crash
        observations, _ = vec.reset(seed=list(range(8)))
        np.testing.assert_array_equal(observations[4:], native.reset(seed=[4, 5, 6, 7])[0])
        np.testing.assert_array_equal(
            vec.step(actions).observations[4:], native.step(actions[4:]).observations
        )
    finally:
        vec.close()
        native.close()


@pytest.mark.parametrize("restart", [(0, 60.0), (2, 0), (2,), "yes", 3])
def test_restart_must_be_a_bool_or_a_count_and_a_window(restart):
    with pytest.raises(ValueError, match="restart must be False, True"):
        ray_vec(2, 1, restart=restart)


def test_two_runs_with_the_same_kills_give_the_same_observations():
    from slice_runs import replay

    runs = []
    for _ in range(2):
        with ray_vec(4, 2, restart=True) as vec:
            runs.append(replay(vec, lambda worker, vec=vec: kill(vec, worker)))
    for got, want in zip(*runs, strict=True):
        np.testing.assert_array_equal(got, want)
    first_kill, second_kill = runs[0][11], runs[0][21]
    assert (first_kill[2:, 0] == 0).all() and (second_kill[2:, 0] == 0).all()
    assert not np.array_equal(first_kill[2:, 1:], second_kill[2:, 1:])
