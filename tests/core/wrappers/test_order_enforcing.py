"""OrderEnforcing: the episode lifecycle rule that make() applies to every single-agent env."""

from __future__ import annotations

import asyncio
import warnings

import pytest
from wrapper_envs import CountingEnv

import sekai
from sekai.core import EnvClosed
from sekai.wrappers import OrderEnforcing, ResetNeeded, TimeLimit


def test_step_before_reset_raises_reset_needed():
    inner = CountingEnv()
    env = OrderEnforcing(inner)
    with pytest.raises(ResetNeeded, match=r"call reset\(\) before step\(\)"):
        env.step(0)
    assert inner.calls == []
    assert issubclass(ResetNeeded, RuntimeError)


def test_step_after_reset_works():
    env = OrderEnforcing(CountingEnv())
    assert not env.has_reset
    env.reset()
    assert env.has_reset
    assert env.step(0).observation.tolist() == [1.0]


def test_async_step_before_reset_raises():
    env = OrderEnforcing(CountingEnv())
    with pytest.raises(ResetNeeded):
        asyncio.run(env.async_step(0))


@pytest.mark.parametrize("call", ["step", "reset", "async_step"])
def test_every_call_after_close_raises_env_closed(call):
    inner = CountingEnv()
    env = OrderEnforcing(inner)
    env.reset()
    env.close()
    assert inner.closed and env.closed
    with pytest.raises(EnvClosed, match="This env has been closed"):
        if call == "async_step":
            asyncio.run(env.async_step(0))
        else:
            getattr(env, call)(*([0] if call == "step" else []))
    env.close()  # again: allowed
    assert issubclass(EnvClosed, RuntimeError)


@pytest.mark.needs("sekai-vector")
def test_the_vector_error_for_a_closed_env_is_an_env_closed():
    from sekai.vector import VecEnvClosed

    assert issubclass(VecEnvClosed, EnvClosed)


def test_stepping_after_termination_warns_once_per_episode():
    env = OrderEnforcing(CountingEnv(terminate_after=1))
    env.reset()
    assert env.step(0).terminated
    with pytest.warns(UserWarning, match=r"after the episode terminated; call reset\(\)"):
        env.step(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.step(0)  # once per episode
        env.reset()
        env.step(0)
    with pytest.warns(UserWarning, match="after the episode terminated"):
        env.step(0)


def test_stepping_after_truncation_warns_as_after_termination():
    env = OrderEnforcing(TimeLimit(CountingEnv(), max_episode_steps=1))
    env.reset()
    assert env.step(0).truncated
    with pytest.warns(UserWarning, match=r"after the episode was truncated; call reset\(\)"):
        env.step(0)


def test_make_applies_the_rule_to_every_single_agent_env():
    env = sekai.make("CartPole-v1", max_episode_steps=2)
    assert isinstance(env, OrderEnforcing) and isinstance(env.env, TimeLimit)
    with pytest.raises(ResetNeeded):
        env.step(0)
    env.reset(seed=0)
    env.step(0)
    assert env.step(0).truncated
    with pytest.warns(UserWarning) as caught:
        env.step(0)
    assert len(caught) == 1 and "truncated" in str(caught[0].message)
    env.close()
    with pytest.raises(EnvClosed):
        env.reset()
