"""The singledispatch utilities: flattening, batching, zero samples, JSON, custom spaces."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sekai
from sekai.spaces import (
    batch_space,
    concatenate,
    flatdim,
    flatten,
    flatten_space,
    iterate,
    register_space_type,
    space_from_jsonable,
    unflatten,
    utils,
    zero_sample,
)


def test_utilities_are_reachable_from_utils_module() -> None:
    for name in (
        "flatdim",
        "flatten",
        "unflatten",
        "flatten_space",
        "batch_space",
        "concatenate",
        "iterate",
        "zero_sample",
        "space_from_jsonable",
        "register_space_type",
    ):
        assert getattr(utils, name) is getattr(sekai.spaces, name)


def test_flatten_layouts() -> None:
    np.testing.assert_array_equal(flatten(sekai.Discrete(3, start=-1), 0), [0, 1, 0])
    md = sekai.MultiDiscrete([2, 3], start=[1, 0])
    np.testing.assert_array_equal(flatten(md, np.array([2, 0])), [0, 1, 1, 0, 0])
    box = sekai.Box(0, 5, shape=(2, 2), dtype=np.int64)
    flat = flatten(box, np.array([[1, 2], [3, 4]]))
    assert flat.dtype == np.float32 and flat.tolist() == [1, 2, 3, 4]
    universe = sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=2)
    obs = universe.pack([[0.5, 0.25]], slots=[1])
    assert flatten(universe, obs).tolist() == [0, 0, 0.5, 0.25, 0, 1]  # values, then mask
    assert flatdim(universe) == 6
    assert flatten_space(universe) == sekai.Box(0.0, 1.0, shape=(6,))
    unflat = unflatten(universe, flatten(universe, obs))
    assert unflat["mask"].dtype == np.int8 and unflat in universe


@pytest.mark.parametrize(
    ("space", "vector"),
    [
        (sekai.Discrete(3), [0.0, 0.0, 0.0]),
        (sekai.Discrete(3), [1.0, 1.0, 0.0]),
        (sekai.MultiDiscrete([2, 2]), [1.0, 1.0, 0.0, 0.0]),
        (sekai.MultiDiscrete([2, 2]), [1.0, 0.0, 0.0, 0.0]),
    ],
)
def test_unflatten_rejects_vectors_that_are_not_one_hot(space, vector) -> None:
    with pytest.raises(ValueError, match="one-hot"):
        unflatten(space, np.array(vector, np.float32))


def test_flatten_space_of_integer_box_uses_float32_bounds() -> None:
    space = flatten_space(sekai.Box(np.array([[0, 1]]), np.array([[3, 4]]), dtype=np.int64))
    assert space == sekai.Box(np.array([0.0, 1.0]), np.array([3.0, 4.0]))


def test_batch_space_table() -> None:
    assert batch_space(sekai.Box(0.0, 1.0, shape=(2,)), 3) == sekai.Box(0.0, 1.0, shape=(3, 2))
    assert batch_space(sekai.Discrete(3, start=-1), 2) == sekai.MultiDiscrete(
        [3, 3], start=[-1, -1]
    )
    assert repr(batch_space(sekai.Discrete(2), 4)) == "MultiDiscrete([2, 2, 2, 2])"
    md = batch_space(sekai.MultiDiscrete([[2, 3]], dtype=np.int32, start=[[1, 0]]), 2)
    assert md.shape == (2, 1, 2) and md.dtype == np.int32 and md.start[1, 0, 0] == 1
    assert batch_space(sekai.MultiBinary((2, 3)), 4) == sekai.MultiBinary((4, 2, 3))
    tuple_batch = batch_space(sekai.Tuple([sekai.Discrete(2)]), 2)
    assert tuple_batch == sekai.Tuple([sekai.MultiDiscrete([2, 2])])


def test_batch_space_of_masked_box_is_a_plain_dict() -> None:
    universe = sekai.MaskedBox(-1.0, 1.0, shape=(2,), max_size=3)
    batched = batch_space(universe, 4)
    assert type(batched) is sekai.Dict
    assert batched["values"] == sekai.Box(-1.0, 1.0, shape=(4, 3, 2))
    assert batched["mask"] == sekai.MultiBinary((4, 3))


def test_batch_space_of_sequence_is_a_tuple_of_independent_copies() -> None:
    space = sekai.Sequence(sekai.Discrete(10**6), seed=0)
    batched = batch_space(space, 3)
    assert isinstance(batched, sekai.Tuple) and all(part == space for part in batched)
    assert len({id(part) for part in batched}) == 3
    firsts = [tuple(part.sample(mask=(3, None))) for part in batched]
    assert len(set(firsts)) == 3  # not three copies of one stream


def test_batch_space_rejects_negative_sizes() -> None:
    with pytest.raises(ValueError, match="batch size"):
        batch_space(sekai.Discrete(2), -1)


def test_concatenate_and_iterate_dict_batches_are_dicts_of_arrays() -> None:
    space = sekai.Dict(prices=sekai.Box(0.0, 1.0, shape=(5,)), regime=sekai.Discrete(3), seed=0)
    samples = [space.sample() for _ in range(4)]
    batch = concatenate(space, samples)
    assert batch["prices"].shape == (4, 5) and batch["regime"].shape == (4,)
    assert batch["regime"].dtype == np.int64
    back = list(iterate(space, batch))
    assert [int(item["regime"]) for item in back] == [int(s["regime"]) for s in samples]


def test_concatenate_casts_lists_and_checks_shapes() -> None:
    box = sekai.Box(0, 255, shape=(2,), dtype=np.uint8)
    batch = concatenate(box, [[1, 2], [3, 4]])
    assert batch.dtype == np.uint8 and batch.tolist() == [[1, 2], [3, 4]]
    assert concatenate(sekai.Discrete(2), []).shape == (0,)
    with pytest.raises(ValueError, match="cannot stack"):
        concatenate(box, [[1, 2, 3]])


def test_sequence_batches_are_tuples_of_per_env_samples() -> None:
    space = sekai.Sequence(sekai.Discrete(3), max_length=3, seed=0)
    samples = [space.sample() for _ in range(3)]
    batch = concatenate(space, samples)
    assert batch == tuple(samples) and list(iterate(space, batch)) == samples
    assert batch in batch_space(space, 3)


def test_zero_sample_table() -> None:
    np.testing.assert_array_equal(zero_sample(sekai.Box(1.0, 2.0, shape=(2,))), [1.0, 1.0])
    assert zero_sample(sekai.Discrete(3, start=-1)) == -1
    assert zero_sample(sekai.MultiDiscrete([2, 3], start=[1, -1])).tolist() == [1, -1]
    assert zero_sample(sekai.MultiBinary(3)).tolist() == [0, 0, 0]
    space = sekai.Dict(a=sekai.Discrete(2, start=5), b=sekai.Tuple([sekai.MultiBinary(1)]))
    zero = zero_sample(space)
    assert zero["a"] == 5 and zero["b"][0].tolist() == [0]
    universe = sekai.MaskedBox(1.0, 2.0, shape=(2,), max_size=2)
    assert zero_sample(universe)["mask"].tolist() == [0, 0]
    assert (zero_sample(universe)["values"] == 1.0).all()
    assert zero_sample(sekai.Sequence(sekai.Discrete(2))) == ()
    assert zero_sample(sekai.Sequence(sekai.Box(0, 1, shape=(2,)), stack=True)).shape == (0, 2)


def test_json_is_plain_dicts_with_infinities() -> None:
    space = sekai.Dict(prices=sekai.Box(-np.inf, np.inf, shape=(5,)), regime=sekai.Discrete(3))
    text = json.dumps(space.to_jsonable())
    assert text.startswith('{"type": "Dict", "spaces": {"prices": {"type": "Box", "low":')
    assert "-Infinity" in text
    assert space_from_jsonable(json.loads(text)) == space


def test_json_keeps_every_parameter() -> None:
    spaces = [
        sekai.Box(np.array([0, -1]), np.array([3, 1]), dtype=np.int16),
        sekai.Box(-np.inf, np.inf, shape=(2,), dtype=np.uint64),
        sekai.MultiDiscrete([[2, 3]], dtype=np.int32, start=[[0, -4]]),
        sekai.MultiBinary((2, 1)),
        sekai.MaskedBox(0.0, 1.0, shape=(2,), max_size=3, fill_value=[0.5, 1.0], dtype=np.float64),
        sekai.Sequence(sekai.Discrete(3, start=2), max_length=4, stack=True),
        sekai.Tuple([sekai.Sequence(sekai.MultiBinary(2))]),
    ]
    for space in spaces:
        assert space_from_jsonable(json.loads(json.dumps(space.to_jsonable()))) == space


@pytest.mark.parametrize("data", [{"type": "Simplex9"}, {"n": 3}, ["Box"], {"type": ["Box"]}])
def test_unknown_json_is_a_value_error(data) -> None:
    with pytest.raises(ValueError, match="type"):
        space_from_jsonable(data)


@pytest.mark.parametrize(
    ("data", "missing"),
    [
        ({"type": "Discrete"}, "Discrete.*'n'"),
        ({"type": "Box", "low": 0.0, "high": 1.0, "shape": [2]}, "Box.*'dtype'"),
        ({"type": "Dict", "spaces": {"a": {"type": "MultiBinary"}}}, "MultiBinary.*'n'"),
    ],
)
def test_json_missing_a_field_is_a_value_error_naming_it(data, missing) -> None:
    with pytest.raises(ValueError, match=missing):  # not a bare KeyError
        space_from_jsonable(data)


class _Interval(sekai.Space[np.ndarray]):
    """A minimal custom space: one float in [0, 1], registering only what it needs."""

    def __init__(self, seed=None):
        super().__init__(shape=(1,), dtype=np.float32, seed=seed)

    def sample(self, mask=None):
        return self.rng.random(1).astype(np.float32)

    def contains(self, x):
        return bool(np.all((np.asarray(x) >= 0) & (np.asarray(x) <= 1)))

    @property
    def is_flattenable(self):
        return True

    def to_jsonable(self):
        return {"type": "_Interval"}

    @classmethod
    def from_jsonable(cls, data):
        return cls()

    def __eq__(self, other):
        return isinstance(other, _Interval)


def test_custom_spaces_opt_in_per_utility() -> None:
    space = _Interval(seed=0)
    with pytest.raises(NotImplementedError, match=r"flatdim.register\(_Interval"):
        flatdim(space)
    with pytest.raises(NotImplementedError, match="concatenate"):
        concatenate(space, [space.sample()])
    batch = np.stack([space.sample() for _ in range(3)])
    assert len(list(iterate(space, batch))) == 3  # the default splits along the first axis
    data = space.sample_to_jsonable(space.sample())
    assert space.sample_from_jsonable(json.loads(json.dumps(data))) in space
    register_space_type("_Interval", _Interval)
    assert space_from_jsonable({"type": "_Interval"}) == space
    with pytest.raises(TypeError, match="Space subclass"):
        register_space_type("nope", dict)


def test_base_space_reports_missing_methods() -> None:
    bare = sekai.Space()
    for call in (
        bare.sample,
        lambda: bare.contains(1),
        lambda: bare.is_flattenable,
        bare.to_jsonable,
    ):
        with pytest.raises(NotImplementedError, match="Space does not implement"):
            call()
    assert bare.shape is None and bare.dtype is None


def test_equality_has_no_side_effects_on_the_generator() -> None:
    space, twin = (
        sekai.Dict(a=sekai.Discrete(100), seed=3),
        sekai.Dict(a=sekai.Discrete(100), seed=3),
    )
    for _ in range(3):
        assert space == twin and space == sekai.Dict(a=sekai.Discrete(100))
    assert space.sample() == sekai.Dict(a=sekai.Discrete(100), seed=3).sample()


@pytest.mark.parametrize(
    ("space", "x"),
    [
        (sekai.Discrete(3), -1),  # would index from the end: the one-hot of 2
        (sekai.Discrete(3, start=-1), 2),
        (sekai.MultiDiscrete([2, 3]), [2, 0]),  # would set the next entry's first slot
        (sekai.MultiDiscrete([2, 3]), [0, -1]),
        (sekai.MultiDiscrete([2, 3]), [0, 1, 1]),
        (sekai.Box(0.0, 1.0, shape=(3,)), [0.5, 0.5]),  # would give a vector of the wrong length
        (sekai.Box(0.0, 1.0, shape=(2, 2)), np.zeros(4)),
        (sekai.MultiBinary(3), [1, 0]),
    ],
)
def test_flatten_rejects_values_outside_the_space_layout(space, x) -> None:
    with pytest.raises(ValueError, match=type(space).__name__):
        flatten(space, x)


def test_flatten_of_a_dict_with_a_bad_part_names_the_part_space() -> None:
    space = sekai.Dict(prices=sekai.Box(-1.0, 1.0, shape=(2,)), regime=sekai.Discrete(3))
    with pytest.raises(ValueError, match="Discrete"):
        flatten(space, {"prices": np.zeros(2, np.float32), "regime": 3})
