"""ClipAction and RescaleAction on Box and composite action spaces; ClipReward."""

from __future__ import annotations

import re

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
        (sekai.Discrete(3), TypeError, r"Box parts.*Discrete\(3\) has none"),
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


# A portfolio action: target weights, a side, and a nested Tuple of an order size and a flag.
PORTFOLIO = sekai.Dict(
    {
        "weights": sekai.Box(0.0, 1.0, shape=(3,)),
        "side": sekai.Discrete(3, start=-1),
        "order": sekai.Tuple([sekai.Box(-10.0, 10.0, shape=()), sekai.MultiBinary(2)]),
    }
)


def test_clip_action_clips_every_box_part_of_a_nested_space():
    inner = _env(PORTFOLIO)
    env = ClipAction(inner)
    assert env.action_space == sekai.Dict(
        {
            "weights": sekai.Box(-np.inf, np.inf, shape=(3,)),
            "side": sekai.Discrete(3, start=-1),
            "order": sekai.Tuple([sekai.Box(-np.inf, np.inf, shape=()), sekai.MultiBinary(2)]),
        }
    )
    env.reset()
    flags = np.array([1, 0], np.int8)
    env.step({"weights": np.array([-1.0, 0.5, 2.0]), "side": -1, "order": (np.float32(25), flags)})
    sent = inner.actions[-1]
    assert sent in PORTFOLIO
    np.testing.assert_array_equal(sent["weights"], [0.0, 0.5, 1.0])
    assert sent["order"][0] == 10.0
    assert sent["side"] == -1  # non-Box parts are passed on unchanged
    np.testing.assert_array_equal(sent["order"][1], flags)


def test_rescale_action_rescales_every_box_part_of_a_nested_space():
    inner = _env(PORTFOLIO)
    env = RescaleAction(inner, -1.0, 1.0)
    assert env.action_space == sekai.Dict(
        {
            "weights": sekai.Box(-1.0, 1.0, shape=(3,)),
            "side": sekai.Discrete(3, start=-1),
            "order": sekai.Tuple([sekai.Box(-1.0, 1.0, shape=()), sekai.MultiBinary(2)]),
        }
    )
    env.reset()
    flags = np.array([0, 1], np.int8)
    weights = np.array([-1.0, 0.0, 1.0], np.float32)
    env.step({"weights": weights, "side": 1, "order": (np.float32(0.5), flags)})
    sent = inner.actions[-1]
    np.testing.assert_allclose(sent["weights"], [0.0, 0.5, 1.0])
    assert sent["order"][0] == 5.0
    assert sent["side"] == 1
    np.testing.assert_array_equal(sent["order"][1], flags)
    env.action_space.seed(0)
    for _ in range(20):  # every action of the declared space reaches the env inside its space
        env.step(env.action_space.sample())
        assert inner.actions[-1] in PORTFOLIO


def test_masked_box_parts_keep_their_mask_and_fill_empty_slots():
    orders = sekai.MaskedBox(-1.0, 1.0, shape=(2,), max_size=3, fill_value=0.5)
    space = sekai.Tuple([orders, sekai.Discrete(2)])
    mask = np.array([1, 0, 1], np.int8)
    values = np.array([[2.0, -0.5], [9.0, 9.0], [0.0, -3.0]], np.float32)

    clip_inner = _env(space)
    clip = ClipAction(clip_inner)
    assert clip.action_space[0] == sekai.MaskedBox(
        -np.inf, np.inf, shape=(2,), max_size=3, fill_value=0.5
    )
    clip.step(({"values": values, "mask": mask}, 1))
    sent = clip_inner.actions[-1]
    assert sent in space
    np.testing.assert_array_equal(sent[0]["values"], [[1.0, -0.5], [0.5, 0.5], [0.0, -1.0]])
    np.testing.assert_array_equal(sent[0]["mask"], mask)

    rescale_inner = _env(space)
    rescale = RescaleAction(rescale_inner, 0.0, 4.0)
    assert rescale.action_space[0] == sekai.MaskedBox(0.0, 4.0, shape=(2,), max_size=3)
    values = np.array([[0.0, 4.0], [0.0, 0.0], [2.0, 3.0]], np.float32)
    rescale.step(({"values": values, "mask": mask}, 0))
    sent = rescale_inner.actions[-1]
    assert sent in space
    np.testing.assert_array_equal(sent[0]["values"], [[-1.0, 1.0], [0.5, 0.5], [0.0, 0.5]])
    np.testing.assert_array_equal(sent[0]["mask"], mask)


def test_a_sequence_part_passes_through_unchanged():
    space = sekai.Dict({"weights": sekai.Box(0.0, 1.0, shape=(2,)), "fills": sekai.Sequence(OBS)})
    inner = _env(space)
    env = ClipAction(inner)
    assert env.action_space["fills"] == space["fills"]
    fills = (np.array([2.0], np.float32),)  # outside the Box, but Sequences are not entered
    env.step({"weights": np.array([2.0, 0.5], np.float32), "fills": fills})
    np.testing.assert_array_equal(inner.actions[-1]["weights"], [1.0, 0.5])
    np.testing.assert_array_equal(inner.actions[-1]["fills"][0], fills[0])


@pytest.mark.parametrize("wrapper", [ClipAction, lambda env: RescaleAction(env, -1.0, 1.0)])
@pytest.mark.parametrize(
    "space",
    [
        sekai.Discrete(2),
        sekai.Dict({"side": sekai.Discrete(2), "flags": sekai.Tuple([sekai.MultiBinary(2)])}),
        sekai.Sequence(sekai.Box(0.0, 1.0)),  # a Sequence's elements are not walked into
    ],
)
def test_action_wrappers_need_a_box_part(wrapper, space):
    with pytest.raises(TypeError, match=r"acts on Box parts.*" + re.escape(f"{space} has none")):
        wrapper(_env(space))


@pytest.mark.parametrize(
    ("part", "error", "match"),
    [
        (sekai.Box(0, 5, shape=(2,), dtype=np.int64), TypeError, "floating-point.*int64"),
        (sekai.Box(0.0, np.inf, shape=(2,)), ValueError, "finite action bounds.*inf"),
        (sekai.Box(0.0, 1.0, shape=(3,)), ValueError, r"broadcast to the shape \(3,\)"),
    ],
)
def test_rescale_action_checks_every_box_part(part, error, match):
    space = sekai.Dict({"ok": sekai.Box(0.0, 1.0, shape=(2,)), "bad": part})
    with pytest.raises(error, match=match):
        RescaleAction(_env(space), np.array([-1.0, -1.0]), np.array([1.0, 1.0]))


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
