"""Filter, Flatten, Reshape, Rescale and Dtype observation wrappers."""

from __future__ import annotations

import numpy as np
import pytest
from wrapper_envs import SampleEnv

import sekai
from sekai.spaces import flatten
from sekai.wrappers import (
    DtypeObservation,
    FilterObservation,
    FlattenObservation,
    RescaleObservation,
    ReshapeObservation,
)

UNIVERSE = sekai.MaskedBox(-1.0, 1.0, shape=(2,), max_size=3)
DICT = sekai.Dict(
    {"prices": sekai.Box(-1.0, 1.0, shape=(3,)), "regime": sekai.Discrete(3), "book": UNIVERSE}
)


def _run(env, steps=3):
    """Reset and step; every observation must be in the declared space. Returns them all."""
    observations = [env.reset(seed=0).observation]
    observations += [env.step(0).observation for _ in range(steps)]
    for observation in observations:
        assert observation in env.observation_space
    return observations


def test_filter_dict_keeps_the_chosen_keys_in_order():
    inner = SampleEnv(DICT)
    env = FilterObservation(inner, ["book", "regime"])
    assert list(env.observation_space.keys()) == ["book", "regime"]
    assert env.observation_space["book"] == UNIVERSE
    observations = _run(env)
    assert list(observations[-1]) == ["book", "regime"]
    assert observations[-1]["regime"] == inner.observations[-1]["regime"]


def test_filter_tuple_by_index():
    space = sekai.Tuple([sekai.Discrete(2), sekai.Box(0.0, 1.0, shape=(2,)), sekai.Discrete(5)])
    inner = SampleEnv(space)
    env = FilterObservation(inner, [2, 0])
    assert env.observation_space == sekai.Tuple([sekai.Discrete(5), sekai.Discrete(2)])
    observation = _run(env)[-1]
    assert observation == (inner.observations[-1][2], inner.observations[-1][0])


def test_filter_a_masked_box_part():
    env = FilterObservation(SampleEnv(UNIVERSE), ["mask"])
    assert env.observation_space == sekai.Dict({"mask": sekai.MultiBinary(3)})
    _run(env)


def test_filter_errors():
    with pytest.raises(ValueError, match=r"\['volume'\] are not in the observation space"):
        FilterObservation(SampleEnv(DICT), ["prices", "volume"])
    with pytest.raises(ValueError, match="at least one key"):
        FilterObservation(SampleEnv(DICT), [])
    with pytest.raises(ValueError, match="unique"):
        FilterObservation(SampleEnv(DICT), ["prices", "prices"])
    with pytest.raises(TypeError, match=r"Dict or Tuple observation space, got Box"):
        FilterObservation(SampleEnv(sekai.Box(0.0, 1.0, shape=(2,))), ["a"])


def test_flatten_matches_sekai_flatten_and_stays_in_its_space():
    inner = SampleEnv(DICT)
    env = FlattenObservation(inner)
    assert env.observation_space.shape == (3 + 3 + 3 * 2 + 3,)
    observations = _run(env)
    np.testing.assert_array_equal(observations[-1], flatten(DICT, inner.observations[-1]))
    assert observations[-1].dtype == np.float32


def test_flatten_rejects_a_sequence_and_points_to_padding():
    space = sekai.Sequence(sekai.Box(0.0, 1.0, shape=(2,)), max_length=3)
    with pytest.raises(TypeError, match=r"flattenable.*PadSequenceObservation"):
        FlattenObservation(SampleEnv(space))


def test_reshape_returns_a_new_array_of_the_new_shape():
    inner = SampleEnv(sekai.Box(np.arange(6.0).reshape(2, 3), 10.0))
    env = ReshapeObservation(inner, (3, 2))
    np.testing.assert_array_equal(env.observation_space.low, np.arange(6.0).reshape(3, 2))
    observation = _run(env)[-1]
    np.testing.assert_array_equal(observation, inner.observations[-1].reshape(3, 2))
    assert not np.shares_memory(observation, inner.observations[-1])
    assert ReshapeObservation(inner, 6).observation_space.shape == (6,)


def test_reshape_infers_one_minus_one_entry_as_numpy_does():
    inner = SampleEnv(sekai.Box(0.0, 1.0, shape=(2, 3)))
    env = ReshapeObservation(inner, (-1, 2))
    assert env.shape == (3, 2) and env.observation_space.shape == (3, 2)
    assert _run(env)[-1].shape == (3, 2)


def test_reshape_errors():
    with pytest.raises(ValueError, match=r"cannot reshape observations of shape \(2, 3\)"):
        ReshapeObservation(SampleEnv(sekai.Box(0.0, 1.0, shape=(2, 3))), (4,))
    with pytest.raises(ValueError, match=r"cannot reshape observations of shape \(2, 3\)"):
        ReshapeObservation(SampleEnv(sekai.Box(0.0, 1.0, shape=(2, 3))), (-1, -1))
    with pytest.raises(TypeError, match="ReshapeObservation needs a Box observation space"):
        ReshapeObservation(SampleEnv(DICT), (4,))


def test_rescale_maps_bounds_affinely():
    inner = SampleEnv(sekai.Box(np.array([0.0, -2.0]), np.array([10.0, 2.0])))
    env = RescaleObservation(inner, -1.0, 1.0)
    assert env.observation_space == sekai.Box(-1.0, 1.0, shape=(2,))
    observation = _run(env)[-1]
    expected = np.array([-1.0, -1.0]) + 2 * (inner.observations[-1] - [0.0, -2.0]) / [10.0, 4.0]
    np.testing.assert_allclose(observation, expected, rtol=1e-6)
    env.reset()
    assert env.observation([0.0, 2.0]).tolist() == [-1.0, 1.0]
    assert env.observation([5.0, 0.0]).tolist() == [0.0, 0.0]


def test_rescale_errors():
    with pytest.raises(ValueError, match="finite observation bounds"):
        RescaleObservation(SampleEnv(sekai.Box(-np.inf, 1.0, shape=(2,))), 0.0, 1.0)
    with pytest.raises(ValueError, match="min_obs must be below max_obs"):
        RescaleObservation(SampleEnv(sekai.Box(0.0, 1.0, shape=(2,))), 1.0, 1.0)
    with pytest.raises(TypeError, match="Box observation space, got Dict"):
        RescaleObservation(SampleEnv(DICT), 0.0, 1.0)


def test_dtype_casts_every_box_part_including_masked_box_values():
    inner = SampleEnv(DICT)
    env = DtypeObservation(inner, np.float64)
    space = env.observation_space
    assert space["prices"].dtype == np.float64
    assert space["book"].element_space.dtype == np.float64 and space["book"].max_size == 3
    assert space["regime"] == sekai.Discrete(3)
    observation = _run(env)[-1]
    assert observation["prices"].dtype == np.float64
    assert observation["book"]["values"].dtype == np.float64
    assert observation["book"]["mask"].dtype == np.int8
    np.testing.assert_array_equal(
        observation["book"]["mask"], inner.observations[-1]["book"]["mask"]
    )


def test_dtype_to_integer_keeps_integer_bounds_inside():
    env = DtypeObservation(SampleEnv(sekai.Box(-1.5, 2.5, shape=(2,))), np.int64)
    assert env.observation_space == sekai.Box(-1, 2, shape=(2,), dtype=np.int64)
    _run(env)


def test_dtype_needs_a_box_part():
    with pytest.raises(TypeError, match=r"DtypeObservation acts on Box parts.*Discrete"):
        DtypeObservation(SampleEnv(sekai.Discrete(3)), np.float32)
