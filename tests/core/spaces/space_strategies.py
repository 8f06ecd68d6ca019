"""Hypothesis strategies that build random sekai spaces, nested ones included."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

import sekai

shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)
seeds = st.integers(0, 2**32 - 1)


@st.composite
def _float_bounds(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """Scalar or per-element bounds, some of them infinite on either side."""
    finite = st.floats(-100, 100, allow_nan=False, width=32)
    size = int(np.prod(shape))
    low = np.array(draw(st.lists(finite | st.just(-np.inf), min_size=size, max_size=size)))
    width = np.array(draw(st.lists(st.floats(0, 50, width=32), min_size=size, max_size=size)))
    high = np.where(draw(st.lists(st.booleans(), min_size=size, max_size=size)), np.inf, 0)
    high = np.where(np.isinf(low) & (high == 0), width, np.where(high == 0, low + width, high))
    if draw(st.booleans()) and size:
        return float(low.flat[0]), float(high.flat[0])  # scalars broadcast to shape
    return low.reshape(shape), high.reshape(shape)


@st.composite
def _int_bounds(draw: st.DrawFn, shape: tuple[int, ...]) -> tuple[Any, Any]:
    low = draw(st.integers(-5, 5))
    return low, low + draw(st.integers(0, 5))


@st.composite
def boxes(draw: st.DrawFn) -> sekai.Box:
    shape = draw(shapes)
    dtype = draw(st.sampled_from([np.float32, np.int64, np.int32, np.uint8]))
    if dtype is np.float32:
        low, high = draw(_float_bounds(shape))
    else:
        low, high = draw(_int_bounds(shape))
        if dtype is np.uint8:
            low, high = abs(low), abs(low) + high - low
    return sekai.Box(low, high, shape=shape, dtype=dtype)


discretes = st.builds(sekai.Discrete, st.integers(1, 5), start=st.integers(-3, 3))


@st.composite
def multi_discretes(draw: st.DrawFn) -> sekai.MultiDiscrete:
    shape = draw(st.sampled_from([(1,), (3,), (2, 2)]))
    nvec = draw(
        st.lists(st.integers(1, 4), min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))
    )
    start = draw(st.none() | st.integers(-3, 3).map(lambda s: np.full(shape, s)))
    return sekai.MultiDiscrete(np.reshape(nvec, shape), start=start)


multi_binaries = st.integers(0, 4).map(sekai.MultiBinary) | shapes.map(sekai.MultiBinary)


@st.composite
def masked_boxes(draw: st.DrawFn) -> sekai.MaskedBox:
    shape = draw(shapes)
    low, high = draw(_float_bounds(shape))
    space = sekai.MaskedBox(low, high, shape=shape, max_size=draw(st.integers(0, 3)))
    if draw(st.booleans()):  # a non-default fill value drawn from the element space
        space.element_space.seed(draw(seeds))
        fill = space.element_space.sample()
        space = sekai.MaskedBox(low, high, shape=shape, max_size=space.max_size, fill_value=fill)
    return space


flat_leaves = boxes() | discretes | multi_discretes() | multi_binaries | masked_boxes()


def _composites(children: st.SearchStrategy[sekai.Space]) -> st.SearchStrategy[sekai.Space]:
    keys = st.text("abcxyz", min_size=1, max_size=3)
    return st.dictionaries(keys, children, min_size=1, max_size=3).map(sekai.Dict) | st.lists(
        children, min_size=1, max_size=3
    ).map(sekai.Tuple)


def _with_sequences(children: st.SearchStrategy[sekai.Space]) -> st.SearchStrategy[sekai.Space]:
    sequences = st.builds(
        sekai.Sequence,
        children,
        max_length=st.none() | st.integers(0, 3),
        stack=st.booleans(),
    )
    return _composites(children) | sequences


flattenable_spaces = st.recursive(flat_leaves, _composites, max_leaves=5)
"""Spaces whose every part is flattenable (no Sequence)."""

all_spaces = st.recursive(flat_leaves, _with_sequences, max_leaves=5)
"""Every space type, Sequences nested anywhere."""


def assert_same_sample(actual: Any, expected: Any) -> None:
    """Equal structure, container types, dtypes and values."""
    assert type(actual) is type(expected), (type(actual), type(expected))
    if isinstance(expected, dict):
        assert list(actual) == list(expected)
        for key in expected:
            assert_same_sample(actual[key], expected[key])
    elif isinstance(expected, tuple):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            assert_same_sample(a, e)
    else:
        assert actual.dtype == expected.dtype
        assert actual.shape == expected.shape
        np.testing.assert_array_equal(actual, expected)
