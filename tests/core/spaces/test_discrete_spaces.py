"""Discrete, MultiDiscrete and MultiBinary: construction, membership, sampling, repr."""

from __future__ import annotations

import numpy as np
import pytest

import sekai


def test_discrete_members_are_integers_in_range_but_not_bools() -> None:
    side = sekai.Discrete(3, start=-1)
    assert -1 in side and 1 in side and 2 not in side and -2 not in side
    assert np.int8(0) in side and np.uint64(1) in side
    assert np.array(1) in side
    assert np.array([1]) not in side  # only 0-d arrays
    assert True not in sekai.Discrete(2) and np.True_ not in sekai.Discrete(2)
    assert 1.0 not in side and "1" not in side and None not in side


def test_discrete_accepts_numpy_integers_for_n_and_start() -> None:
    space = sekai.Discrete(np.int64(3), start=np.int32(-1))
    assert space == sekai.Discrete(3, start=-1)
    assert repr(space) == "Discrete(3, start=-1)"


@pytest.mark.parametrize(
    ("n", "error"), [(0, ValueError), (-2, ValueError), (2.0, TypeError), (True, TypeError)]
)
def test_discrete_rejects_bad_n(n, error) -> None:
    with pytest.raises(error, match="Discrete n"):
        sekai.Discrete(n)


def test_discrete_samples_are_intp_from_the_generator() -> None:
    space = sekai.Discrete(7, start=10, seed=3)
    rng = np.random.default_rng(3)
    for _ in range(5):
        sample = space.sample()
        assert type(sample) is np.intp
        assert sample == 10 + rng.integers(7)


def test_multi_discrete_contains_checks_each_entry_range() -> None:
    space = sekai.MultiDiscrete([[2, 3], [4, 5]], start=[[0, -1], [1, 2]])
    assert np.array([[1, 1], [4, 6]]) in space
    assert np.array([[2, 1], [4, 6]]) not in space
    assert np.array([[1, -2], [4, 6]]) not in space
    assert np.array([1, 1, 4, 6]) not in space  # shape
    assert np.array([[1.0, 1.0], [4.0, 6.0]]) not in space  # floats
    assert [[1, 1], [4, 6]] in space  # Python ints by value
    small = sekai.MultiDiscrete([3, 3], dtype=np.uint8)
    assert np.array([1, 2], np.int64) not in small and np.array([1, 2], np.uint8) in small
    assert [1, 2] in small


def test_multi_discrete_sample_and_repr() -> None:
    orders = sekai.MultiDiscrete([3, 3, 3], start=[-1, -1, -1], seed=0)
    assert repr(orders) == "MultiDiscrete([3, 3, 3], start=[-1, -1, -1])"
    sample = orders.sample()
    assert sample.dtype == np.int64 and sample.tolist() == [1, 0, 0]
    assert repr(sekai.MultiDiscrete([[2, 3]])) == "MultiDiscrete([[2, 3]])"
    assert sekai.MultiDiscrete([4, 4], dtype=np.int32, seed=0).sample().dtype == np.int32


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"nvec": [3, 0]}, ValueError, "positive"),
        ({"nvec": [3.0, 2.0]}, TypeError, "nvec"),
        ({"nvec": [3, 2], "start": [0]}, ValueError, "start has shape"),
        ({"nvec": [3, 2], "dtype": np.float32}, TypeError, "integer dtype"),
        # values the dtype cannot hold would wrap around: 300 as int8 is 44
        ({"nvec": [300], "dtype": np.int8}, ValueError, "int8"),
        ({"nvec": [3], "start": [-1], "dtype": np.uint8}, ValueError, "uint8"),
    ],
)
def test_multi_discrete_rejects_bad_arguments(kwargs, error, match) -> None:
    with pytest.raises(error, match=match):
        sekai.MultiDiscrete(**kwargs)


def test_multi_binary_shapes_members_and_samples() -> None:
    assert sekai.MultiBinary((2, 3)).shape == (2, 3)
    assert repr(sekai.MultiBinary((2, 3))) == "MultiBinary((2, 3))"
    signals = sekai.MultiBinary(4, seed=0)
    sample = signals.sample()
    assert sample.dtype == np.int8 and sample.tolist() == [0, 1, 1, 1]
    assert [0, 1, 1, 0] in signals and np.array([True, False, True, True]) in signals
    assert [0, 1, 2, 0] not in signals and [0, 1, 1] not in signals
    assert np.array([0.0, 1.0, 1.0, 0.0]) not in signals
    with pytest.raises(TypeError, match="MultiBinary n"):
        sekai.MultiBinary(2.5)
    with pytest.raises(ValueError, match="non-negative"):
        sekai.MultiBinary((2, -1))


@pytest.mark.parametrize("shape", [(2.5,), (2, 1.5), ("2",), (True, 2)])
def test_multi_binary_refuses_shapes_that_are_not_integers(shape) -> None:
    with pytest.raises(TypeError, match="MultiBinary"):  # (2.5,) used to become (2,)
        sekai.MultiBinary(shape)
