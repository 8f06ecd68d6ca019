"""Properties every space must have, checked on random (nested) spaces."""

from __future__ import annotations

import copy
import json
import pickle

import cloudpickle
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from space_strategies import all_spaces, assert_same_sample, flattenable_spaces, seeds

import sekai
from sekai.spaces import (
    batch_space,
    concatenate,
    flatdim,
    flatten,
    flatten_space,
    iterate,
    space_from_jsonable,
    unflatten,
    zero_sample,
)

# enough examples to cover every space type in a few seconds; no deadline on a shared machine
fast = settings(max_examples=60, deadline=None)


@fast
@given(all_spaces, seeds)
def test_samples_and_zero_samples_are_members(space: sekai.Space, seed: int) -> None:
    space.seed(seed)
    for _ in range(3):
        assert space.sample() in space
    assert zero_sample(space) in space


@fast
@given(all_spaces, seeds)
def test_equal_seeds_give_equal_samples(space: sekai.Space, seed: int) -> None:
    twin = space_from_jsonable(space.to_jsonable())
    space.seed(seed)
    twin.seed(seed)
    assert_same_sample(twin.sample(), space.sample())


@fast
@given(all_spaces)
def test_space_survives_json_pickle_and_copies(space: sekai.Space) -> None:
    assert space_from_jsonable(json.loads(json.dumps(space.to_jsonable()))) == space
    assert pickle.loads(pickle.dumps(space)) == space
    assert cloudpickle.loads(cloudpickle.dumps(space)) == space
    assert copy.deepcopy(space) == space
    assert space == space_from_jsonable(space.to_jsonable())  # __eq__ is symmetric here


@fast
@given(all_spaces, seeds)
def test_sample_survives_json(space: sekai.Space, seed: int) -> None:
    space.seed(seed)
    sample = space.sample()
    data = json.loads(json.dumps(space.sample_to_jsonable(sample)))
    restored = space.sample_from_jsonable(data)
    assert_same_sample(restored, sample)
    assert restored in space


@fast
@given(flattenable_spaces, seeds)
def test_unflatten_inverts_flatten(space: sekai.Space, seed: int) -> None:
    space.seed(seed)
    sample = space.sample()
    flat = flatten(space, sample)
    assert flat.dtype == np.float32 and flat.shape == (flatdim(space),)
    assert flat in flatten_space(space)
    assert space.is_flattenable
    assert_same_sample(unflatten(space, flat), sample)


@fast
@given(all_spaces, seeds, st.integers(0, 3))
def test_iterate_inverts_concatenate_within_batch_space(
    space: sekai.Space, seed: int, n: int
) -> None:
    space.seed(seed)
    samples = [space.sample() for _ in range(n)]
    batch = concatenate(space, samples)
    assert batch in batch_space(space, n)
    restored = list(iterate(space, batch))
    assert len(restored) == n
    for actual, expected in zip(restored, samples, strict=True):
        assert_same_sample(actual, expected)
