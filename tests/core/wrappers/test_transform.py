"""TransformObservation / TransformAction / TransformReward apply the user's function."""

from __future__ import annotations

import numpy as np
import pytest
from wrapper_envs import CountingEnv, SampleEnv

import sekai
from sekai.wrappers import TransformAction, TransformObservation, TransformReward


def test_transform_observation_applies_fn_on_reset_and_step():
    env = TransformObservation(CountingEnv(), lambda obs: obs + 10)
    assert env.reset().observation.tolist() == [10.0]
    assert env.step(0).observation.tolist() == [11.0]


def test_transform_observation_declares_the_new_space_or_keeps_the_old():
    inner = SampleEnv(sekai.Box(0.0, 1.0, shape=(2,)))
    new_space = sekai.Box(0.0, 2.0, shape=(2,))
    assert TransformObservation(inner, lambda o: 2 * o, new_space).observation_space is new_space
    assert TransformObservation(inner, lambda o: o).observation_space is inner.observation_space


def test_transform_action_maps_the_action_and_declares_the_callers_space():
    inner = CountingEnv()
    space = sekai.Discrete(3)
    env = TransformAction(inner, lambda action: action * 100, action_space=space)
    env.reset()
    env.step(2)
    assert inner.calls[-1] == ("step", 200)
    assert env.action_space is space


def test_transform_reward():
    env = TransformReward(CountingEnv(), lambda r: np.sign(r) * 0.5)
    env.reset()
    assert env.step(-3).reward == -0.5


@pytest.mark.parametrize("wrapper", [TransformObservation, TransformAction, TransformReward])
def test_fn_must_be_callable_when_the_wrapper_is_built(wrapper):
    with pytest.raises(TypeError, match="fn must be callable"):  # not at the first reset/step
        wrapper(CountingEnv(), 3)
