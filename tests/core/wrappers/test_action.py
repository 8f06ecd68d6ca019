"""ClipAction and RescaleAction on Box action spaces; ClipReward."""

from __future__ import annotations

import numpy as np
import pytest
from wrapper_envs import SampleEnv

import sekai
from sekai.wrappers import ClipAction, ClipReward, RescaleAction

OBS = sekai.Box(0.0, 1.0, shape=(1,))


def _env(action_space):
    return SampleEnv(OBS, action_space)


def test_clip_action_clips_into_bounds_and_accepts_anything():
    inner = _env(sekai.Box(np.array([-1.0, 0.0]), np.array([1.0, 0.5])))
    env = ClipAction(inner)
    assert env.action_space == sekai.Box(-np.inf, np.inf, shape=(2,))
    env.reset()
    env.step(np.array([5.0, -5.0]))
    np.testing.assert_array_equal(inner.actions[-1], [1.0, 0.0])
    assert inner.actions[-1].dtype == np.float32
    env.step([0.25, 0.25])
    np.testing.assert_array_equal(inner.actions[-1], [0.25, 0.25])


def test_rescale_action_maps_the_callers_range_onto_the_envs():
    inner = _env(sekai.Box(np.array([0.0, -10.0]), np.array([4.0, 10.0])))
    env = RescaleAction(inner, -1.0, 1.0)
    assert env.action_space == sekai.Box(-1.0, 1.0, shape=(2,))
    env.reset()
    for action, expected in (([-1.0, -1.0], [0.0, -10.0]), ([1.0, 0.0], [4.0, 0.0])):
        env.step(np.array(action, np.float32))
        np.testing.assert_allclose(inner.actions[-1], expected)
    env.step(np.array([0.5, 0.5], np.float32))
    np.testing.assert_allclose(inner.actions[-1], [3.0, 5.0])


@pytest.mark.parametrize(
    ("space", "error", "match"),
    [
        (sekai.Discrete(3), TypeError, "Box action space, got Discrete"),
        (sekai.Box(-np.inf, 1.0, shape=(2,)), ValueError, "finite action bounds"),
        (sekai.Box(0, 5, shape=(2,), dtype=np.int64), TypeError, "floating-point"),
    ],
)
def test_rescale_action_errors(space, error, match):
    with pytest.raises(error, match=match):
        RescaleAction(_env(space), -1.0, 1.0)


def test_rescale_action_needs_min_below_max():
    with pytest.raises(ValueError, match="min_action must be below max_action"):
        RescaleAction(_env(sekai.Box(0.0, 1.0, shape=(2,))), 1.0, -1.0)


def test_clip_action_needs_a_box():
    with pytest.raises(TypeError, match="ClipAction needs a Box action space"):
        ClipAction(_env(sekai.Discrete(2)))


@pytest.mark.parametrize(
    ("low", "high", "rewards"),
    [(-0.5, 0.5, [-0.5, 0.5]), (None, 0.5, [-2.0, 0.5]), (-0.5, None, [-0.5, 2.0])],
)
def test_clip_reward(low, high, rewards):
    class Rewarding(SampleEnv):
        def step(self, action):
            return super().step(action)._replace(reward=action)

    env = ClipReward(Rewarding(OBS), low, high)
    env.reset()
    assert [env.step(-2.0).reward, env.step(2.0).reward] == rewards


def test_clip_reward_errors():
    with pytest.raises(ValueError, match="needs min_reward, max_reward or both"):
        ClipReward(_env(None))
    with pytest.raises(ValueError, match="must not exceed"):
        ClipReward(_env(None), 1.0, 0.0)
    with pytest.raises(ValueError, match="NaN"):  # max(reward, nan) would not clip at all
        ClipReward(_env(None), float("nan"), 1.0)
