"""Sequence: both representations, lengths, pack/elements, membership."""

from __future__ import annotations

import numpy as np
import pytest

import sekai
from sekai.spaces import flatdim, flatten


def test_tuple_representation() -> None:
    trades = sekai.Sequence(sekai.Box(0.0, 10.0, shape=(2,)), max_length=5, seed=0)
    sample = trades.sample()
    assert isinstance(sample, tuple) and len(sample) == 5 and sample in trades
    assert () in trades and [] in trades
    assert tuple(np.zeros((6, 2), np.float32)) not in trades  # longer than max_length
    assert (np.zeros(3, np.float32),) not in trades
    assert np.zeros((2, 2), np.float32) not in trades  # not the tuple representation


def test_stacked_representation() -> None:
    tape = sekai.Sequence(sekai.Box(0.0, 10.0, shape=(2,)), max_length=5, stack=True, seed=0)
    assert tape.sample().shape == (5, 2)
    assert tape.sample(mask=(3, None)).shape == (3, 2)
    assert tape.pack([]).shape == (0, 2) and tape.pack([]) in tape
    assert np.zeros((4, 2), np.float32) in tape
    assert np.zeros((4, 3), np.float32) not in tape and np.zeros((0, 3), np.float32) not in tape
    assert np.zeros((6, 2), np.float32) not in tape


def test_stacked_dict_features_are_a_dict_of_arrays() -> None:
    feature = sekai.Dict(price=sekai.Box(0.0, 1.0, shape=(2,)), side=sekai.Discrete(2))
    space = sekai.Sequence(feature, max_length=3, stack=True, seed=1)
    sample = space.sample(mask=(3, None))
    assert sample["price"].shape == (3, 2) and sample["side"].shape == (3,)
    assert sample in space


def test_stacked_masked_box_elements_keep_the_stale_slot_rule() -> None:
    feature = sekai.MaskedBox(0.0, 1.0, shape=(), max_size=2)
    space = sekai.Sequence(feature, stack=True)
    stacked = space.pack([feature.pack([0.5]), feature.empty()])
    assert stacked in space
    stacked["values"][1, 0] = 0.25  # an empty slot with stale data
    assert stacked not in space


@pytest.mark.parametrize("stack", [False, True])
def test_pack_and_elements_are_inverse(stack: bool) -> None:
    space = sekai.Sequence(sekai.MultiBinary(3), stack=stack, seed=0)
    items = [np.array([0, 1, 0], np.int8), np.array([1, 1, 1], np.int8)]
    packed = space.pack(items)
    assert packed in space
    assert [e.tolist() for e in space.elements(packed)] == [[0, 1, 0], [1, 1, 1]]


def test_lengths_without_max_length_are_geometric_with_mean_three() -> None:
    space = sekai.Sequence(sekai.Discrete(2), seed=0)
    lengths = np.array([len(space.sample()) for _ in range(3000)])
    assert lengths.min() == 0 and 2.8 < lengths.mean() < 3.2
    assert abs((lengths == 0).mean() - 0.25) < 0.03


def test_lengths_with_max_length_are_uniform_up_to_it() -> None:
    space = sekai.Sequence(sekai.Discrete(2), max_length=3, seed=0)
    lengths = [len(space.sample()) for _ in range(400)]
    assert set(lengths) == {0, 1, 2, 3}


def test_seeding_covers_lengths_and_elements() -> None:
    def draws(seed: int) -> list:
        space = sekai.Sequence(sekai.Discrete(100), seed=seed)
        return [tuple(int(e) for e in space.sample()) for _ in range(5)]

    assert draws(3) == draws(3) and draws(3) != draws(4)


def test_not_flattenable_and_repr() -> None:
    space = sekai.Sequence(sekai.Discrete(3), max_length=2, stack=True)
    assert not space.is_flattenable
    assert not sekai.Dict(seq=space).is_flattenable
    assert repr(space) == "Sequence(Discrete(3), max_length=2, stack=True)"
    assert repr(sekai.Sequence(sekai.Discrete(3))) == "Sequence(Discrete(3))"
    with pytest.raises(ValueError, match="not flattenable"):
        flatdim(space)
    with pytest.raises(ValueError, match="not flattenable"):
        flatten(sekai.Tuple([space]), ((),))


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [({"max_length": -1}, ValueError), ({"max_length": 2.0}, TypeError)],
)
def test_bad_arguments(kwargs, error) -> None:
    with pytest.raises(error, match="max_length"):
        sekai.Sequence(sekai.Discrete(2), **kwargs)
    with pytest.raises(TypeError, match="feature_space"):
        sekai.Sequence("Discrete(2)")
