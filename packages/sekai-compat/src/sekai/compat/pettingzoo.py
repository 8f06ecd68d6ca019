"""Multi-agent envs across the two APIs: ``to_pettingzoo`` and ``from_pettingzoo``.

Spaces are converted once, when the bridge is built, so an agent's space is the same object on
every call (PettingZoo's API test requires it, and seeding an action space relies on it).

An event-driven env keeps its convention through ``to_pettingzoo``: the observations dict
holds the agents that act next, rewards and flags hold every agent. PettingZoo's own loops send an
action for every live agent and look up every live agent's observation, so the bridge forwards
only the actions of the agents that act next, and looking up an agent that is not in the dict
gives its latest observation (it is still not among the keys). In an env with action masks,
sampling an agent's action space without a mask draws an action the env allows now.
"""

from __future__ import annotations

import functools
from typing import Any

import pettingzoo

from sekai.compat.spaces import from_gymnasium_space, mix_into, to_gymnasium_space
from sekai.multi_agent import MAResetResult, MAStepResult, MultiAgentEnv

__all__ = ["from_pettingzoo", "to_pettingzoo"]


def to_pettingzoo(env: MultiAgentEnv[Any, Any, Any]) -> pettingzoo.ParallelEnv[Any, Any, Any]:
    """A PettingZoo ``ParallelEnv`` driving the sekai multi-agent ``env``."""
    if not isinstance(env, MultiAgentEnv):
        raise TypeError(f"to_pettingzoo needs a sekai.MultiAgentEnv, got {type(env).__name__}")
    return _ParallelEnv(env)


def from_pettingzoo(
    env: pettingzoo.ParallelEnv[Any, Any, Any],
) -> MultiAgentEnv[Any, Any, Any]:
    """A ``sekai.MultiAgentEnv`` driving the PettingZoo ``env``; seeds go to it."""
    if not isinstance(env, pettingzoo.ParallelEnv):
        raise TypeError(f"from_pettingzoo needs a PettingZoo ParallelEnv, got {type(env).__name__}")
    return _MultiAgentEnv(env)


class _ParallelEnv(pettingzoo.ParallelEnv[Any, Any, Any]):
    """A sekai multi-agent env seen through PettingZoo's parallel API."""

    def __init__(self, env: MultiAgentEnv[Any, Any, Any]) -> None:
        self.env = env
        self.metadata = dict(env.metadata)
        self.render_mode = env.render_mode
        self.possible_agents = list(env.possible_agents)
        self._acting: set[Any] = set()
        self._latest: dict[Any, Any] = {}
        self.observation_spaces = {
            agent: to_gymnasium_space(env.observation_space(agent)) for agent in env.possible_agents
        }
        self.action_spaces = {
            agent: _legal_sampling(to_gymnasium_space(env.action_space(agent)), env, agent)
            for agent in env.possible_agents
        }

    @property
    def agents(self) -> list[Any]:  # type: ignore[override]
        return list(self.env.agents)

    def observation_space(self, agent: Any) -> Any:
        return self.observation_spaces[agent]

    def action_space(self, agent: Any) -> Any:
        return self.action_spaces[agent]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[Any, Any], dict[Any, dict[str, Any]]]:
        observations, infos = self.env.reset(seed=seed, options=options)
        self._latest = {}
        return self._observations(observations), dict(infos)

    def step(self, actions: dict[Any, Any]) -> tuple[dict[Any, Any], ...]:
        waiting = set(self.env.agents) - self._acting  # live, but it is not their turn
        acting = {agent: action for agent, action in actions.items() if agent not in waiting}
        observations, rewards, terminated, truncated, infos = self.env.step(acting)
        observations = self._observations(observations)
        return observations, dict(rewards), dict(terminated), dict(truncated), dict(infos)

    def _observations(self, observations: dict[Any, Any]) -> _Observations:
        self._acting = set(observations)
        self._latest = {**self._latest, **observations}
        return _Observations(observations, self._latest)

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def __str__(self) -> str:
        return f"to_pettingzoo({self.env!r})"


class _LegalSampling:
    """Mixed into an agent's gymnasium action space: ``sample()`` without a mask draws an action
    the env allows now, by its ``action_mask(agent)``."""

    current_mask: functools.partial[Any]

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        if mask is None and probability is None:
            mask = self.current_mask()
        return super().sample(mask=mask, probability=probability)  # type: ignore[misc]


def _legal_sampling(space: Any, env: MultiAgentEnv[Any, Any, Any], agent: Any) -> Any:
    """``space``, sampling by ``env.action_mask(agent)`` when the env has action masks.

    PettingZoo's tools (its API test, random policies) sample ``action_space(agent)`` without a
    mask; in an env with action masks that would draw actions the env refuses.
    """
    action_mask = getattr(env, "action_mask", None)
    if not callable(action_mask):
        return space
    legal = mix_into(space, _LegalSampling)
    legal.current_mask = functools.partial(action_mask, agent)
    return legal


class _Observations(dict[Any, Any]):
    """The agents that act next and their observations; any other agent's latest on lookup."""

    def __init__(self, observations: dict[Any, Any], latest: dict[Any, Any]) -> None:
        super().__init__(observations)
        self._latest = latest

    def __missing__(self, agent: Any) -> Any:
        return self._latest[agent]


class _MultiAgentEnv(MultiAgentEnv[Any, Any, Any]):
    """A PettingZoo parallel env seen through sekai's multi-agent API."""

    def __init__(self, env: pettingzoo.ParallelEnv[Any, Any, Any]) -> None:
        self.env = env
        self.metadata = dict(env.metadata)  # type: ignore[misc]
        self.render_mode = getattr(env, "render_mode", None)
        self.possible_agents = list(env.possible_agents)
        self.observation_spaces = {
            agent: from_gymnasium_space(env.observation_space(agent))
            for agent in env.possible_agents
        }
        self.action_spaces = {
            agent: from_gymnasium_space(env.action_space(agent)) for agent in env.possible_agents
        }

    @property  # type: ignore[override]
    def agents(self) -> list[Any]:  # type: ignore[override]
        return list(self.env.agents)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> MAResetResult:
        observations, infos = self.env.reset(seed=seed, options=options)
        return MAResetResult(observations, infos)

    def step(self, actions: dict[Any, Any]) -> MAStepResult:
        observations, rewards, terminated, truncated, infos = self.env.step(actions)
        return MAStepResult(observations, rewards, terminated, truncated, infos)

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def __repr__(self) -> str:
        return f"<from_pettingzoo({self.env}) agents={self.agents!r}>"
