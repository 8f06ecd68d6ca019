"""gymnasium's spellings that a switching user reaches for on a VecEnv."""

from __future__ import annotations

import numpy as np
import pytest
from vector_envs import DriftVecEnv

import sekai


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_single_spaces_are_aliases_of_the_sub_env_spaces(mode: str) -> None:
    with sekai.make_vec("CartPole-v1", 4, mode) as vec:
        assert vec.single_observation_space is vec.observation_space
        assert vec.single_action_space is vec.action_space


def test_single_spaces_follow_a_wrapper_that_changes_the_spaces() -> None:
    with sekai.VecTransformObservation(
        sekai.make_vec("CartPole-v1", 2), lambda batch: batch[:, :2], sekai.Box(-1.0, 1.0, (2,))
    ) as vec:
        assert vec.single_observation_space == sekai.Box(-1.0, 1.0, (2,))
        assert vec.single_action_space is vec.action_space


def test_a_single_action_names_the_batch_action_space() -> None:
    with sekai.make_vec("CartPole-v1", 4) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match=r"vec\.batch_action_space\.sample\(\)"):
            vec.step(vec.action_space.sample())


def test_a_native_env_names_the_batch_action_space_too() -> None:
    vec = DriftVecEnv(3)
    vec.reset(seed=0)
    assert vec.single_action_space is vec.action_space
    with pytest.raises(ValueError, match=r"vec\.batch_action_space\.sample\(\)"):
        vec.step(1)


@pytest.mark.parametrize("mode", ["sync", "async", "proc"])
def test_an_action_batch_of_the_wrong_shape_is_refused_on_every_backend(mode: str) -> None:
    with sekai.make_vec("CartPole-v1", 4, mode) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match=r"shape \(4, 1\).*batch_action_space.*\(4,\)"):
            vec.step(np.ones((4, 1), np.int64))
        vec.step(np.ones(4, np.int64))  # still usable


def test_a_native_env_refuses_an_action_batch_of_the_wrong_shape() -> None:
    vec = DriftVecEnv(4)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=r"shape \(4, 1\).*batch_action_space.*\(4,\)"):
        vec.step(np.ones((4, 1), np.int64))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_an_action_outside_the_space_is_refused(mode: str) -> None:
    with sekai.make_vec("CartPole-v1", 2, mode) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match="CartPole actions are 0"):
            vec.step([True, 1])
