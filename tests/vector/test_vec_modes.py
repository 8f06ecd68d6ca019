"""make_vec's vectorization modes come from plugins: a third-party backend works by name."""

from __future__ import annotations

import numpy as np
import pytest

import sekai


@pytest.mark.needs("sekai-demo-backend")
def test_an_installed_third_party_backend_is_used_by_its_mode_name():
    from sekai_demo_backend.threads import ThreadVecEnv

    with (
        sekai.make_vec(
            "CartPole-v1", 5, "demo-threads", vector_kwargs={"num_threads": 2}
        ) as threads,
        sekai.make_vec("CartPole-v1", 5, "sync") as sync,
    ):
        assert type(threads) is ThreadVecEnv
        assert threads.spec.id == "CartPole-v1"
        np.testing.assert_array_equal(threads.reset(seed=3).observations, sync.reset(seed=3)[0])
        for action in [[0, 1, 0, 1, 1]] * 30:
            got, want = threads.step(np.array(action)), sync.step(np.array(action))
            np.testing.assert_array_equal(got.observations, want.observations)
            np.testing.assert_array_equal(got.terminated, want.terminated)
            np.testing.assert_array_equal(got.truncated, want.truncated)


@pytest.mark.parametrize("mode", ["sync", "async", "proc"])
def test_the_built_in_modes_build_their_backends(mode):
    with sekai.make_vec("CartPole-v1", 2, mode) as vec:
        assert type(vec).__name__ == {"sync": "SyncVecEnv", "async": "AsyncVecEnv"}.get(
            mode, "ProcVecEnv"
        )


@pytest.mark.parametrize("mode", ["threads", ["sync"], 3])
def test_an_unknown_mode_lists_the_installed_ones(mode):
    with pytest.raises(ValueError, match="vectorization_mode must be one of") as caught:
        sekai.make_vec("CartPole-v1", 2, mode)
    message = str(caught.value)
    for name in ["'native'", "'sync'", "'async'", "'proc'"]:
        assert name in message


@pytest.mark.needs("sekai-demo-backend")
def test_an_unknown_mode_lists_the_third_party_ones_too():
    with pytest.raises(ValueError, match="'demo-threads'"):
        sekai.make_vec("CartPole-v1", 2, "threads")
