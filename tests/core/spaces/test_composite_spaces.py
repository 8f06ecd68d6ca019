"""Dict and Tuple: construction, mapping access, membership, seeding."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import sekai


def _pair() -> sekai.Dict:
    return sekai.Dict({"x": sekai.Discrete(1000), "y": sekai.Box(0, 1, shape=(2,))})


def test_dict_keeps_insertion_order_and_mapping_access() -> None:
    space = sekai.Dict({"z": sekai.Discrete(2), "a": sekai.MultiBinary(1)})
    assert list(space.keys()) == ["z", "a"] and list(space) == ["z", "a"]
    assert space["a"] == sekai.MultiBinary(1) and len(space) == 2
    assert [repr(v) for v in space.values()] == ["Discrete(2)", "MultiBinary(1)"]
    assert dict(space.items())["z"] == sekai.Discrete(2)
    assert repr(space) == "Dict({z: Discrete(2), a: MultiBinary(1)})"
    assert sekai.Dict(z=sekai.Discrete(2), a=sekai.MultiBinary(1)) == space


def test_dict_order_matters_for_equality() -> None:
    first = sekai.Dict(a=sekai.Discrete(2), b=sekai.Discrete(3))
    assert first != sekai.Dict(b=sekai.Discrete(3), a=sekai.Discrete(2))
    assert first != sekai.Tuple([sekai.Discrete(2), sekai.Discrete(3)])


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (({"a": sekai.Discrete(2)},), {"b": sekai.Discrete(2)}, "not both"),
        (({1: sekai.Discrete(2)},), {}, "keys must be str"),
        (({"a": 3},), {}, "must be a sekai space"),
        (([sekai.Discrete(2)],), {}, "mapping"),
    ],
)
def test_dict_rejects_bad_arguments(args, kwargs, match) -> None:
    with pytest.raises(TypeError, match=match):
        sekai.Dict(*args, **kwargs)


def test_dict_contains_requires_exactly_its_keys() -> None:
    space = sekai.Dict(a=sekai.Discrete(2), b=sekai.Discrete(2))
    assert {"a": 0, "b": 1} in space and {"b": 1, "a": 0} in space
    assert {"a": 0} not in space and {"a": 0, "b": 1, "c": 0} not in space
    assert {"a": 0, "b": 2} not in space and [0, 1] not in space


def test_tuple_indexing_membership_and_errors() -> None:
    pair = sekai.Tuple([sekai.Discrete(2), sekai.Box(-1, 1, shape=(2,))])
    assert pair[0] == sekai.Discrete(2) and len(pair) == 2
    assert repr(pair) == "Tuple(Discrete(2), Box(-1.0, 1.0, (2,), float32))"
    assert (1, [0.0, 0.5]) in pair and [1, [0.0, 0.5]] in pair
    assert (1,) not in pair and (2, [0.0, 0.5]) not in pair and "ab" not in pair
    with pytest.raises(TypeError, match="element 1"):
        sekai.Tuple([sekai.Discrete(2), "box"])


def test_int_seed_seeds_every_sub_space_deterministically() -> None:
    a, b = _pair(), _pair()
    assert a.seed(123) == 123 and b.seed(123) == 123
    for _ in range(3):
        first, second = a.sample(), b.sample()
        assert first["x"] == second["x"]
        np.testing.assert_array_equal(first["y"], second["y"])
    c = _pair()
    c.seed(124)
    assert [int(c.sample()["x"]) for _ in range(5)] != [int(a.sample()["x"]) for _ in range(5)]


def test_sub_spaces_of_one_seed_get_different_streams() -> None:
    space = sekai.Tuple([sekai.Discrete(10**6), sekai.Discrete(10**6)], seed=7)
    samples = [space.sample() for _ in range(5)]
    assert [s[0] for s in samples] != [s[1] for s in samples]


def test_dict_of_seeds_seeds_sub_spaces_individually() -> None:
    space = _pair()
    assert space.seed({"x": 5, "y": 6}) == {"x": 5, "y": 6}
    alone = sekai.Discrete(1000, seed=5)
    assert space.sample()["x"] == alone.sample()
    with pytest.raises(ValueError, match="seed keys"):
        space.seed({"x": 5})


def test_list_of_seeds_seeds_tuple_entries_individually() -> None:
    space = sekai.Tuple([sekai.Discrete(1000), sekai.Discrete(1000)])
    assert space.seed([1, 2]) == [1, 2]
    assert space.sample() == (
        sekai.Discrete(1000, seed=1).sample(),
        sekai.Discrete(1000, seed=2).sample(),
    )
    with pytest.raises(ValueError, match="2 sub-spaces"):
        space.seed([1, 2, 3])


def test_seed_none_returns_a_seed_that_reproduces_the_stream() -> None:
    space = _pair()
    used = space.seed()
    first = [int(space.sample()["x"]) for _ in range(5)]
    space.seed(used)
    assert [int(space.sample()["x"]) for _ in range(5)] == first


@pytest.mark.parametrize(
    ("seed", "error"), [(-1, ValueError), (1.5, TypeError), ("1", TypeError), (True, TypeError)]
)
def test_bad_seeds_are_rejected(seed, error) -> None:
    with pytest.raises(error, match="seed"):
        sekai.Discrete(3).seed(seed)
    with pytest.raises(error, match="seed"):
        _pair().seed(seed)


def test_unseeded_spaces_draw_from_os_entropy() -> None:
    draws = {int(sekai.Discrete(2**62).sample()) for _ in range(5)}
    assert len(draws) == 5


@pytest.mark.parametrize(
    ("build", "where"),
    [
        (lambda s: sekai.Dict({"a": s}), r"Dict value for 'a'"),
        (lambda s: sekai.Tuple([s]), r"Tuple element 0"),
        (lambda s: sekai.Sequence(s), r"Sequence feature_space"),
    ],
)
def test_a_gymnasium_sub_space_is_named_and_pointed_at_compat(build, where) -> None:
    with pytest.raises(
        TypeError, match=where + r" must be a sekai space.*gymnasium.*sekai\.compat"
    ):
        build(gymnasium.spaces.Discrete(2))
    with pytest.raises(TypeError, match=where + r" must be a sekai space") as caught:
        build(3)
    assert "compat" not in str(caught.value)
