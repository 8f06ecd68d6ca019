"""The multi-agent environment API: ``MultiAgentEnv`` and its result types.

Every dict in the API is keyed by agent ID. Agents act simultaneously, or, in an event-driven
env, each on its own clock: then a result carries observations only for the agents that act next,
and rewards and flags for every agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from sekai.core import ActType, ObsType, RenderMixin, RngMixin

if TYPE_CHECKING:
    from sekai.registration import EnvSpec
    from sekai.spaces import Space

AgentID = TypeVar("AgentID")


class MAResetResult(NamedTuple):
    """What ``MultiAgentEnv.reset`` returns: per-agent observations and infos."""

    observations: dict[Any, Any]
    info: dict[Any, dict[str, Any]]

    @property
    def all_done(self) -> bool:
        """Always False: a reset starts an episode. Lets one loop handle both result types."""
        return False

    @property
    def any_done(self) -> bool:
        """Always False, as ``all_done``."""
        return False


class MAStepResult(NamedTuple):
    """What ``MultiAgentEnv.step`` returns; every field is a dict keyed by agent."""

    observations: dict[Any, Any]
    rewards: dict[Any, float]
    terminated: dict[Any, bool]
    truncated: dict[Any, bool]
    info: dict[Any, dict[str, Any]]

    @property
    def all_done(self) -> bool:
        """True when every agent reported in terminated or truncated is done (False if none)."""
        done = _done_flags(self.terminated, self.truncated)
        return bool(done) and all(done)

    @property
    def any_done(self) -> bool:
        """True when some agent reported in terminated or truncated is done."""
        return any(_done_flags(self.terminated, self.truncated))


def _done_flags(terminated: Mapping[Any, Any], truncated: Mapping[Any, Any]) -> list[bool]:
    """One flag per agent in either dict; an agent missing from one dict counts False there."""
    return [
        bool(terminated.get(agent, False)) or bool(truncated.get(agent, False))
        for agent in {**terminated, **truncated}
    ]


class MultiAgentEnv(RngMixin, RenderMixin, Generic[ObsType, ActType, AgentID]):
    """An environment in which each agent has its own observation and action space.

    Subclasses set ``possible_agents``, ``agents``, ``observation_spaces`` and ``action_spaces``
    and implement ``reset`` and ``step``. Seeding is the same as for ``sekai.Env``:
    call ``self._set_rng(seed)`` at the start of ``reset`` and draw randomness from ``self.rng``.
    Render modes too: ``self._set_render_mode(render_mode)`` in ``__init__`` (see
    ``RenderMixin``).
    """

    possible_agents: list[AgentID]
    agents: list[AgentID]
    observation_spaces: dict[AgentID, Space[ObsType]]
    action_spaces: dict[AgentID, Space[ActType]]
    spec: EnvSpec | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> MAResetResult:
        """Start an episode and return every starting agent's first observation."""
        raise NotImplementedError

    def step(self, actions: dict[AgentID, ActType]) -> MAStepResult:
        """Advance the episode by one ``{agent: action}`` dict."""
        raise NotImplementedError

    async def async_reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> MAResetResult:
        """Awaitable reset; override for envs that wait on I/O. Defaults to ``reset``."""
        return self.reset(seed=seed, options=options)

    async def async_step(self, actions: dict[AgentID, ActType]) -> MAStepResult:
        """Awaitable step; override for envs that wait on I/O. Defaults to ``step``."""
        return self.step(actions)

    def observation_space(self, agent: AgentID) -> Space[ObsType]:
        """The observation space of ``agent``."""
        return _lookup(self.observation_spaces, agent, "observation")

    def action_space(self, agent: AgentID) -> Space[ActType]:
        """The action space of ``agent``."""
        return _lookup(self.action_spaces, agent, "action")

    @property
    def num_agents(self) -> int:
        """How many agents are active now."""
        return len(self.agents)

    @property
    def max_num_agents(self) -> int:
        """How many agents can ever take part."""
        return len(self.possible_agents)

    @property
    def unwrapped(self) -> MultiAgentEnv[Any, Any, Any]:
        """This env itself: multi-agent envs have no wrappers, but make() looks here."""
        return self

    def __enter__(self) -> MultiAgentEnv[ObsType, ActType, AgentID]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        name = type(self).__name__
        if self.spec is not None:
            name += f"<{self.spec.id}>"
        return f"<{name} agents={list(getattr(self, 'agents', []))!r}>"  # also mid-__init__


_SpaceT = TypeVar("_SpaceT")


def _lookup(spaces: dict[Any, _SpaceT], agent: Any, kind: str) -> _SpaceT:
    try:
        return spaces[agent]
    except KeyError:
        raise KeyError(
            f"no {kind} space for agent {agent!r}; agents with one: {list(spaces)!r}"
        ) from None
