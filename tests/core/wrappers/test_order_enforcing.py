"""OrderEnforcing refuses step() before the first reset()."""

from __future__ import annotations

import asyncio

import pytest
from wrapper_envs import CountingEnv

from sekai.wrappers import OrderEnforcing, ResetNeeded


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
