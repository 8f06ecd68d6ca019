"""NormalizeObservation (Box, Dict/Tuple parts, MaskedBox by occupied slots), NormalizeReward."""

from __future__ import annotations

import numpy as np
import pytest
from wrapper_envs import CountingEnv, SampleEnv

import sekai
from sekai.wrappers import NormalizeObservation, NormalizeReward, ObservationNormalizer

BOX = sekai.Box(-10.0, 10.0, shape=(2,))
UNIVERSE = sekai.MaskedBox(-5.0, 5.0, shape=(2,), max_size=4, fill_value=1.0)


def _observations(env, steps):
    return [env.reset(seed=0).observation] + [env.step(0).observation for _ in range(steps)]


def test_box_observation_is_normalised_with_the_stats_of_all_observations_so_far():
    inner = SampleEnv(BOX)
    env = NormalizeObservation(inner, epsilon=1e-3)
    assert env.observation_space == sekai.Box(-np.inf, np.inf, shape=(2,))
    outputs = _observations(env, 20)
    seen = np.array(inner.observations, np.float64)
    np.testing.assert_allclose(env.obs_rms.stats[()].mean, seen.mean(axis=0))
    expected_last = (seen[-1] - seen.mean(axis=0)) / np.sqrt(seen.var(axis=0) + 1e-3)
    np.testing.assert_allclose(outputs[-1], expected_last, rtol=1e-5)
    assert all(out in env.observation_space for out in outputs)


def test_dict_and_tuple_normalise_every_box_part_and_pass_the_rest():
    space = sekai.Dict(
        {
            "pair": sekai.Tuple([BOX, sekai.Discrete(3)]),
            "book": UNIVERSE,
        }
    )
    inner = SampleEnv(space)
    env = NormalizeObservation(inner)
    assert set(env.obs_rms.stats) == {("pair", 0), ("book",)}
    assert env.observation_space["pair"][1] == sekai.Discrete(3)
    outputs = _observations(env, 10)
    assert all(out in env.observation_space for out in outputs)
    assert outputs[-1]["pair"][1] == inner.observations[-1]["pair"][1]


def test_masked_box_statistics_come_from_occupied_slots_only_and_empty_slots_keep_fill():
    inner = SampleEnv(UNIVERSE)
    env = NormalizeObservation(inner, epsilon=1e-3)
    outputs = _observations(env, 30)
    occupied = np.concatenate(
        [obs["values"][obs["mask"].astype(bool)] for obs in inner.observations]
    ).astype(np.float64)
    stats = env.obs_rms.stats[()]
    np.testing.assert_allclose(stats.mean, occupied.mean(axis=0))
    np.testing.assert_allclose(stats.var, occupied.var(axis=0))
    assert stats.count == len(occupied)
    last_in, last_out = inner.observations[-1], outputs[-1]
    np.testing.assert_array_equal(last_out["mask"], last_in["mask"])
    empty = ~last_in["mask"].astype(bool)
    assert np.all(last_out["values"][empty] == 1.0)
    full = ~empty
    expected = (last_in["values"][full] - stats.mean) / np.sqrt(stats.var + 1e-3)
    np.testing.assert_allclose(last_out["values"][full], expected, rtol=1e-5)
    assert all(out in env.observation_space for out in outputs)


def test_clip_bounds_values_and_the_declared_space():
    env = NormalizeObservation(SampleEnv(BOX), clip=0.5)
    assert env.observation_space == sekai.Box(-0.5, 0.5, shape=(2,))
    outputs = np.array(_observations(env, 30))
    assert np.abs(outputs).max() == pytest.approx(0.5)


def test_ewm_statistics_are_selectable():
    env = NormalizeObservation(SampleEnv(BOX), stats="ewm", halflife=5.0)
    assert env.obs_rms.stats[()].kind == "ewm"
    with pytest.raises(ValueError, match="stats must be 'running' or 'ewm'"):
        NormalizeObservation(SampleEnv(BOX), stats="median")


def test_freezing_stops_updates():
    env = NormalizeObservation(SampleEnv(BOX))
    _observations(env, 5)
    env.update_running_mean = False
    frozen = env.obs_rms.state_dict()
    _observations(env, 5)
    np.testing.assert_array_equal(env.obs_rms.stats[()].mean, frozen[()]["mean"])


def test_state_dict_restores_identical_outputs():
    trained = NormalizeObservation(SampleEnv(sekai.Dict({"a": BOX, "b": UNIVERSE})))
    _observations(trained, 20)
    fresh = NormalizeObservation(SampleEnv(sekai.Dict({"a": BOX, "b": UNIVERSE})))
    fresh.obs_rms.load_state_dict(trained.obs_rms.state_dict())
    trained.update_running_mean = fresh.update_running_mean = False
    for a, b in zip(_observations(trained, 3), _observations(fresh, 3), strict=True):
        np.testing.assert_array_equal(a["a"], b["a"])
        np.testing.assert_array_equal(a["b"]["values"], b["b"]["values"])


def test_load_state_dict_rejects_another_space():
    state = ObservationNormalizer(sekai.Dict({"a": BOX})).state_dict()
    with pytest.raises(ValueError, match="state has parts"):
        ObservationNormalizer(BOX).load_state_dict(state)


def test_normalizer_takes_batches_for_vector_use():
    normalizer = ObservationNormalizer(UNIVERSE, epsilon=0.0)
    batch = {
        "values": np.array([[[1.0, 2.0]] * 4, [[3.0, 6.0]] * 4]),
        "mask": np.array([[1, 0, 0, 0], [1, 1, 0, 0]], np.int8),
    }
    normalizer.update(batch)
    np.testing.assert_allclose(normalizer.stats[()].mean, [7 / 3, 14 / 3])
    out = normalizer.normalize(batch)
    assert out["values"].shape == (2, 4, 2) and np.all(out["values"][0, 1:] == 1.0)


def test_normalize_observation_rejects_spaces_without_boxes():
    with pytest.raises(TypeError, match=r"NormalizeObservation acts on Box parts.*Discrete"):
        NormalizeObservation(SampleEnv(sekai.Discrete(4)))
    with pytest.raises(ValueError, match="clip must be positive"):
        NormalizeObservation(SampleEnv(BOX), clip=0.0)


def variance_with_prior(samples):
    """Variance of the samples pooled with one pseudo-sample of mean 0 and variance 1."""
    x = np.asarray(samples, np.float64)
    mean = x.sum() / (len(x) + 1)
    return (1.0 + (x**2).sum()) / (len(x) + 1) - mean**2


def test_normalize_reward_divides_by_the_std_of_the_discounted_return():
    env = NormalizeReward(CountingEnv(terminate_after=3), gamma=0.5, epsilon=0.01)
    env.reset()
    rewards = [env.step(a).reward for a in (1.0, 2.0, 4.0)]
    returns = [1.0, 2.5, 5.25]  # G_t = 0.5 * G_{t-1} + r_t
    expected = [
        r / np.sqrt(variance_with_prior(returns[: i + 1]) + 0.01)
        for i, r in enumerate([1.0, 2.0, 4.0])
    ]
    assert rewards == pytest.approx(expected)
    assert env.discounted_return == 0.0  # the episode ended
    assert env.return_rms.count == 3


def test_normalize_reward_does_not_blow_up_the_first_rewards():
    env = NormalizeReward(CountingEnv(), gamma=0.99)
    env.reset()
    first = env.step(-0.76).reward  # one return has no spread: the prior keeps the scale sane
    assert first == pytest.approx(-0.76 / np.sqrt(variance_with_prior([-0.76]) + 1e-8))
    assert 0.5 < abs(first) < 1.0


def test_normalize_reward_freezes_and_validates():
    env = NormalizeReward(CountingEnv(), gamma=0.9)
    env.reset()
    env.step(1.0)
    env.update_running_mean = False
    env.step(5.0)
    assert env.return_rms.count == 1
    with pytest.raises(ValueError, match=r"gamma must be in \[0, 1\]"):
        NormalizeReward(CountingEnv(), gamma=1.5)
