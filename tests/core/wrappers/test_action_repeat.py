"""StickyAction and RepeatAction."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from wrapper_envs import CountingEnv

from sekai.wrappers import RepeatAction, StickyAction


def _sent_actions(probability, seed, actions):
    inner = CountingEnv()
    env = StickyAction(inner, probability)
    env.reset(seed=seed)
    for action in actions:
        env.step(action)
    return [action for call, action in inner.calls if call == "step"]


def test_sticky_action_repeats_the_previous_action_at_the_given_rate():
    sent = _sent_actions(0.25, 0, range(1, 4001))
    assert sent[0] == 1  # nothing to repeat on the first step
    repeated = sum(now == before for before, now in itertools.pairwise(sent))
    assert repeated / 3999 == pytest.approx(0.25, abs=0.03)
    steps = range(2, 4001)
    assert all(
        now in (before, step)
        for step, (before, now) in zip(steps, itertools.pairwise(sent), strict=True)
    )


def test_sticky_action_zero_probability_changes_nothing():
    assert _sent_actions(0.0, 0, [1, 2, 3]) == [1, 2, 3]


def test_sticky_action_is_reproducible_from_the_reset_seed():
    assert _sent_actions(0.5, 7, range(50)) == _sent_actions(0.5, 7, range(50))
    assert _sent_actions(0.5, 7, range(50)) != _sent_actions(0.5, 8, range(50))


def test_sticky_action_leaves_the_envs_random_stream_alone():
    inner = CountingEnv()
    env = StickyAction(inner, 0.5)
    env.reset(seed=3)
    for action in range(10):
        env.step(action)
    reference = CountingEnv()
    reference.reset(seed=3)
    assert inner.rng.random() == reference.rng.random()


def test_sticky_action_forgets_the_last_action_on_reset():
    inner = CountingEnv()
    env = StickyAction(inner, 0.99)
    env.reset(seed=0)
    env.step(1)
    env.reset()
    env.step(2)
    assert inner.calls[-1] == ("step", 2)


@pytest.mark.parametrize("probability", [-0.1, 1.0])
def test_sticky_action_probability_is_validated(probability):
    with pytest.raises(ValueError, match=r"repeat_action_probability must be in \[0, 1\)"):
        StickyAction(CountingEnv(), probability)


def test_repeat_action_sums_rewards_and_returns_the_last_step():
    inner = CountingEnv()
    env = RepeatAction(inner, 3)
    env.reset()
    result = env.step(2.0)
    assert result.reward == 6.0
    assert result.observation.tolist() == [3.0] and result.info == {"count": 3}
    assert inner.calls[1:] == [("step", 2.0)] * 3


def test_repeat_action_stops_when_the_episode_ends():
    inner = CountingEnv(terminate_after=2)
    env = RepeatAction(inner, 5)
    env.reset()
    result = env.step(1.0)
    assert result.terminated and result.reward == 2.0
    assert len(inner.calls) == 3


def test_repeat_action_async_uses_async_step():
    class AsyncOnly(CountingEnv):
        def step(self, action):
            raise AssertionError("the blocking step must not be used")

        async def async_step(self, action):
            return CountingEnv.step(self, action)

    env = RepeatAction(AsyncOnly(), 2)

    async def run():
        await env.async_reset()
        return await env.async_step(1.0)

    assert asyncio.run(run()).reward == 2.0


def test_repeat_action_count_is_validated():
    with pytest.raises(ValueError, match="num_repeats must be an int of at least 1"):
        RepeatAction(CountingEnv(), 0)
