"""TimeAwareObservation appends the elapsed fraction of the time limit."""

from __future__ import annotations

import numpy as np
import pytest
from wrapper_envs import CountingEnv, SampleEnv

import sekai
from sekai.wrappers import TimeAwareObservation, TimeLimit

COUNT = sekai.Box(0.0, 100.0, shape=(1,))


def test_box_gets_one_more_entry_with_the_elapsed_fraction():
    env = TimeAwareObservation(TimeLimit(CountingEnv(observation_space=COUNT), 4))
    assert env.observation_space == sekai.Box(
        np.array([0.0, 0.0]), np.array([100.0, 1.0]), dtype=np.float32
    )
    observations = [env.reset().observation] + [env.step(0).observation for _ in range(4)]
    assert [obs[1] for obs in observations] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert observations[2].tolist() == [2.0, 0.5]
    assert env.reset().observation.tolist() == [0.0, 0.0]


def test_cartpole_from_make_gets_the_documented_space():
    env = TimeAwareObservation(sekai.make("CartPole-v1", max_episode_steps=200))
    assert repr(env.observation_space) == (
        "Box([-4.8, -inf, -0.41887903, -inf, 0.0], [4.8, inf, 0.41887903, inf, 1.0], (5,), float32)"
    )
    observation = env.reset(seed=0).observation
    assert observation in env.observation_space and observation[-1] == 0.0


def test_dict_gets_a_time_key_and_tuple_an_element():
    space = sekai.Dict({"prices": sekai.Box(0.0, 1.0, shape=(2,))})
    env = TimeAwareObservation(TimeLimit(SampleEnv(space), 2))
    assert list(env.observation_space.keys()) == ["prices", "time"]
    env.reset(seed=0)
    observation = env.step(0).observation
    assert observation in env.observation_space and observation["time"].tolist() == [0.5]
    pair = sekai.Tuple([sekai.Discrete(2)])
    env = TimeAwareObservation(TimeLimit(SampleEnv(pair), 2))
    env.reset(seed=0)
    observation = env.step(0).observation
    assert len(observation) == 2 and observation in env.observation_space


def test_limit_changed_with_set_attr_applies_from_the_next_reset():
    env = TimeAwareObservation(TimeLimit(CountingEnv(observation_space=COUNT), 4))
    env.set_attr("max_episode_steps", 2)
    env.reset()
    assert env.step(0).observation[1] == 0.5


def test_needs_a_time_limit_below():
    with pytest.raises(ValueError, match="needs a time limit below it"):
        TimeAwareObservation(CountingEnv(observation_space=COUNT))


def test_rejects_unsupported_spaces_and_a_taken_time_key():
    with pytest.raises(TypeError, match=r"1-D Box, Dict or Tuple.*Discrete"):
        TimeAwareObservation(TimeLimit(SampleEnv(sekai.Discrete(3)), 5))
    with pytest.raises(TypeError, match="1-D Box"):
        TimeAwareObservation(TimeLimit(SampleEnv(sekai.Box(0.0, 1.0, shape=(2, 2))), 5))
    with pytest.raises(ValueError, match="already has a 'time' key"):
        TimeAwareObservation(TimeLimit(SampleEnv(sekai.Dict({"time": COUNT})), 5))
