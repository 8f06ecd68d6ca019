"""Wrapper base classes: read-through attributes, get/set_attr, hooks in sync and async."""

from __future__ import annotations

import asyncio
import copy
import pickle

import numpy as np
import pytest
from wrapper_envs import CountingEnv, SlowCountingEnv

import sekai
from sekai.wrappers import (
    ActionWrapper,
    ObservationWrapper,
    RewardWrapper,
    TimeLimit,
    Wrapper,
)


class Doubled(ObservationWrapper):
    def observation(self, observation):
        return observation * 2


class Negated(RewardWrapper):
    def reward(self, reward):
        return -reward


class PlusOne(ActionWrapper):
    def action(self, action):
        return action + 1


def test_wrapper_rejects_non_env():
    with pytest.raises(TypeError, match=r"needs a sekai\.Env.*got str"):
        Wrapper("CartPole-v1")


def test_wrapper_rejects_multi_agent_env():
    class TwoAgents(sekai.MultiAgentEnv):
        pass

    with pytest.raises(TypeError, match=r"single-agent.*TwoAgents"):
        Wrapper(TwoAgents())


def test_spaces_and_metadata_read_through_until_set():
    env = CountingEnv(observation_space="inner obs space")
    env.action_space = "inner act space"
    env.metadata = {"render_modes": ["ansi"]}
    env.render_mode = "ansi"
    wrapper = Wrapper(env)
    assert wrapper.observation_space == "inner obs space"
    assert wrapper.action_space == "inner act space"
    assert wrapper.metadata == {"render_modes": ["ansi"]}
    assert wrapper.render_mode == "ansi"
    assert wrapper.spec is None
    wrapper.observation_space = "outer obs space"
    assert wrapper.observation_space == "outer obs space"
    assert env.observation_space == "inner obs space"
    env.action_space = "changed inner"
    assert wrapper.action_space == "changed inner"


def test_unwrapped_and_repr():
    env = CountingEnv()
    wrapped = TimeLimit(Wrapper(env), 5)
    assert wrapped.unwrapped is env
    assert repr(wrapped) == "TimeLimit(Wrapper(<CountingEnv>))"


def test_public_attributes_forward_private_do_not():
    env = CountingEnv(terminate_after=7)
    env._secret = 1
    wrapper = Wrapper(Wrapper(env))
    assert wrapper.terminate_after == 7
    with pytest.raises(AttributeError, match="_secret"):
        _ = wrapper._secret
    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = wrapper.no_such_thing


def test_get_attr_looks_down_the_stack():
    env = CountingEnv(terminate_after=7)
    wrapped = Wrapper(TimeLimit(env, 3))
    assert wrapped.get_attr("max_episode_steps") == 3
    assert wrapped.get_attr("terminate_after") == 7
    with pytest.raises(AttributeError):
        wrapped.get_attr("no_such_thing")


def test_set_attr_sets_on_the_layer_that_has_it():
    env = CountingEnv(terminate_after=7)
    limit = TimeLimit(env, 3)
    wrapped = Wrapper(limit)
    wrapped.set_attr("max_episode_steps", 10)
    assert limit.max_episode_steps == 10
    assert "max_episode_steps" not in vars(wrapped)
    wrapped.set_attr("terminate_after", 2)
    assert env.terminate_after == 2
    assert "terminate_after" not in vars(limit)
    wrapped.set_attr("brand_new", 5)
    assert env.brand_new == 5
    assert "brand_new" not in vars(limit) and "brand_new" not in vars(wrapped)


def test_close_closes_inner_env_and_context_manager():
    env = CountingEnv()
    with Wrapper(Wrapper(env)):
        pass
    assert env.closed


def test_rng_is_the_inner_envs():
    env = CountingEnv()
    wrapper = Wrapper(env)
    wrapper.reset(seed=3)
    assert wrapper.rng is env.rng
    assert wrapper.rng.integers(1000) == np.random.default_rng(3).integers(1000)


def test_observation_reward_action_hooks():
    env = CountingEnv()
    wrapped = PlusOne(Negated(Doubled(env)))
    obs, info = wrapped.reset(seed=0)
    assert obs.tolist() == [0.0] and info == {"start": True}
    result = wrapped.step(2)
    assert env.calls[-1] == ("step", 3)
    assert result.observation.tolist() == [2.0]
    assert result.reward == -3.0
    assert isinstance(result, sekai.StepResult)


def test_async_methods_run_the_same_hooks():
    env = CountingEnv()
    wrapped = PlusOne(Negated(Doubled(env)))

    async def run():
        await wrapped.async_reset(seed=0)
        await wrapped.async_step(1)
        return await wrapped.async_step(1)

    result = asyncio.run(run())
    assert env.calls == [("reset", 0), ("step", 2), ("step", 2)]
    assert result.observation.tolist() == [4.0] and result.reward == -2.0


def test_a_wrapper_that_overrides_step_and_reset_keeps_them_under_async():
    """Written gymnasium-style (overriding step/reset, not the hooks), a wrapper must not be
    skipped by async_step/async_reset (as AsyncVecEnv calls them): Env's async methods default
    to the sync ones."""

    class ClockedStep(sekai.Wrapper):
        def reset(self, *, seed=None, options=None):
            observation, info = self.env.reset(seed=seed, options=options)
            return sekai.ResetResult(observation, {**info, "clocked": True})

        def step(self, action):
            result = self.env.step(action * 10)
            return result._replace(info={**result.info, "clocked": True})

    env = CountingEnv()
    wrapped = ClockedStep(env)

    async def run():
        reset = await wrapped.async_reset(seed=0)
        return reset, await wrapped.async_step(1)

    reset, step = asyncio.run(run())
    assert reset.info["clocked"] and step.info["clocked"]
    assert env.calls == [("reset", 0), ("step", 10)]


def test_a_subclass_of_a_wrapper_with_its_own_async_step_keeps_its_step_override():
    """AutoReset defines async_step itself; a subclass overriding only step must still be used."""

    class TenfoldAutoReset(sekai.AutoReset):
        def step(self, action):
            return super().step(action * 10)

    env = CountingEnv()
    wrapped = TenfoldAutoReset(env)

    async def run():
        await wrapped.async_reset(seed=0)
        return await wrapped.async_step(1)

    asyncio.run(run())
    assert env.calls == [("reset", 0), ("step", 10)]


def test_async_stays_concurrent_through_wrappers():
    log: list[str] = []
    envs = [PlusOne(Doubled(TimeLimit(SlowCountingEnv(name, log), 5))) for name in ("a", "b")]

    async def run():
        await asyncio.gather(*(env.async_reset(seed=0) for env in envs))
        return await asyncio.gather(*(env.async_step(0) for env in envs))

    results = asyncio.run(run())
    assert log == [
        "a reset start",
        "b reset start",
        "a reset end",
        "b reset end",
        "a step start",
        "b step start",
        "a step end",
        "b step end",
    ]
    assert [r.info["elapsed_steps"] for r in results] == [1, 1]


def test_wrapped_envs_pickle_and_deepcopy_with_their_state():
    env = TimeLimit(Doubled(CountingEnv()), 5)
    env.reset()
    env.step(1)
    for clone in (pickle.loads(pickle.dumps(env)), copy.deepcopy(env)):
        result = clone.step(1)
        assert result.observation.tolist() == [4.0] and result.info["elapsed_steps"] == 2
    assert env.elapsed_steps == 1


def test_order_enforcing_keeps_async_steps_concurrent():
    """make() wraps every env in OrderEnforcing; its fast sync step must not turn its async
    step into a call of the inner env's sync step."""
    from sekai.wrappers import OrderEnforcing

    log = []
    envs = [OrderEnforcing(TimeLimit(SlowCountingEnv(name, log), 5)) for name in ("a", "b")]

    async def run():
        await asyncio.gather(*(env.async_reset(seed=0) for env in envs))
        log.clear()
        return await asyncio.gather(*(env.async_step(0) for env in envs))

    asyncio.run(run())
    assert log == ["a step start", "b step start", "a step end", "b step end"]


@pytest.mark.parametrize("hook", ["before_step", "after_step"])
def test_a_subclass_of_a_fast_wrapper_keeps_its_step_hooks(hook):
    """TimeLimit and OrderEnforcing write their hooks inline in step(); a subclass overriding a
    step hook must still have it called, sync and async."""
    from sekai.wrappers import OrderEnforcing

    calls = []

    def before_step(self, action):
        calls.append("before")
        return super(type(self), self).before_step(action)

    def after_step(self, result):
        calls.append("after")
        return super(type(self), self).after_step(result)

    for base in (TimeLimit, OrderEnforcing):
        calls.clear()
        hooked = type(
            "Hooked", (base,), {hook: before_step if hook == "before_step" else after_step}
        )
        env = hooked(CountingEnv(), 5) if base is TimeLimit else hooked(CountingEnv())
        env.reset()
        result = env.step(0)
        asyncio.run(env.async_step(0))
        assert calls == [hook.split("_")[0]] * 2
        if base is TimeLimit:
            assert result.info["elapsed_steps"] == 1
