"""Masked sampling: every mask format of the spec, and the errors for bad masks."""

from __future__ import annotations

import numpy as np
import pytest

import sekai


def test_discrete_mask_only_samples_allowed_values() -> None:
    space = sekai.Discrete(5, start=2, seed=0)
    mask = np.array([0, 1, 0, 0, 1], np.int8)
    assert {int(space.sample(mask=mask)) for _ in range(50)} == {3, 6}
    assert space.sample(mask=[0, 0, 1, 0, 0]) == 4  # a list works too
    assert space.sample(mask=np.array([0, 0, 1, 0, 0], bool)) == 4


@pytest.mark.parametrize(
    ("mask", "error", "match"),
    [
        (np.zeros(5, np.int8), ValueError, "allows no value"),
        (np.ones(4, np.int8), ValueError, r"shape \(5,\)"),
        (np.ones(5, np.float32), TypeError, "dtype float32"),
        (np.array([0, 2, 0, 0, 0], np.int8), ValueError, "entries must be in"),
    ],
)
def test_discrete_bad_masks(mask, error, match) -> None:
    with pytest.raises(error, match=match):
        sekai.Discrete(5, seed=0).sample(mask=mask)


def test_multi_discrete_tuple_and_padded_masks_agree() -> None:
    as_tuple = (np.array([1, 0, 0], np.int8), np.array([0, 0, 0, 1, 1], np.int8))
    padded = np.array([[1, 0, 0, 1, 1], [0, 0, 0, 1, 1]], np.int8)  # entry 0's padding ignored
    first, second = sekai.MultiDiscrete([3, 5], seed=4), sekai.MultiDiscrete([3, 5], seed=4)
    for _ in range(20):
        a, b = first.sample(mask=as_tuple), second.sample(mask=padded)
        np.testing.assert_array_equal(a, b)
        assert a[0] == 0 and a[1] in (3, 4)


def test_multi_discrete_nested_mask_and_start() -> None:
    space = sekai.MultiDiscrete([[2, 3]], start=[[10, -1]], seed=0)
    mask = ((np.array([0, 1], np.int8), np.array([1, 0, 0], np.int8)),)
    np.testing.assert_array_equal(space.sample(mask=mask), [[11, -1]])


@pytest.mark.parametrize(
    ("mask", "error", "match"),
    [
        ((np.array([1, 0, 0], np.int8),), ValueError, "nested like nvec"),
        ((np.array([1, 0], np.int8), np.ones(5, np.int8)), ValueError, r"shape \(3,\)"),
        ((np.zeros(3, np.int8), np.ones(5, np.int8)), ValueError, r"no value for entry \(0,\)"),
        (np.ones((2, 4), np.int8), ValueError, r"shape \(2, 5\)"),
        (np.ones((2, 5), np.float64), TypeError, "dtype float64"),
        # a list of per-entry masks (the format is a tuple) is not a ragged-array numpy error
        ([np.ones(3, np.int8), np.ones(5, np.int8)], ValueError, r"shape \(2, 5\)"),
    ],
)
def test_multi_discrete_bad_masks(mask, error, match) -> None:
    with pytest.raises(error, match=match):
        sekai.MultiDiscrete([3, 5], seed=0).sample(mask=mask)


def test_multi_binary_mask_forces_or_frees_bits() -> None:
    space = sekai.MultiBinary((2, 2), seed=0)
    mask = np.array([[1, 0], [-1, -1]], np.int8)
    samples = np.array([space.sample(mask=mask) for _ in range(40)])
    assert (samples[:, 0, 0] == 1).all() and (samples[:, 0, 1] == 0).all()
    assert set(samples[:, 1].ravel()) == {0, 1}
    with pytest.raises(ValueError, match="shape"):
        space.sample(mask=np.ones(4, np.int8))
    with pytest.raises(ValueError, match="entries must be in"):
        space.sample(mask=np.full((2, 2), 2, np.int8))


def test_box_mask_sets_unmasked_entries_to_zero_clipped() -> None:
    space = sekai.Box(np.array([1.0, -1.0, 0.0]), np.array([2.0, 1.0, 1.0]), seed=0)
    sample = space.sample(mask=np.array([0, 0, 1], np.int8))
    assert sample[0] == 1.0 and sample[1] == 0.0 and 0.0 <= sample[2] <= 1.0
    grid = sekai.Box(0.5, 1.0, shape=(2, 3), seed=0)
    rows = grid.sample(mask=np.array([[1], [0]], np.int8))  # broadcast along the last axis
    assert (rows[1] == 0.5).all() and rows.dtype == np.float32


@pytest.mark.parametrize(
    ("mask", "error", "match"),
    [
        (np.ones(4, np.int8), ValueError, "broadcastable"),
        (np.ones((2, 3), np.int8), ValueError, "broadcastable"),
        (np.ones(3, np.float32), TypeError, "dtype float32"),
        (np.array([0, 1, 3], np.int8), ValueError, "0 or 1"),
    ],
)
def test_box_bad_masks(mask, error, match) -> None:
    with pytest.raises(error, match=match):
        sekai.Box(0.0, 1.0, shape=(3,), seed=0).sample(mask=mask)


def test_dict_mask_masks_given_keys_only() -> None:
    space = sekai.Dict(a=sekai.Discrete(4), b=sekai.Discrete(4), seed=0)
    samples = [space.sample(mask={"a": np.array([0, 0, 1, 0], np.int8)}) for _ in range(30)]
    assert all(s["a"] == 2 for s in samples)
    assert len({int(s["b"]) for s in samples}) > 1
    with pytest.raises(ValueError, match=r"\['c'\]"):
        space.sample(mask={"c": None})
    with pytest.raises(TypeError, match="dict of sub-masks"):
        space.sample(mask=[None, None])


def test_tuple_mask_has_one_entry_per_sub_space() -> None:
    space = sekai.Tuple([sekai.Discrete(3), sekai.MultiBinary(2)], seed=0)
    sample = space.sample(mask=(np.array([0, 1, 0], np.int8), None))
    assert sample[0] == 1 and sample in space
    with pytest.raises(ValueError, match="2 sub-spaces"):
        space.sample(mask=(None,))
    with pytest.raises(TypeError, match="tuple of sub-masks"):
        space.sample(mask={"0": None})


def test_masked_box_mask_fixes_occupied_slots() -> None:
    space = sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=3, seed=0)
    for mask in (np.array([1, 0, 1], np.int8), np.array([True, False, True])):
        sample = space.sample(mask=mask)
        assert sample["mask"].dtype == np.int8 and sample["mask"].tolist() == [1, 0, 1]
        assert (sample["values"][1] == 0.0).all() and sample in space
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        space.sample(mask=np.ones(2, np.int8))
    with pytest.raises(TypeError, match="dtype float64"):
        space.sample(mask=np.ones(3))


def test_masked_box_default_occupancy_is_about_half() -> None:
    space = sekai.MaskedBox(0.0, 1.0, shape=(), max_size=1000, seed=0)
    assert 400 < space.sample()["mask"].sum() < 600


def test_sequence_mask_fixes_length_and_masks_elements() -> None:
    space = sekai.Sequence(sekai.Discrete(3), max_length=4, seed=0)
    sample = space.sample(mask=(4, np.array([0, 0, 1], np.int8)))
    assert sample == (2, 2, 2, 2)
    assert len(space.sample(mask=(None, np.array([1, 0, 0], np.int8)))) <= 4
    with pytest.raises(ValueError, match=r"\[0, 4\]"):
        space.sample(mask=(5, None))
    with pytest.raises(TypeError, match="length, feature_mask"):
        space.sample(mask=3)
    with pytest.raises(TypeError, match="length must be an int"):
        space.sample(mask=(2.0, None))
