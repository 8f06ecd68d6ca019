"""Multi-agent envs across the two APIs: :func:`to_pettingzoo` and :func:`from_pettingzoo`.

Spaces are converted once, when the bridge is built, so an agent's space is the same object on
every call (PettingZoo's API test requires it, and seeding an action space relies on it). An
event-driven env keeps its convention through the bridge: observations for the agents that act
next, rewards and flags for every agent.
"""

from __future__ import annotations

from typing import Any

import pettingzoo

import sekai
from sekai.compat.spaces import from_gymnasium_space, to_gymnasium_space

__all__ = ["from_pettingzoo", "to_pettingzoo"]


def to_pettingzoo(env: sekai.MultiAgentEnv[Any, Any, Any]) -> pettingzoo.ParallelEnv[Any, Any, Any]:
    """A PettingZoo ``ParallelEnv`` driving the sekai multi-agent ``env``."""
    if not isinstance(env, sekai.MultiAgentEnv):
        raise TypeError(f"to_pettingzoo needs a sekai.MultiAgentEnv, got {type(env).__name__}")
    return _ParallelEnv(env)


def from_pettingzoo(
    env: pettingzoo.ParallelEnv[Any, Any, Any],
) -> sekai.MultiAgentEnv[Any, Any, Any]:
    """A ``sekai.MultiAgentEnv`` driving the PettingZoo ``env``; seeds go straight to it."""
    if not isinstance(env, pettingzoo.ParallelEnv):
        raise TypeError(f"from_pettingzoo needs a PettingZoo ParallelEnv, got {type(env).__name__}")
    return _MultiAgentEnv(env)


class _ParallelEnv(pettingzoo.ParallelEnv[Any, Any, Any]):
    """A sekai multi-agent env seen through PettingZoo's parallel API."""

    def __init__(self, env: sekai.MultiAgentEnv[Any, Any, Any]) -> None:
        self.env = env
        self.metadata = dict(env.metadata)
        self.render_mode = env.render_mode
        self.possible_agents = list(env.possible_agents)
        self.observation_spaces = {
            agent: to_gymnasium_space(env.observation_space(agent)) for agent in env.possible_agents
        }
        self.action_spaces = {
            agent: to_gymnasium_space(env.action_space(agent)) for agent in env.possible_agents
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
        return dict(observations), dict(infos)

    def step(self, actions: dict[Any, Any]) -> tuple[dict[Any, Any], ...]:
        observations, rewards, terminated, truncated, infos = self.env.step(actions)
        return dict(observations), dict(rewards), dict(terminated), dict(truncated), dict(infos)

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def __str__(self) -> str:
        return f"to_pettingzoo({self.env!r})"


class _MultiAgentEnv(sekai.MultiAgentEnv[Any, Any, Any]):
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
    def agents(self) -> list[Any]:
        return list(self.env.agents)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> sekai.MAResetResult:
        observations, infos = self.env.reset(seed=seed, options=options)
        return sekai.MAResetResult(observations, infos)

    def step(self, actions: dict[Any, Any]) -> sekai.MAStepResult:
        observations, rewards, terminated, truncated, infos = self.env.step(actions)
        return sekai.MAStepResult(observations, rewards, terminated, truncated, infos)

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def __repr__(self) -> str:
        return f"<from_pettingzoo({self.env}) agents={self.agents!r}>"
