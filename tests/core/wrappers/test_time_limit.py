"""TimeLimit truncates after n steps and reports elapsed_steps on every step."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from wrapper_envs import CountingEnv

import sekai
from sekai.wrappers import TimeLimit


def test_truncates_after_max_episode_steps_with_elapsed_steps_in_every_info():
    env = TimeLimit(CountingEnv(), 3)
    env.reset(seed=0)
    results = [env.step(1) for _ in range(3)]
    assert [r.truncated for r in results] == [False, False, True]
    assert [r.terminated for r in results] == [False, False, False]
    assert [r.info["elapsed_steps"] for r in results] == [1, 2, 3]
    assert all(type(r.info["elapsed_steps"]) is int for r in results)
    assert results[0].info["count"] == 1  # the inner info is kept
    assert env.elapsed_steps == 3 and env.max_episode_steps == 3


def test_reset_restarts_the_clock():
    env = TimeLimit(CountingEnv(), 2)
    env.reset()
    env.step(0)
    env.step(0)
    env.reset()
    assert env.elapsed_steps == 0
    result = env.step(0)
    assert result.info["elapsed_steps"] == 1 and not result.truncated


def test_termination_is_passed_through_and_not_turned_into_truncation():
    env = TimeLimit(CountingEnv(terminate_after=2), 5)
    env.reset()
    env.step(0)
    result = env.step(0)
    assert result.terminated and not result.truncated


def test_does_not_mutate_the_inner_info():
    inner = CountingEnv()
    env = TimeLimit(inner, 5)
    env.reset()
    info = {"shared": 1}
    inner.step = lambda action: inner.__class__.step(inner, action)._replace(info=info)
    env.step(0)
    assert info == {"shared": 1}


def test_async_step_counts_too():
    env = TimeLimit(CountingEnv(), 2)

    async def run():
        await env.async_reset()
        await env.async_step(0)
        return await env.async_step(0)

    assert asyncio.run(run()).truncated


@pytest.mark.parametrize("bad", [0, -1])
def test_rejects_non_positive_limits(bad):
    with pytest.raises(ValueError, match="max_episode_steps must be at least 1"):
        TimeLimit(CountingEnv(), bad)


@pytest.mark.parametrize("bad", [2.5, "3", True])
def test_rejects_non_int_limits(bad):
    with pytest.raises(TypeError, match="max_episode_steps must be an int"):
        TimeLimit(CountingEnv(), bad)


def test_numpy_integer_counts_are_accepted_as_ints():
    env = TimeLimit(CountingEnv(), np.int64(3))
    assert env.max_episode_steps == 3 and type(env.max_episode_steps) is int
    env.reset()
    assert [env.step(0).truncated for _ in range(3)] == [False, False, True]
    assert sekai.RepeatAction(CountingEnv(), np.int32(2)).num_repeats == 2
    assert sekai.FrameStackObservation(sekai.make("CartPole-v1"), np.int64(2)).stack_size == 2
    assert sekai.DelayObservation(sekai.make("CartPole-v1"), np.int64(0)).delay == 0
    spec = sekai.registration.EnvSpec(
        "test/Counting-v0", CountingEnv, max_episode_steps=np.int64(7)
    )
    assert repr(spec) == "EnvSpec(id='test/Counting-v0', max_episode_steps=7)"
