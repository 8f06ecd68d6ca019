"""FrameStackObservation and DelayObservation."""

from __future__ import annotations

import numpy as np
import pytest
from wrapper_envs import CountingEnv, SampleEnv

import sekai
from sekai.spaces import batch_space
from sekai.wrappers import DelayObservation, FrameStackObservation

COUNT = sekai.Box(0.0, 100.0, shape=(1,))


def _counting(**kwargs):
    return CountingEnv(observation_space=COUNT, **kwargs)


def test_frame_stack_zero_padding_then_sliding_window():
    env = FrameStackObservation(_counting(), 3)
    assert env.observation_space == batch_space(COUNT, 3)
    assert env.reset().observation[:, 0].tolist() == [0.0, 0.0, 0.0]
    assert env.step(0).observation[:, 0].tolist() == [0.0, 0.0, 1.0]
    env.step(0)
    assert env.step(0).observation[:, 0].tolist() == [1.0, 2.0, 3.0]


def test_frame_stack_zero_padding_uses_the_spaces_zero_sample():
    inner = CountingEnv(observation_space=sekai.Box(2.0, 5.0, shape=(1,)))
    stacked = FrameStackObservation(inner, 2).reset().observation
    assert stacked[0].tolist() == [2.0]  # zero clipped into the bounds


def test_frame_stack_reset_padding_repeats_the_first_observation():
    env = FrameStackObservation(_counting(), 3, padding="reset")
    env.reset()
    env.step(0)
    assert env.step(0).observation[:, 0].tolist() == [0.0, 1.0, 2.0]
    env.reset()
    assert env.step(0).observation[:, 0].tolist() == [0.0, 0.0, 1.0]


def test_frame_stack_returns_new_arrays():
    inner = SampleEnv(COUNT)
    env = FrameStackObservation(inner, 2)
    first = env.reset(seed=0).observation
    second = env.step(0).observation
    assert not np.shares_memory(first, second)
    assert not np.shares_memory(second, inner.observations[-1])


def test_frame_stack_of_a_dict_with_a_masked_box():
    space = sekai.Dict(
        {"book": sekai.MaskedBox(-1.0, 1.0, shape=(2,), max_size=3), "side": sekai.Discrete(2)}
    )
    env = FrameStackObservation(SampleEnv(space), 4)
    observations = [env.reset(seed=1).observation] + [env.step(0).observation for _ in range(5)]
    assert all(obs in env.observation_space for obs in observations)
    assert observations[0]["book"]["mask"][:3].sum() == 0  # padding: every slot empty


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"stack_size": 0}, "stack_size must be"), ({"stack_size": 2, "padding": "x"}, "padding")],
)
def test_frame_stack_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FrameStackObservation(_counting(), **kwargs)


def test_delay_pads_with_zero_samples_then_lags():
    env = DelayObservation(_counting(), 2)
    assert env.observation_space == COUNT
    observations = [env.reset().observation] + [env.step(0).observation for _ in range(3)]
    assert [obs.tolist() for obs in observations] == [[0.0], [0.0], [0.0], [1.0]]
    assert env.reset().observation.tolist() == [0.0]
    assert [env.step(0).observation.tolist() for _ in range(3)] == [[0.0], [0.0], [1.0]]


def test_delay_zero_is_a_copy_of_the_current_observation():
    inner = SampleEnv(COUNT)
    env = DelayObservation(inner, 0)
    observation = env.reset(seed=0).observation
    np.testing.assert_array_equal(observation, inner.observations[-1])
    assert not np.shares_memory(observation, inner.observations[-1])


def test_delay_reset_padding_repeats_the_first_observation():
    inner = SampleEnv(COUNT)
    env = DelayObservation(inner, 2, padding="reset")
    observations = [env.reset(seed=0).observation] + [env.step(0).observation for _ in range(3)]
    first, second = inner.observations[0], inner.observations[1]
    assert [obs.tolist() for obs in observations] == [first.tolist()] * 3 + [second.tolist()]
    assert not any(np.shares_memory(obs, first) for obs in observations)


def test_delay_must_be_non_negative():
    with pytest.raises(ValueError, match="delay must be a non-negative int"):
        DelayObservation(_counting(), -1)
    with pytest.raises(ValueError, match="padding"):
        DelayObservation(_counting(), 1, padding="first")
