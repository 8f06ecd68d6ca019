"""make_vec(): the vectorization modes, kwargs routing, vec.spec and sampler spawning."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from vector_envs import DriftVecEnv, WalkEnv

import sekai
from sekai.registration import EnvSpec
from sekai.vector import AsyncVecEnv, SyncVecEnv, make_vec


class SamplerWalkEnv(WalkEnv):
    def __init__(self, length: int = 3, sampler: Any = None) -> None:
        super().__init__(length)
        self.sampler = sampler


class CountingSampler:
    """spawn() hands out numbered copies."""

    def __init__(self, number: int = 0) -> None:
        self.number = number
        self.spawned = 0

    def spawn(self) -> CountingSampler:
        self.spawned += 1
        return CountingSampler(self.spawned)


class DriftWithKwargs(DriftVecEnv):
    def __init__(self, num_envs: int, *, length: int = 3, **kwargs: Any) -> None:
        super().__init__(num_envs, **kwargs)
        self.length = length


WALK = EnvSpec("vectest/Walk-v0", entry_point=SamplerWalkEnv, max_episode_steps=50)
DRIFT = EnvSpec(
    "vectest/Drift-v0",
    entry_point=WalkEnv,
    vector_entry_point=DriftWithKwargs,
    max_episode_steps=100,
    kwargs={"length": 4},
)


def test_the_default_mode_is_native_when_there_is_one_and_no_wrappers():
    vec = make_vec(DRIFT, 3)
    assert type(vec) is DriftWithKwargs and vec.num_envs == 3
    assert vec.max_episode_steps == 100 and vec.length == 4  # registered kwargs + time limit
    wrapped = make_vec(DRIFT, 3, wrappers=[sekai.OrderEnforcing])
    assert type(wrapped) is SyncVecEnv
    assert type(make_vec(WALK, 2)) is SyncVecEnv


def test_native_aliases_and_their_errors():
    assert type(make_vec(DRIFT, 2, vectorization_mode="native")) is DriftWithKwargs
    assert type(make_vec(DRIFT, 2, vectorization_mode="vector_entry_point")) is DriftWithKwargs
    with pytest.raises(ValueError, match="no native vector implementation"):
        make_vec(WALK, 2, vectorization_mode="native")
    with pytest.raises(ValueError, match="vector wrappers"):
        make_vec(DRIFT, 2, vectorization_mode="native", wrappers=[sekai.OrderEnforcing])


def test_native_kwargs_routing():
    vec = make_vec(
        DRIFT, 2, length=9, max_episode_steps=7, vector_kwargs={"autoreset": "next_step"}
    )
    assert (vec.length, vec.max_episode_steps, vec.autoreset) == (9, 7, "next_step")
    assert vec.spec.kwargs == {"length": 9} and vec.spec.max_episode_steps == 7
    assert make_vec(DRIFT, 2).spec == DRIFT


class DriftWithHistory(DriftWithKwargs):
    def __init__(self, num_envs: int, *, history: list[int], **kwargs: Any) -> None:
        super().__init__(num_envs, **kwargs)
        self.history = history


@pytest.mark.parametrize("mode", ["native", "sync"])
def test_vec_spec_is_a_copy_and_registered_defaults_are_not_shared(mode):
    spec = EnvSpec(
        "vectest/History-v0",
        entry_point=WalkEnv,
        vector_entry_point=DriftWithHistory,
        kwargs={"history": []} if mode == "native" else {},
    )
    first, second = make_vec(spec, 2, mode), make_vec(spec, 2, mode)
    first.spec.kwargs["length"] = 9
    assert "length" not in spec.kwargs  # the registry entry is unchanged
    if mode == "native":  # as make(): each env gets its own copy of a mutable default
        first.history.append(1)
        assert second.history == [] and spec.kwargs["history"] == []
    first.close()
    second.close()


@pytest.mark.parametrize(("mode", "backend"), [("sync", SyncVecEnv), ("async", AsyncVecEnv)])
def test_in_process_modes_make_each_sub_env(mode, backend):
    with make_vec(
        DRIFT,
        2,
        vectorization_mode=mode,
        wrappers=[sekai.OrderEnforcing],
        vector_kwargs={"autoreset": False},
        length=2,
        max_episode_steps=5,
    ) as vec:
        assert type(vec) is backend and not vec.autoreset
        assert vec.get_attr("length") == [2, 2] and vec.get_attr("max_episode_steps") == [5, 5]
        assert all(isinstance(env, sekai.OrderEnforcing) for env in vec.envs)
        assert all(env.spec.kwargs == {"length": 2} for env in vec.envs)  # make() set it
        assert vec.spec.id == "vectest/Drift-v0" and vec.spec.max_episode_steps == 5


def test_bad_arguments():
    with pytest.raises(ValueError, match="vectorization_mode must be one of"):
        make_vec(WALK, 2, vectorization_mode="threads")
    with pytest.raises(ValueError, match="at least 1"):
        make_vec(WALK, 0)
    with pytest.raises(TypeError, match="wrappers must be callables"):
        make_vec(WALK, 2, wrappers=["OrderEnforcing"])
    with pytest.raises(sekai.registration.UnknownEnvError):
        make_vec("vectest/NoSuchEnv-v0", 2)


def test_each_sub_env_gets_its_own_spawn_of_the_sampler():
    sampler = CountingSampler()
    with make_vec(WALK, 3, sampler=sampler) as vec:
        assert [s.number for s in vec.get_attr("sampler")] == [1, 2, 3]
    assert sampler.spawned == 3
    with make_vec(WALK, 2, sampler="sequential") as vec:  # no spawn(): passed as it is
        assert vec.get_attr("sampler") == ["sequential", "sequential"]


def test_registry_ids_work_and_carry_the_spec():
    with make_vec("CartPole-v1", num_envs=2) as vec:
        assert type(vec) is SyncVecEnv and vec.spec == sekai.spec("CartPole-v1")
        vec.reset(seed=0)
        assert vec.step(np.array([0, 1])).rewards.tolist() == [1.0, 1.0]


def test_proc_mode_ships_the_sub_env_factories_to_workers():
    with make_vec(
        "CartPole-v1", 2, vectorization_mode="proc", vector_kwargs={"num_workers": 1}
    ) as vec:
        assert type(vec).__name__ == "ProcVecEnv" and vec.num_workers == 1
        assert vec.get_attr("max_episode_steps") == [500, 500]
        assert vec.reset(seed=0).observations.shape == (2, 4)


def test_num_envs_may_be_a_numpy_integer_as_for_every_vec_env():
    with make_vec("CartPole-v1", num_envs=np.int64(2)) as vec:  # e.g. read from a config array
        assert vec.num_envs == 2 and type(vec.num_envs) is int


@pytest.mark.parametrize("mode", ["sync", "async", "proc"])
def test_an_unknown_vector_kwarg_names_the_public_backend_and_its_arguments(mode: str) -> None:
    backend = {"sync": "SyncVecEnv", "async": "AsyncVecEnv", "proc": "ProcVecEnv"}[mode]
    with pytest.raises(TypeError, match=rf"vector_kwargs \['foo'\].*{backend}.*'autoreset'") as e:
        make_vec("CartPole-v1", 2, mode, vector_kwargs={"foo": 1})
    assert "_InProcessVecEnv" not in str(e.value)


def test_a_single_wrapper_not_in_a_list_says_to_pass_a_list() -> None:
    with pytest.raises(TypeError, match=r"wrappers=\[FlattenObservation\]"):
        make_vec("CartPole-v1", 2, wrappers=sekai.FlattenObservation)
