"""MultiAgentEnv and its results: agents, spaces, done rules, seeding, async, close and repr."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.multi_agent import MAResetResult, MAStepResult, MultiAgentEnv


class CoinFlipEnv(sekai.MultiAgentEnv[int, int, str]):
    """Each agent guesses a coin flip; an agent leaves after ``rounds[agent]`` guesses."""

    def __init__(self, rounds: dict[str, int] | None = None) -> None:
        self.rounds = rounds or {"alice": 2, "bob": 3}
        self.possible_agents = list(self.rounds)
        self.agents = list(self.possible_agents)
        self.observation_spaces = {agent: sekai.Discrete(2) for agent in self.possible_agents}
        self.action_spaces = {agent: sekai.Discrete(2, start=10) for agent in self.possible_agents}
        self.closed = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._set_rng(seed)
        self.agents = list(self.possible_agents)
        self.t = 0
        self.coin = int(self.rng.integers(2))
        return MAResetResult({a: 0 for a in self.agents}, {a: {} for a in self.agents})

    def step(self, actions):
        self.t += 1
        coin, self.coin = self.coin, int(self.rng.integers(2))
        finished = {a: self.t >= self.rounds[a] for a in self.agents}
        result = MAStepResult(
            observations={a: coin for a in self.agents},
            rewards={a: float(actions[a] - 10 == coin) for a in self.agents},
            terminated=finished,
            truncated={a: False for a in self.agents},
            info={a: {"coin": coin} for a in self.agents},
        )
        self.agents = [a for a in self.agents if not finished[a]]
        return result

    def close(self) -> None:
        self.closed += 1


@pytest.mark.parametrize(
    ("terminated", "truncated", "all_done", "any_done"),
    [
        ({}, {}, False, False),
        ({"a": False, "b": False}, {"a": False, "b": False}, False, False),
        ({"a": True, "b": False}, {"a": False, "b": False}, False, True),
        ({"a": True, "b": False}, {"a": False, "b": True}, True, True),  # one of each
        ({"a": True, "b": True}, {}, True, True),  # missing from truncated counts False
        ({"a": True}, {"b": False}, False, True),  # b is in neither done
        ({}, {"a": True}, True, True),
        ({"a": np.bool_(True)}, {"a": np.bool_(False)}, True, True),
    ],
)
def test_step_result_done_rules(
    terminated: dict[str, Any], truncated: dict[str, Any], all_done: bool, any_done: bool
) -> None:
    result = MAStepResult({}, {}, terminated, truncated, {})
    assert result.all_done is all_done
    assert result.any_done is any_done


def test_results_are_named_tuples_that_unpack() -> None:
    reset = MAResetResult({"a": 1}, {"a": {}})
    observations, info = reset
    assert (observations, info) == ({"a": 1}, {"a": {}})
    assert reset.all_done is False and reset.any_done is False
    step = MAStepResult({"a": 1}, {"a": 0.5}, {"a": True}, {"a": False}, {"a": {}})
    assert step._fields == ("observations", "rewards", "terminated", "truncated", "info")
    assert tuple(step) == ({"a": 1}, {"a": 0.5}, {"a": True}, {"a": False}, {"a": {}})
    assert sekai.MAStepResult is MAStepResult and sekai.MAResetResult is MAResetResult


def test_agents_leave_and_the_episode_ends_when_every_reported_agent_is_done() -> None:
    env = CoinFlipEnv()
    assert (env.num_agents, env.max_num_agents) == (2, 2)
    result = env.reset(seed=0)
    steps = 0
    while not result.all_done:
        result = env.step({agent: 10 for agent in env.agents})
        steps += 1
        if steps == 2:  # alice leaves, reporting her last transition
            assert result.any_done and not result.all_done
            assert sorted(result.rewards) == ["alice", "bob"]
            assert env.agents == ["bob"] and env.num_agents == 1
    assert steps == 3 and result.terminated == {"bob": True}
    assert env.agents == [] and env.num_agents == 0 and env.max_num_agents == 2


def test_space_lookups_by_agent() -> None:
    env = CoinFlipEnv()
    assert env.observation_space("alice") is env.observation_spaces["alice"]
    assert env.action_space("bob") is env.action_spaces["bob"]
    with pytest.raises(KeyError, match=r"no action space for agent 'carol'.*'alice', 'bob'"):
        env.action_space("carol")
    with pytest.raises(KeyError, match="no observation space for agent 'carol'"):
        env.observation_space("carol")


def test_seeding_follows_the_env_contract() -> None:
    def coins(env: MultiAgentEnv[Any, Any, Any], seed: int | None) -> list[int]:
        result = env.reset(seed=seed)
        flips = []
        while not result.all_done:
            result = env.step({agent: 10 for agent in env.agents})
            flips.append(next(iter(result.info.values()))["coin"])
        return flips

    env = CoinFlipEnv({"alice": 30})
    first = coins(env, seed=5)
    continued = coins(env, seed=None)
    assert coins(env, seed=5) == first  # an int re-seeds
    assert coins(env, seed=None) == continued  # None continues the stream
    assert continued != first
    single = sekai.Env()
    single._set_rng(5)
    multi = CoinFlipEnv()
    multi._set_rng(5)
    assert single.rng.random() == multi.rng.random()  # the same generator for the same seed


@pytest.mark.parametrize(
    ("seed", "error", "problem"),
    [
        (True, TypeError, "seed must be an int or None, got bool True"),
        (1.5, TypeError, "got float 1.5"),
        ("3", TypeError, "got str '3'"),
        ([1, 2], TypeError, "got list"),
        (-1, ValueError, "seed must be a non-negative int, got -1"),
    ],
)
def test_a_seed_that_is_not_a_non_negative_int_is_refused(seed, error, problem) -> None:
    for env in (sekai.Env(), CoinFlipEnv()):  # one contract for single- and multi-agent envs
        with pytest.raises(error, match=problem):
            env._set_rng(seed)
    env = sekai.make("CartPole-v1")
    with pytest.raises(error, match=problem):
        env.reset(seed=seed)
    env._set_rng(np.int64(3))  # NumPy integers are ints
    np.testing.assert_array_equal(env.reset(seed=np.uint8(3)).observation, env.reset(seed=3)[0])


def test_rng_exists_before_any_seeding() -> None:
    assert isinstance(CoinFlipEnv().rng, np.random.Generator)


def test_async_methods_default_to_the_sync_ones() -> None:
    async def run() -> tuple[MAResetResult, MAStepResult]:
        env = CoinFlipEnv()
        reset = await env.async_reset(seed=3)
        return reset, await env.async_step({"alice": 11, "bob": 10})

    env = CoinFlipEnv()
    expected_reset = env.reset(seed=3)
    expected_step = env.step({"alice": 11, "bob": 10})
    assert asyncio.run(run()) == (expected_reset, expected_step)


def test_context_manager_closes_and_close_is_repeatable() -> None:
    with CoinFlipEnv() as env:
        env.reset(seed=0)
    assert env.closed == 1
    env.close()
    base = sekai.MultiAgentEnv()
    base.close()
    base.close()


def test_abstract_methods_raise_not_implemented() -> None:
    env = sekai.MultiAgentEnv()
    with pytest.raises(NotImplementedError):
        env.reset(seed=0)
    with pytest.raises(NotImplementedError):
        env.step({})


def test_repr_lists_the_active_agents_and_the_registered_id() -> None:
    env = CoinFlipEnv({"maker": 1, "trader": 1})
    assert repr(env) == "<CoinFlipEnv agents=['maker', 'trader']>"
    env.reset(seed=0)
    env.step({"maker": 10, "trader": 10})
    assert repr(env) == "<CoinFlipEnv agents=[]>"
    assert repr(sekai.MultiAgentEnv()) == "<MultiAgentEnv agents=[]>"  # agents not set yet


def test_make_builds_a_multi_agent_env_and_sets_its_spec() -> None:
    env = sekai.make(sekai.EnvSpec("test/CoinFlip-v0", CoinFlipEnv), rounds={"solo": 1})
    assert type(env) is CoinFlipEnv and env.unwrapped is env
    assert env.spec.id == "test/CoinFlip-v0"
    assert repr(env) == "<CoinFlipEnv<test/CoinFlip-v0> agents=['solo']>"
