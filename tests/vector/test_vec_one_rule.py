"""One rule for seeds and counts everywhere: single envs, spaces and every vector backend."""

from __future__ import annotations

import numpy as np
import pytest
from vector_envs import DriftVecEnv, WalkEnv

import sekai
from sekai.spaces import Discrete
from sekai.vector import SyncVecEnv

BAD_SEEDS = [
    (True, TypeError, "seed must be an int or None, got bool True"),
    (1.5, TypeError, "seed must be an int or None, got float 1.5"),
    ("3", TypeError, "seed must be an int or None, got str '3'"),
    (-1, ValueError, "seed must be a non-negative int, got -1"),
]


@pytest.mark.parametrize(("seed", "error", "message"), BAD_SEEDS)
def test_a_bad_seed_gets_the_same_error_from_envs_spaces_and_vector_envs(seed, error, message):
    vec = SyncVecEnv([WalkEnv, WalkEnv])
    native = DriftVecEnv(2)
    refusing = [
        lambda: sekai.Env()._set_rng(seed),
        lambda: Discrete(3).seed(seed),
        lambda: vec.reset(seed=[0, seed]),
        lambda: native.reset(seed=[0, seed]),
    ]
    if error is ValueError:  # a whole-batch seed of another type says what a batch takes
        refusing += [lambda: vec.reset(seed=seed), lambda: native.reset(seed=seed)]
    for refuse in refusing:
        with pytest.raises(error, match=message):
            refuse()


def test_numpy_integers_are_counts_everywhere():
    steps = np.int64(3)
    assert sekai.make("CartPole-v1", max_episode_steps=steps).max_episode_steps == 3
    assert DriftVecEnv(np.int32(2), max_episode_steps=steps).max_episode_steps == 3
    with sekai.make_vec("CartPole-v1", np.int64(2), "sync") as vec:
        assert vec.num_envs == 2
    for bad in (True, 2.0):
        with pytest.raises(TypeError, match="max_episode_steps must be an int"):
            DriftVecEnv(2, max_episode_steps=bad)
        with pytest.raises(TypeError, match="num_envs must be an int"):
            sekai.make_vec("CartPole-v1", bad)
    with pytest.raises(ValueError, match="max_episode_steps must be at least 1, got 0"):
        DriftVecEnv(2, max_episode_steps=0)
