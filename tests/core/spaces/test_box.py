"""Box: construction rules, integer dtypes, membership, sampling, repr."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import sekai
from sekai.spaces import batch_space


def test_scalar_bounds_broadcast_and_array_bounds_give_the_shape() -> None:
    assert sekai.Box(0, 1, shape=(2, 3)).low.shape == (2, 3)
    space = sekai.Box(np.zeros((4, 2)), 1.0)
    assert space.shape == (4, 2) and space.high.shape == (4, 2)
    assert sekai.Box(0.0, 1.0).shape == ()


@pytest.mark.parametrize(
    ("low", "high", "shape"),
    [
        (np.zeros(2), np.ones(3), None),
        (np.zeros(2), 1.0, (3,)),
        (0.0, np.ones((2, 2)), (4,)),
    ],
)
def test_bound_shape_mismatch_is_a_value_error(low, high, shape) -> None:
    with pytest.raises(ValueError, match="shape"):
        sekai.Box(low, high, shape=shape)


@pytest.mark.parametrize(("low", "high"), [(np.nan, 1.0), (0.0, [1.0, np.nan])])
def test_nan_bounds_are_a_value_error(low, high) -> None:
    with pytest.raises(ValueError, match="NaN"):
        sekai.Box(low, high, shape=(2,))


def test_low_above_high_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="low must be <= high"):
        sekai.Box(1.0, 0.0, shape=(2,))


@pytest.mark.parametrize("dtype", [None, np.bool_, object, str])
def test_non_numeric_dtype_is_a_type_error(dtype) -> None:
    with pytest.raises(TypeError, match="dtype"):
        sekai.Box(0, 1, shape=(2,), dtype=dtype)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.uint64])
def test_integer_box_maps_infinite_bounds_to_dtype_limits(dtype) -> None:
    info = np.iinfo(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # infinities convert silently
        space = sekai.Box(-np.inf, np.inf, shape=(3,), dtype=dtype, seed=0)
    assert space.low.dtype == dtype
    assert (space.low == info.min).all() and (space.high == info.max).all()
    assert space.is_bounded == (True, True)
    assert space.sample() in space


@pytest.mark.parametrize(
    ("low", "high", "expected_low", "expected_high"),
    [(-1, 300, 0, 255), (-1.5, 1e10, 0, 255), (10, 2**70, 10, 255)],
)
def test_integer_box_clips_finite_out_of_range_bounds_with_a_warning(
    low, high, expected_low, expected_high
) -> None:
    with pytest.warns(UserWarning, match="outside the range of uint8"):
        space = sekai.Box(low, high, shape=(2,), dtype=np.uint8)
    assert (space.low == expected_low).all() and (space.high == expected_high).all()


def test_int64_bound_just_above_range_is_clipped_not_overflowed() -> None:
    with pytest.warns(UserWarning):
        space = sekai.Box(0, 2.0**63, shape=(1,), dtype=np.int64)
    assert space.high[0] == np.iinfo(np.int64).max


def test_integer_box_rounds_fractional_bounds_inwards() -> None:
    space = sekai.Box(-0.5, 2.5, shape=(1,), dtype=np.int64)
    assert space.low[0] == 0 and space.high[0] == 2


def test_shares_repr_shows_int64_limits() -> None:
    shares = sekai.Box(-np.inf, np.inf, shape=(2,), dtype=np.int64)
    assert repr(shares) == "Box(-9223372036854775808, 9223372036854775807, (2,), int64)"


def test_contains_accepts_same_kind_dtypes_only() -> None:
    prices = sekai.Box(0.0, 1.0, shape=(3,))
    assert np.full(3, 0.5, np.float64) in prices  # float64 -> float32 is same_kind
    assert np.full(3, 0.5, np.float16) in prices
    depth = sekai.Box(0, 255, shape=(2,), dtype=np.uint8)
    assert np.array([1, 2], np.int64) not in depth  # signed -> unsigned is not same_kind
    assert np.array([1, 2], np.uint8) in depth
    assert np.array([1.0, 2.0]) not in depth


def test_python_ints_are_judged_by_value() -> None:
    depth = sekai.Box(0, 255, shape=(2, 2), dtype=np.uint8)
    assert [[0, 255], [7, 8]] in depth
    assert [[0, 256], [7, 8]] not in depth
    assert [[-1, 0], [7, 8]] not in depth
    assert [[0.0, 1.0], [7.0, 8.0]] not in depth  # floats do not cast to an integer box
    big = sekai.Box(0, np.inf, shape=(), dtype=np.uint64)
    assert 2**64 - 1 in big and 2**64 not in big


def test_contains_requires_exact_shape_and_bounds() -> None:
    prices = sekai.Box(0.0, 1.0, shape=(3,))
    assert [0.5, 0.5] not in prices
    assert np.full((1, 3), 0.5, np.float32) not in prices
    assert [2.0, 0.0, 0.0] not in prices
    assert np.array([np.nan, 0.5, 0.5], np.float32) not in prices
    assert [[0.5], [0.5, 0.5]] not in prices  # ragged
    assert "abc" not in prices


def test_unbounded_nan_is_not_a_member() -> None:
    returns = sekai.Box(-np.inf, np.inf, shape=(2,))
    assert np.array([np.inf, -1e30], np.float32) in returns
    assert np.array([np.nan, 0.0], np.float32) not in returns


def test_is_bounded_reports_each_side() -> None:
    assert sekai.Box(0.0, np.inf, shape=(2,)).is_bounded == (True, False)
    assert sekai.Box(-np.inf, 0.0, shape=(2,)).is_bounded == (False, True)
    mixed = sekai.Box(np.array([0.0, -np.inf]), np.array([1.0, np.inf]))
    assert mixed.is_bounded == (False, False)


def test_zero_is_zero_clipped_into_bounds_and_a_fresh_array() -> None:
    space = sekai.Box(np.array([1.0, -3.0, -1.0]), np.array([2.0, -2.0, 1.0]))
    zero = space.zero()
    np.testing.assert_array_equal(zero, [1.0, -2.0, 0.0])
    assert zero.dtype == np.float32
    zero[0] = 7.0
    assert space.zero()[0] == 1.0


def test_unbounded_dimensions_sample_every_kind_of_bound() -> None:
    low = np.array([-np.inf, 0.0, -np.inf, 0.0] * 500)
    high = np.array([np.inf, np.inf, 0.0, 1.0] * 500)
    space = sekai.Box(low, high, seed=0)
    sample = space.sample().reshape(500, 4)
    assert space.sample() in space
    assert (sample[:, 0] < 0).any() and (sample[:, 0] > 0).any()  # normal: both signs
    assert (sample[:, 1] >= 0).all() and sample[:, 1].max() > 1  # exponential above low
    assert (sample[:, 2] <= 0).all() and sample[:, 2].min() < -1  # exponential below high
    assert ((sample[:, 3] >= 0) & (sample[:, 3] <= 1)).all()


def test_bounded_float_sample_is_uniform_from_the_generator() -> None:
    space = sekai.Box(-1.0, 3.0, shape=(2, 2), seed=5)
    expected = np.random.default_rng(5).uniform(-1.0, 3.0, size=(2, 2)).astype(np.float32)
    np.testing.assert_array_equal(space.sample(), expected)


def test_samples_have_the_space_dtype_and_shape() -> None:
    for dtype in (np.float32, np.float64, np.int16, np.uint8):
        sample = sekai.Box(0, 10, shape=(2, 1), dtype=dtype, seed=1).sample()
        assert isinstance(sample, np.ndarray) and sample.dtype == dtype and sample.shape == (2, 1)


def test_repr_summarises_long_bounds_only() -> None:
    low = np.array([-4.8, -np.inf, -0.41887903, -np.inf], np.float32)
    cartpole = sekai.Box(low, -low)
    assert repr(cartpole) == (
        "Box([-4.8, -inf, -0.41887903, -inf], [4.8, inf, 0.41887903, inf], (4,), float32)"
    )
    assert repr(batch_space(cartpole, 4)) == (
        "Box([-4.8, -inf, -0.41887903, ..., -inf, -0.41887903, -inf], "
        "[4.8, inf, 0.41887903, ..., inf, 0.41887903, inf], (4, 4), float32)"
    )
    assert repr(sekai.Box(0, 255, shape=(2, 2), dtype=np.uint8)) == "Box(0, 255, (2, 2), uint8)"


def test_equality_compares_bounds_shape_and_dtype() -> None:
    space = sekai.Box(0.0, 1.0, shape=(2,))
    assert space == sekai.Box(np.zeros(2), np.ones(2))
    assert space != sekai.Box(0.0, 1.0, shape=(3,))
    assert space != sekai.Box(0.0, 2.0, shape=(2,))
    assert space != sekai.Box(0.0, 1.0, shape=(2,), dtype=np.float64)
    assert space != "Box"


@pytest.mark.parametrize("shape", [(2.5,), (2, 1.5), "ab", (True,), 2.0])
def test_shapes_that_are_not_integers_are_a_type_error(shape) -> None:
    with pytest.raises(TypeError, match="Box shape"):  # (2.5,) used to become (2,)
        sekai.Box(0.0, 1.0, shape=shape)
