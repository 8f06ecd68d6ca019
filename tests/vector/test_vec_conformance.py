"""sekai.testing's vector kit: every installed backend and every native env keep the contract.

The backends are found through the vectorization-mode hook, so installing a third-party backend
(examples/demo-backend is one) gets it checked here too.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from vector_envs import DriftVecEnv, WalkEnv

import sekai
import sekai.testing
from sekai import registration
from sekai.env_checker import EnvCheckError
from sekai.vector import SyncVecEnv

TEST_NATIVE_ID = "test/Drift-v0"


@pytest.fixture
def drift_registered() -> Iterator[None]:
    """The tests' Drift env, registered with its native version for the duration of a test."""
    sekai.register(
        TEST_NATIVE_ID, "vector_envs:Drift", vector_entry_point="vector_envs:DriftVecEnv"
    )
    yield
    registration.registry._specs.pop(TEST_NATIVE_ID)


@pytest.mark.parametrize("mode", sekai.testing.vectorization_modes())
def test_every_installed_backend_keeps_the_vector_contract(mode):
    sekai.testing.check_vectorization_mode(mode)


@pytest.mark.parametrize("env_id", [*sekai.testing.native_env_ids(), TEST_NATIVE_ID])
def test_every_native_env_keeps_the_contract_and_matches_its_single_env(env_id, drift_registered):
    sekai.testing.check_native_vec_env(env_id)


@pytest.mark.needs("sekai-demo-backend")
def test_the_installed_modes_include_the_built_in_and_the_plugin_ones():
    assert {"sync", "async", "proc", "demo-threads"} <= set(sekai.testing.vectorization_modes())


class Float32Rewards(SyncVecEnv):
    def _step_subenvs(self, actions):
        result = super()._step_subenvs(actions)
        return result._replace(rewards=result.rewards.astype(np.float32))


class ForgetsFinalObservation(SyncVecEnv):
    def _step_subenvs(self, actions):
        result = super()._step_subenvs(actions)
        for info in result.infos:
            info.pop("final_observation", None)
        return result


class KeyErrorAttributes(SyncVecEnv):
    def _get_attr(self, name):
        if name == "spec":
            return super()._get_attr(name)
        raise KeyError(name)


class UnseededReset(SyncVecEnv):
    def _reset_subenvs(self, seeds, options):
        return super()._reset_subenvs([None] * len(seeds), options)


class StepsAfterClose(SyncVecEnv):
    def _check_open(self):
        pass


@pytest.mark.parametrize(
    ("broken", "problem"),
    [
        (Float32Rewards, "rewards must be a float64 array"),
        (ForgetsFinalObservation, "'final_observation'"),
        (KeyErrorAttributes, "missing attribute must raise AttributeError"),
        (UnseededReset, "must give the same observations"),
        (StepsAfterClose, "after close"),
    ],
)
def test_check_vec_env_names_what_a_broken_backend_gets_wrong(broken, problem):
    vec = broken([lambda: WalkEnv(length=4) for _ in range(3)])
    with pytest.raises(EnvCheckError, match=problem):
        sekai.testing.check_vec_env(vec)
    assert vec.closed  # closed also when a check fails


def test_a_native_env_that_differs_from_its_single_env_is_caught(drift_registered):
    class Float64Drift(DriftVecEnv):  # float64 observations from a float32 Box
        def _observe(self):
            return super()._observe().astype(np.float64)

    sekai.register("test/WideDrift-v0", "vector_envs:Drift", vector_entry_point=Float64Drift)
    try:
        with pytest.raises(
            EnvCheckError, match="results differ in type, shape or dtype from the single env's"
        ):
            sekai.testing.check_native_vec_env("test/WideDrift-v0")
    finally:
        registration.registry._specs.pop("test/WideDrift-v0")


@pytest.mark.needs("sekai-finance")  # native_env_ids imports LimitOrderBookVecEnv
def test_multi_agent_native_envs_are_left_out_of_the_single_agent_kit(drift_registered):
    assert sekai.spec("LimitOrderBook-v0").vector_entry_point is not None
    ids = sekai.testing.native_env_ids()
    assert TEST_NATIVE_ID in ids and "LimitOrderBook-v0" not in ids
