"""to_pettingzoo / from_pettingzoo, proven by PettingZoo's parallel API test."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

import sekai
from sekai.compat import from_pettingzoo, to_pettingzoo


class QuoteAndTradeEnv(sekai.MultiAgentEnv[np.ndarray, object, str]):
    """The spec's two-agent market: a maker quotes a half-spread, a trader buys, sells or passes."""

    def __init__(self, n_steps: int = 50) -> None:
        self.n_steps = n_steps
        self.possible_agents = ["maker", "trader"]
        self.agents = list(self.possible_agents)
        self.observation_spaces = {
            "maker": sekai.Box(-np.inf, np.inf, shape=(2,)),
            "trader": sekai.Box(-np.inf, np.inf, shape=(3,)),
        }
        self.action_spaces = {
            "maker": sekai.Box(0.01, 1.0, shape=(1,)),
            "trader": sekai.Discrete(3, start=-1),
        }

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        self.agents = list(self.possible_agents)
        self.mid, self.inventory, self.t = 100.0, 0, 0
        return sekai.MAResetResult(self._obs(0.1), {a: {} for a in self.agents})

    def step(self, actions):
        half, side = float(actions["maker"][0]), int(actions["trader"])
        next_mid = self.mid + self.rng.normal(0.0, 0.3)
        trader_pnl = side * (next_mid - self.mid) - abs(side) * half
        self.inventory -= side
        maker_pnl = abs(side) * half + self.inventory * (next_mid - self.mid)
        self.mid, self.t = next_mid, self.t + 1
        done = self.t >= self.n_steps
        result = sekai.MAStepResult(
            self._obs(half),
            {"maker": maker_pnl, "trader": trader_pnl},
            {a: done for a in self.agents},
            {a: False for a in self.agents},
            {a: {} for a in self.agents},
        )
        if done:
            self.agents = []
        return result

    def _obs(self, half):
        return {
            "maker": np.array([self.mid, self.inventory], np.float32),
            "trader": np.array([self.mid, self.mid - half, self.mid + half], np.float32),
        }


class TwoClockEnv(sekai.MultiAgentEnv[np.ndarray, Any, str]):
    """Event-driven: "fast" decides every step, "slow" every second step; 6 steps in all.

    Observations go to the agents that act next, rewards and flags to every agent.
    """

    def __init__(self) -> None:
        self.possible_agents = ["fast", "slow"]
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: sekai.Box(0.0, 10.0, shape=(1,)) for a in self.agents}
        self.action_spaces = {a: sekai.Discrete(2) for a in self.agents}

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        self.agents, self.t = list(self.possible_agents), 0
        return sekai.MAResetResult(self._obs(self.agents), {a: {} for a in self.agents})

    def step(self, actions):
        self.t += 1
        done = self.t >= 6
        acting = list(self.possible_agents) if done or self.t % 2 == 0 else ["fast"]
        result = sekai.MAStepResult(
            self._obs(acting),
            {a: float(actions.get(a, 0)) for a in self.agents},
            {a: done for a in self.agents},
            {a: False for a in self.agents},
            {a: {"timestamp": self.t} for a in self.agents},
        )
        if done:
            self.agents = []
        return result

    def _obs(self, agents):
        return {a: np.array([self.t], np.float32) for a in agents}


def _registered_multi_agent_envs() -> list[sekai.MultiAgentEnv]:
    envs = [sekai.make(env_id) for env_id in sorted(sekai.registry)]
    return [env for env in envs if isinstance(env, sekai.MultiAgentEnv)]


def test_parallel_api_test_passes_on_every_multi_agent_env():
    for env in [QuoteAndTradeEnv(), TwoClockEnv(), *_registered_multi_agent_envs()]:
        parallel_api_test(to_pettingzoo(env), num_cycles=100)


def test_parallel_api_test_passes_on_a_bridged_env_brought_back_and_out_again():
    parallel_api_test(to_pettingzoo(from_pettingzoo(to_pettingzoo(QuoteAndTradeEnv()))), 100)


def test_spaces_are_converted_once_and_are_the_same_object_on_every_call():
    pz_env = to_pettingzoo(QuoteAndTradeEnv())
    assert pz_env.action_space("trader") is pz_env.action_space("trader")
    assert pz_env.observation_space("maker") is pz_env.observation_spaces["maker"]
    env = from_pettingzoo(pz_env)
    assert env.action_space("maker") is env.action_space("maker")
    assert repr(env.action_space("trader")) == "Discrete(3, start=-1)"


def test_seeds_go_straight_to_the_wrapped_env():
    first, second = to_pettingzoo(QuoteAndTradeEnv()), QuoteAndTradeEnv()
    first.reset(seed=7)
    second.reset(seed=7)
    actions = {"maker": np.array([0.1], np.float32), "trader": 1}
    assert first.step(actions)[1] == second.step(actions).rewards
    first.reset(seed=7)
    env = from_pettingzoo(to_pettingzoo(QuoteAndTradeEnv()))
    env.reset(seed=7)
    assert env.step(actions).rewards == first.step(actions)[1]  # the second step of seed 7


def test_an_event_driven_env_keeps_its_convention_through_both_bridges():
    for env in [to_pettingzoo(TwoClockEnv()), from_pettingzoo(to_pettingzoo(TwoClockEnv()))]:
        env.reset(seed=0)
        observations, rewards, terminated, *_ = env.step({"fast": 1, "slow": 1})
        assert (sorted(observations), sorted(rewards), sorted(terminated)) == (
            ["fast"],
            ["fast", "slow"],
            ["fast", "slow"],
        )
        observations, rewards, *_ = env.step({"fast": 1, "slow": 1})  # slow's action is dropped
        assert sorted(observations) == ["fast", "slow"] and rewards == {"fast": 1.0, "slow": 0.0}


def test_a_waiting_agent_is_not_among_the_observations_but_its_latest_can_be_looked_up():
    env = to_pettingzoo(TwoClockEnv())
    first, _ = env.reset(seed=0)
    observations, *_ = env.step({"fast": 0, "slow": 0})
    assert "slow" not in observations and list(observations) == ["fast"]
    np.testing.assert_array_equal(observations["slow"], first["slow"])
    with pytest.raises(KeyError):
        observations["nobody"]


def test_from_pettingzoo_results_are_sekai_results():
    env = from_pettingzoo(to_pettingzoo(QuoteAndTradeEnv(n_steps=2)))
    result = env.reset(seed=0)
    assert isinstance(result, sekai.MAResetResult) and env.agents == ["maker", "trader"]
    actions = {"maker": np.array([0.5], np.float32), "trader": 0}
    assert not env.step(actions).all_done
    result = env.step(actions)
    assert isinstance(result, sekai.MAStepResult) and result.all_done and env.agents == []


def test_only_envs_of_the_other_api_are_accepted():
    env = sekai.make("CartPole-v1")
    with pytest.raises(
        TypeError, match=rf"to_pettingzoo needs a sekai\.MultiAgentEnv, got {type(env).__name__}$"
    ):
        to_pettingzoo(env)
    with pytest.raises(TypeError, match="from_pettingzoo needs a PettingZoo ParallelEnv"):
        from_pettingzoo(QuoteAndTradeEnv())


class MaskedClockEnv(TwoClockEnv):
    """TwoClockEnv whose agents may only choose 1, as ``action_mask(agent)`` says."""

    def action_mask(self, agent):
        return np.array([0, 1], np.int8)

    def step(self, actions):
        if any(action != 1 for action in actions.values()):
            raise ValueError(f"masked action in {actions}")
        return super().step(actions)


def test_sampling_an_action_space_draws_legal_actions_in_an_env_with_masks():
    env = to_pettingzoo(MaskedClockEnv())
    assert {int(env.action_space("slow").sample()) for _ in range(20)} == {1}
    assert int(env.action_space("slow").sample(mask=np.array([1, 0], np.int8))) == 0
    assert env.action_space("fast") == gymnasium.spaces.Discrete(2)
    parallel_api_test(env, num_cycles=100)
