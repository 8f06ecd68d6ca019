"""MaskedBox: slots, pack/unpack/empty, the stale-slot rule, fill values."""

from __future__ import annotations

import numpy as np
import pytest

import sekai


@pytest.fixture
def universe() -> sekai.MaskedBox:
    return sekai.MaskedBox(-np.inf, np.inf, shape=(2,), max_size=4, seed=0)


def test_is_a_dict_of_values_and_mask(universe: sekai.MaskedBox) -> None:
    assert isinstance(universe, sekai.Dict) and list(universe.keys()) == ["values", "mask"]
    assert universe["values"] == sekai.Box(-np.inf, np.inf, shape=(4, 2))
    assert universe["mask"] == sekai.MultiBinary(4)
    assert universe.element_space == sekai.Box(-np.inf, np.inf, shape=(2,))
    assert universe.element_shape == (2,) and universe.max_size == 4
    assert repr(universe) == "MaskedBox(-inf, inf, (2,), max_size=4, float32)"
    assert universe != sekai.Dict(values=universe["values"], mask=universe["mask"])


def test_pack_unpack_and_empty(universe: sekai.MaskedBox) -> None:
    obs = universe.pack([[0.01, 0.2], [-0.02, 0.3]], slots=[0, 3])
    assert obs["mask"].tolist() == [1, 0, 0, 1] and obs["mask"].dtype == np.int8
    assert obs["values"].dtype == np.float32 and obs in universe
    values, slots = universe.unpack(obs)
    np.testing.assert_allclose(values, [[0.01, 0.2], [-0.02, 0.3]])
    assert slots.tolist() == [0, 3]
    first = universe.pack([[1.0, 2.0]])
    assert first["mask"].tolist() == [1, 0, 0, 0]
    empty = universe.empty()
    assert empty["mask"].tolist() == [0, 0, 0, 0] and (empty["values"] == 0).all()
    assert empty in universe and universe.pack([]) in universe


@pytest.mark.parametrize(
    ("values", "slots", "match"),
    [
        ([[1.0, 2.0, 3.0]], None, "shape"),
        ([[1.0, 2.0]] * 5, None, "at most 4"),
        ([[1.0, 2.0]], [4], "slots must be in"),
        ([[1.0, 2.0]] * 2, [1, 1], "distinct"),
        ([[1.0, 2.0]] * 2, [1], "2 values but 1 slots"),
    ],
)
def test_pack_errors(universe: sekai.MaskedBox, values, slots, match) -> None:
    with pytest.raises(ValueError, match=match):
        universe.pack(values, slots=slots)


def test_stale_data_in_an_empty_slot_is_not_a_member(universe: sekai.MaskedBox) -> None:
    obs = universe.pack([[0.01, 0.2]], slots=[0])
    stale = {"values": obs["values"].copy(), "mask": obs["mask"]}
    stale["values"][1] = 5.0
    assert stale not in universe
    assert {"values": obs["values"], "mask": np.array([1, 0, 2, 0], np.int8)} not in universe


def test_default_fill_value_is_zero_clipped_into_bounds() -> None:
    space = sekai.MaskedBox(np.array([1.0, -2.0]), np.array([3.0, -1.0]), max_size=2, seed=0)
    np.testing.assert_array_equal(space.fill_value, [1.0, -1.0])
    sample = space.sample(mask=np.array([0, 1], np.int8))
    np.testing.assert_array_equal(sample["values"][0], [1.0, -1.0])
    assert sample in space


def test_custom_fill_value_pads_and_must_be_in_bounds() -> None:
    space = sekai.MaskedBox(0, 10, shape=(2,), max_size=3, fill_value=5, dtype=np.int64, seed=0)
    assert (space.empty()["values"] == 5).all() and space.empty()["values"].dtype == np.int64
    assert repr(space) == "MaskedBox(0, 10, (2,), max_size=3, fill_value=5, int64)"
    zero_filled = {"values": np.zeros((3, 2), np.int64), "mask": np.zeros(3, np.int8)}
    assert zero_filled not in space
    with pytest.raises(ValueError, match="fill_value"):
        sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=3, fill_value=-1.0)
    with pytest.raises(ValueError, match="fill_value"):
        sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=3, fill_value=np.nan)


def test_samples_fill_empty_slots(universe: sekai.MaskedBox) -> None:
    for _ in range(10):
        sample = universe.sample()
        assert sample in universe
        assert (sample["values"][sample["mask"] == 0] == 0).all()


@pytest.mark.parametrize(("max_size", "error"), [(-1, ValueError), (2.0, TypeError)])
def test_bad_max_size(max_size, error) -> None:
    with pytest.raises(error, match="max_size"):
        sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=max_size)
