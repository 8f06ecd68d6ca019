"""PadSequenceObservation turns Sequence parts into MaskedBoxes."""

from __future__ import annotations

import numpy as np
import pytest
from wrapper_envs import SampleEnv

import sekai
from sekai.wrappers import FlattenObservation, PadSequenceObservation

TRADE = sekai.Box(0.0, 10.0, shape=(2,))


@pytest.mark.parametrize("stack", [False, True])
def test_top_level_sequence_becomes_a_masked_box_of_max_length_slots(stack):
    inner = SampleEnv(sekai.Sequence(TRADE, max_length=4, stack=stack))
    env = PadSequenceObservation(inner)
    assert env.observation_space == sekai.MaskedBox(0.0, 10.0, shape=(2,), max_size=4)
    observations = [env.reset(seed=0).observation] + [env.step(0).observation for _ in range(8)]
    for observation, raw in zip(observations, inner.observations, strict=True):
        assert observation in env.observation_space
        elements = inner.observation_space.elements(raw)
        assert observation["mask"].tolist() == [1] * len(elements) + [0] * (4 - len(elements))
        np.testing.assert_array_equal(
            observation["values"][: len(elements)], np.reshape(elements, (-1, 2))
        )


def test_sequence_inside_a_dict_and_then_flattenable():
    space = sekai.Dict({"trades": sekai.Sequence(TRADE, max_length=9), "side": sekai.Discrete(2)})
    env = PadSequenceObservation(SampleEnv(space), max_size=10)
    assert env.observation_space["trades"] == sekai.MaskedBox(0.0, 10.0, shape=(2,), max_size=10)
    assert env.observation_space["side"] == sekai.Discrete(2)
    flat = FlattenObservation(env)
    assert flat.reset(seed=0).observation in flat.observation_space


def test_a_sequence_longer_than_max_size_raises():
    env = PadSequenceObservation(SampleEnv(sekai.Sequence(TRADE, max_length=5)), max_size=1)
    env.env.observation_space.sample = lambda mask=None: (TRADE.sample(), TRADE.sample())
    with pytest.raises(ValueError, match=r"2 elements at the top level does not fit max_size=1"):
        env.reset()


def test_errors_name_the_problem():
    with pytest.raises(TypeError, match="needs a Sequence"):
        PadSequenceObservation(SampleEnv(TRADE))
    with pytest.raises(ValueError, match=r"no max_length: pass max_size"):
        PadSequenceObservation(SampleEnv(sekai.Dict({"t": sekai.Sequence(TRADE)})))
    with pytest.raises(TypeError, match=r"Sequences of Box elements, got Sequence\(Discrete\(3\)"):
        PadSequenceObservation(
            SampleEnv(sekai.Dict({"t": sekai.Sequence(sekai.Discrete(3), max_length=2)}))
        )
