"""Spaces both ways: every sekai space type converts to gymnasium and back to an equal space."""

from __future__ import annotations

import gymnasium.spaces as gs
import numpy as np
import pytest
from hypothesis import assume, given, settings
from space_strategies import all_spaces, seeds

import sekai
from sekai.compat import from_gymnasium_space, to_gymnasium_space


@settings(max_examples=60, deadline=None)
@given(space=all_spaces, seed=seeds)
def test_a_round_trip_gives_an_equal_space_with_the_same_members(space, seed):
    space.seed(seed)
    converted = _converted(space)
    assert from_gymnasium_space(converted) == space
    for _ in range(3):
        assert converted.contains(space.sample())
        assert space.contains(converted.sample())


@settings(max_examples=30, deadline=None)
@given(space=all_spaces, seed=seeds)
def test_the_seed_is_carried_over(space, seed):
    space.seed(seed)
    first, second = _converted(space), _converted(space)
    assert first._np_random.bit_generator.state == space.rng.bit_generator.state
    np.testing.assert_equal(first.sample(), second.sample())  # the same stream, copied
    back = from_gymnasium_space(first)
    assert back.rng.bit_generator.state == first.np_random.bit_generator.state


def _converted(space):
    """``space`` in gymnasium; the test ends here for spaces gymnasium has no twin for."""
    try:
        return to_gymnasium_space(space)
    except ValueError as error:  # only an empty or 0-d MultiBinary
        assert "gymnasium has no empty or 0-d MultiBinary" in str(error)
        assume(False)


def test_an_empty_multi_binary_is_a_value_error():
    with pytest.raises(ValueError, match=r"no empty or 0-d MultiBinary; MultiBinary\(\(2, 0\)\)"):
        to_gymnasium_space(sekai.MultiBinary((2, 0)))


def test_an_unseeded_space_stays_unseeded():
    assert to_gymnasium_space(sekai.Discrete(3))._np_random is None
    assert from_gymnasium_space(gs.Discrete(3))._rng is None


@pytest.mark.parametrize(
    ("sekai_space", "gymnasium_space"),
    [
        (sekai.Discrete(3, start=-1), gs.Discrete(3, start=-1)),
        (sekai.MultiDiscrete([2, 3], start=[1, -1]), gs.MultiDiscrete([2, 3], start=[1, -1])),
        (sekai.MultiBinary((2, 2)), gs.MultiBinary([2, 2])),
        (sekai.Box(-1.0, 2.0, (3,)), gs.Box(-1.0, 2.0, (3,), np.float32)),
        (
            sekai.Dict({"a": sekai.Discrete(2), "b": sekai.Tuple([sekai.MultiBinary(2)])}),
            gs.Dict({"a": gs.Discrete(2), "b": gs.Tuple([gs.MultiBinary(2)])}),
        ),
        (sekai.Sequence(sekai.Discrete(2), stack=True), gs.Sequence(gs.Discrete(2), stack=True)),
    ],
    ids=lambda space: type(space).__name__,
)
def test_each_type_maps_to_its_gymnasium_twin(sekai_space, gymnasium_space):
    assert to_gymnasium_space(sekai_space) == gymnasium_space
    assert from_gymnasium_space(gymnasium_space) == sekai_space


def test_a_masked_box_is_a_dict_of_values_and_mask_that_keeps_its_empty_slots_checked():
    space = sekai.MaskedBox(0.0, 1.0, (2,), max_size=3, fill_value=0.5, seed=1)
    converted = to_gymnasium_space(space)
    assert isinstance(converted, gs.Dict) and list(converted) == ["values", "mask"]
    sample = converted.sample(mask=np.array([1, 0, 1], np.int8))
    assert space.contains(sample) and list(sample["mask"]) == [1, 0, 1]
    sample["values"][1] = 0.25  # an empty slot that does not hold fill_value
    assert not converted.contains(sample) and not space.contains(sample)


def test_a_subclass_with_rules_of_its_own_keeps_them():
    class Simplex(sekai.Box):
        """Weights that sum to 1."""

        def sample(self, mask=None):
            return self.rng.dirichlet(np.ones(self.shape)).astype(np.float32)

        def contains(self, x):
            return super().contains(x) and abs(float(np.sum(x)) - 1) < 1e-5

    space = Simplex(0.0, 1.0, (3,), seed=0)
    converted = to_gymnasium_space(space)
    assert isinstance(converted, gs.Box) and converted.shape == (3,)
    assert not converted.contains(np.zeros(3, np.float32))  # in the Box, not a member
    converted.seed(1)
    samples = [converted.sample() for _ in range(2)]
    converted.seed(1)
    np.testing.assert_array_equal(converted.sample(), samples[0])
    assert all(abs(sample.sum() - 1) < 1e-5 for sample in samples)
    back = from_gymnasium_space(converted)
    assert type(back) is Simplex and back == space and back is not space


def test_a_sequence_keeps_its_max_length():
    converted = to_gymnasium_space(sekai.Sequence(sekai.Discrete(2), max_length=2, seed=0))
    assert max(len(converted.sample()) for _ in range(50)) == 2
    assert not converted.contains((0, 1, 1)) and converted.contains((0, 1))


@pytest.mark.parametrize(
    "space",
    [gs.Graph(gs.Box(0, 1), None), gs.Text(5), gs.OneOf([gs.Discrete(2)])],
    ids=lambda space: type(space).__name__,
)
def test_an_unsupported_gymnasium_space_is_a_type_error_naming_it_and_the_supported_ones(space):
    name = type(space).__name__
    with pytest.raises(TypeError, match=rf"\({name}\).*supported gymnasium spaces: Box, Discrete"):
        from_gymnasium_space(space)


def test_an_unsupported_sekai_space_is_a_type_error_naming_it_and_the_supported_ones():
    class Interval(sekai.Space):
        pass

    with pytest.raises(TypeError, match=r"\(Interval\).*supported sekai spaces: Box, .*MaskedBox"):
        to_gymnasium_space(Interval())
