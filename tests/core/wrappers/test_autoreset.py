"""AutoReset: same-step autoreset with final_observation / final_info / reset_info."""

from __future__ import annotations

import asyncio

from wrapper_envs import CountingEnv

from sekai.wrappers import AutoReset, TimeLimit


def test_episode_end_resets_in_the_same_step():
    inner = CountingEnv(terminate_after=2)
    env = AutoReset(inner)
    env.reset(seed=0)
    first = env.step(5)
    assert first.observation.tolist() == [1.0] and "final_observation" not in first.info
    last = env.step(7)
    assert last.terminated and not last.truncated and last.reward == 7.0
    assert last.observation.tolist() == [0.0]  # the new episode's first observation
    assert last.info["final_observation"].tolist() == [2.0]
    assert last.info["final_info"] == {"count": 2}
    assert last.info["reset_info"] == {"start": True}
    assert last.info["count"] == 2
    assert inner.calls == [("reset", 0), ("step", 5), ("step", 7), ("reset", None)]
    assert env.step(1).observation.tolist() == [1.0]  # the next episode carries on


def test_info_keys_under_a_time_limit():
    env = AutoReset(TimeLimit(CountingEnv(), 2))
    env.reset()
    env.step(0)
    result = env.step(0)
    assert result.truncated
    assert sorted(result.info) == [
        "count",
        "elapsed_steps",
        "final_info",
        "final_observation",
        "reset_info",
    ]
    assert env.step(0).info["elapsed_steps"] == 1


def test_async_step_resets_through_async_reset():
    class AsyncOnly(CountingEnv):
        def reset(self, *, seed=None, options=None):
            raise AssertionError("the blocking reset must not be used")

        async def async_reset(self, *, seed=None, options=None):
            return CountingEnv.reset(self, seed=seed, options=options)

    inner = AsyncOnly(terminate_after=1)
    env = AutoReset(inner)

    async def run():
        await env.async_reset(seed=1)
        return await env.async_step(3)

    result = asyncio.run(run())
    assert result.info["final_observation"].tolist() == [1.0]
    assert result.observation.tolist() == [0.0]
    assert inner.calls == [("reset", 1), ("step", 3), ("reset", None)]
