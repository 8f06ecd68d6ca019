"""to_gymnasium_vector / from_gymnasium_vector: infos as gymnasium's arrays, gymnasium wrappers."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers.vector import NormalizeObservation, RecordEpisodeStatistics
from hypothesis import given, settings
from hypothesis import strategies as st
from vector_envs import CountingDriftVecEnv, CountingRows, DriftVecEnv

import sekai
from sekai.compat import from_gymnasium_vector, to_gymnasium_vector


def _reference_infos(num_envs: int, infos: list[dict]) -> dict:
    """gymnasium's dict of arrays built by gymnasium's own code, one sub-env info at a time."""
    reference = gymnasium.vector.VectorEnv()
    reference.num_envs = num_envs
    arrays: dict = {}
    for i, info in enumerate(infos):
        if "final_observation" in info:  # gymnasium's SAME_STEP row: the reset's info and finals
            info = {
                **info["reset_info"],
                "final_obs": info["final_observation"],
                "final_info": info["final_info"],
            }
        arrays = reference._add_info(arrays, info, i)
    return arrays


def _assert_same_infos(actual: dict, expected: dict) -> None:
    """Equal keys and masks; equal values wherever the mask says a sub-env has the key."""
    assert sorted(actual) == sorted(expected)
    for key, value in expected.items():
        if key.startswith("_"):
            np.testing.assert_array_equal(actual[key], value)
        elif isinstance(value, dict):
            _assert_same_infos(actual[key], value)
        else:
            rows = expected[f"_{key}"]
            for got, want in zip(actual[key][rows], value[rows], strict=True):
                np.testing.assert_array_equal(got, want)


@settings(max_examples=15, deadline=None)
@given(
    autoreset=st.sampled_from([True, "next_step"]),
    seed=st.integers(0, 2**16),
    steps=st.integers(1, 12),
)
def test_native_infos_equal_gymnasium_s_own_conversion_of_each_sub_env_info(autoreset, seed, steps):
    bridged = to_gymnasium_vector(DriftVecEnv(5, max_episode_steps=4, autoreset=autoreset))
    direct = DriftVecEnv(5, max_episode_steps=4, autoreset=autoreset)
    _, infos = bridged.reset(seed=seed)
    _assert_same_infos(infos, _reference_infos(5, list(direct.reset(seed=seed).infos)))
    actions = np.random.default_rng(seed).integers(0, 2, size=(steps, 5))
    for batch in actions:
        *_, infos = bridged.step(batch)
        _assert_same_infos(infos, _reference_infos(5, list(direct.step(batch).infos)))


@pytest.mark.parametrize("autoreset", [True, "next_step"])
def test_sync_infos_equal_gymnasium_s_own_conversion(autoreset):
    def make():
        return sekai.make_vec(
            "CartPole-v1", 3, max_episode_steps=5, vector_kwargs={"autoreset": autoreset}
        )

    bridged, direct = to_gymnasium_vector(make()), make()
    bridged.reset(seed=1)
    direct.reset(seed=1)
    for _ in range(12):
        *_, infos = bridged.step(np.array([1, 0, 1]))
        _assert_same_infos(infos, _reference_infos(3, list(direct.step([1, 0, 1]).infos)))


def test_native_infos_are_converted_without_building_a_dict_per_sub_env():
    vec = to_gymnasium_vector(CountingDriftVecEnv(500, bound=1e9))
    vec.reset(seed=0)
    CountingRows.reads = 0
    *_, infos = vec.step(np.ones(500, dtype=np.int64))
    assert CountingRows.reads == 0 and infos["_x"].all() and infos["x"].shape == (500,)


@pytest.mark.parametrize(
    ("autoreset", "mode"),
    [(True, AutoresetMode.SAME_STEP), ("next_step", AutoresetMode.NEXT_STEP)],
)
def test_the_autoreset_mode_is_declared_and_record_episode_statistics_counts_episodes(
    autoreset, mode
):
    vec = RecordEpisodeStatistics(
        to_gymnasium_vector(DriftVecEnv(4, max_episode_steps=3, autoreset=autoreset, bound=1e9))
    )
    assert vec.metadata["autoreset_mode"] is mode
    vec.reset(seed=0)
    returns = np.zeros(4)
    for _ in range(3):
        _, rewards, _, truncated, infos = vec.step(np.ones(4, dtype=np.int64))
        returns += rewards
    assert truncated.all() and infos["_episode"].all()
    np.testing.assert_array_equal(infos["episode"]["l"], [3, 3, 3, 3])
    np.testing.assert_allclose(infos["episode"]["r"], returns)


def test_normalize_observation_runs_on_a_next_step_bridge():
    vec = sekai.make_vec("CartPole-v1", 4, vector_kwargs={"autoreset": "next_step"})
    normalized = NormalizeObservation(to_gymnasium_vector(vec))
    normalized.reset(seed=0)
    for _ in range(50):
        observations, *_ = normalized.step(normalized.action_space.sample())
    assert observations.shape == (4, 4) and np.abs(observations).max() < 10
    normalized.close()
    assert vec.closed


def test_spaces_spec_and_sub_env_attributes_are_reachable():
    vec = to_gymnasium_vector(sekai.make_vec("CartPole-v1", 2))
    assert vec.single_action_space == gymnasium.spaces.Discrete(2)
    assert vec.action_space == gymnasium.spaces.MultiDiscrete([2, 2])
    assert vec.observation_space.shape == (2, 4) and vec.spec.id == "CartPole-v1"
    vec.set_attr("gravity", (9.0, 10.0))
    assert vec.get_attr("gravity") == (9.0, 10.0)
    assert vec.call("get_attr", "gravity") == (9.0, 10.0)


def test_a_vector_env_that_does_not_reset_is_refused():
    with pytest.raises(ValueError, match=r"autoreset=True \(gymnasium's SAME_STEP\)"):
        to_gymnasium_vector(DriftVecEnv(2, autoreset=False))


@pytest.mark.parametrize(
    ("mode", "autoreset"),
    [("SameStep", True), ("NextStep", "next_step"), ("Disabled", False)],
)
def test_from_gymnasium_vector_follows_the_autoreset_mode(mode, autoreset):
    gym_vec = gymnasium.make_vec(
        "CartPole-v1", 3, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}
    )
    vec = from_gymnasium_vector(gym_vec)
    assert vec.autoreset == autoreset and vec.spec.id == "CartPole-v1"
    assert vec.observation_space == sekai.Box(
        gym_vec.single_observation_space.low, gym_vec.single_observation_space.high
    )
    assert vec.reset(seed=0).infos == [{}, {}, {}]
    done_at = None
    for t in range(200):
        result = vec.step(np.zeros(3, dtype=np.int64))
        if result.dones.any():
            done_at = t
            break
    assert done_at is not None and result.rewards.dtype == np.float64
    finished = int(np.flatnonzero(result.dones)[0])
    if autoreset is True:
        info = result.infos[finished]
        assert set(info) >= {"final_observation", "final_info", "reset_info"}
        assert info["final_observation"].shape == (4,)
    else:
        assert result.infos[finished] == {}
    vec.close()
    assert gym_vec.closed


def test_a_round_trip_through_both_vector_bridges_gives_the_same_results():
    direct = DriftVecEnv(3, max_episode_steps=2)
    bridged = from_gymnasium_vector(to_gymnasium_vector(DriftVecEnv(3, max_episode_steps=2)))
    np.testing.assert_array_equal(
        bridged.reset(seed=4).observations, direct.reset(seed=4).observations
    )
    for _ in range(3):
        expected, got = direct.step([1, 0, 1]), bridged.step(np.array([1, 0, 1]))
        np.testing.assert_array_equal(got.observations, expected.observations)
        np.testing.assert_array_equal(got.rewards, expected.rewards)
        assert [sorted(info) for info in got.infos] == [sorted(info) for info in expected.infos]
