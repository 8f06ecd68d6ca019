"""A worker ships its slice's infos packed by key; the parent must get back what pickling the
list itself gives: the same keys in the same order, equal values of the same types."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sekai.vector import ProcVecEnv
from sekai.vector._info_columns import packed

# values of one key across the infos: one of these kinds per key, or a mixture
_KINDS = [
    st.booleans(),
    st.integers(-(2**70), 2**70),  # some beyond int64
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(width=32).map(np.float32),
    st.integers(-(2**31), 2**31 - 1).map(np.int64),
    st.lists(st.floats(allow_nan=False), min_size=3, max_size=3).map(np.array),
    st.lists(st.integers(0, 9), min_size=0, max_size=3).map(lambda v: np.array(v, np.int32)),
    st.floats(allow_nan=False).map(np.array),  # 0-d arrays
    st.lists(st.floats(allow_nan=False), min_size=2, max_size=2).map(
        lambda v: np.array(v, ">f8")  # not the native byte order
    ),
    st.lists(st.integers(0, 9), min_size=4, max_size=4).map(lambda v: np.array(v).reshape(2, 2)),
    st.sampled_from([(2,), (2, 1), (2, 2)]).map(np.zeros),  # one length, other axes differ
    st.integers(0, 9).map(lambda v: np.array([(v, 0.5)], dtype=[("a", "i4"), ("b", "f8")])),
    st.integers(0, 10**9).map(lambda v: np.datetime64(v, "s")),  # a dtype with a unit
    st.text(max_size=3),
    st.sampled_from(["a", "a\x00", "bc"]).map(np.str_),  # trailing NULs must survive
    st.none(),
]


@st.composite
def slices_of_infos(draw: st.DrawFn) -> list[dict[str, object]]:
    count = draw(st.integers(0, 6))
    keys = draw(st.lists(st.sampled_from("abcde"), unique=True, max_size=4))
    kinds = {key: draw(st.sampled_from(_KINDS)) for key in keys}
    mixed = draw(st.booleans())  # a key whose type changes from one info to the next
    infos = []
    for _ in range(count):
        info = {key: draw(kinds[key]) for key in keys}
        if mixed and keys:
            info[keys[0]] = draw(st.one_of(*_KINDS))
        if keys and draw(st.integers(0, 9)) == 0:  # now and then, another key order
            info = dict(reversed(info.items()))
        infos.append(info)
    return infos


def _same(a: object, b: object) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        nan = a.dtype.kind in "fc"  # NaN equals NaN here (array_equal refuses it elsewhere)
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=nan)  # type: ignore[union-attr]
    return a == b or (a != a and b != b)  # NaN equals NaN here


@settings(max_examples=300, deadline=None)
@given(infos=slices_of_infos())
@example(infos=[{"a": np.zeros(2)}, {"a": np.array(1.0)}])  # a 0-d array after a 1-d one
def test_packed_infos_unpickle_to_the_same_dicts(infos):
    back = pickle.loads(pickle.dumps(packed(infos), -1))
    expected = pickle.loads(pickle.dumps(infos, -1))  # (numpy's pickle drops a str_'s NULs)
    assert type(back) is list and len(back) == len(infos)
    for original, received in zip(expected, back, strict=True):
        assert type(received) is dict
        assert list(received) == list(original)
        assert all(_same(original[key], received[key]) for key in original)


def test_uniform_infos_ship_smaller_than_the_list():
    infos = [
        {"step": i, "wealth": 1.0 + i, "weights": np.full(6, i / 6), "flag": np.bool_(i % 2)}
        for i in range(128)
    ]
    # one array per key instead of a pickled object per value
    assert len(pickle.dumps(packed(infos), -1)) < 0.8 * len(pickle.dumps(infos, -1))
    back = pickle.loads(pickle.dumps(packed(infos), -1))
    back[3]["weights"][0] = -1.0  # the rows are writable, as unpickled arrays are
    assert back[3]["weights"][0] == -1.0 and back[4]["weights"][0] == 4 / 6


@pytest.mark.needs("sekai-finance")
def test_proc_vec_env_infos_of_a_real_env_arrive_whole():
    import sekai

    with ProcVecEnv([lambda: sekai.make("Portfolio-v0")] * 4, num_workers=2) as vec:
        vec.reset(seed=0)
        with sekai.SyncVecEnv([lambda: sekai.make("Portfolio-v0")] * 4) as sync:
            sync.reset(seed=0)
            actions = np.full((4, 6), 1 / 6)
            for _ in range(3):
                infos, expected = vec.step(actions).infos, sync.step(actions).infos
                for got, want in zip(infos, expected, strict=True):
                    assert list(got) == list(want)
                    assert all(_same(got[key], want[key]) for key in want)
