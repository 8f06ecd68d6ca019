"""Single-agent envs across the two APIs: ``to_gymnasium`` and ``from_gymnasium``.

Both adapters share the wrapped env's random generator rather than keeping their own, so each
side's checker sees the seeding it expects: gymnasium reads ``env.unwrapped._np_random``, sekai
``env.unwrapped._rng``.
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium
import gymnasium.envs.registration
import numpy as np

from sekai.compat.spaces import from_gymnasium_space, to_gymnasium_space
from sekai.core import Env, ResetResult, StepResult
from sekai.making import make
from sekai.registration import EnvSpec

__all__ = ["from_gymnasium", "to_gymnasium"]


def to_gymnasium(env: Env[Any, Any]) -> gymnasium.Env[Any, Any]:
    """A ``gymnasium.Env`` driving the sekai ``env``: spaces, render mode and spec carried over.

    A registered env gets a gymnasium ``spec`` whose ``make()`` builds the same sekai id
    through this bridge, so gymnasium's checker can try each declared render mode.
    """
    if not isinstance(env, Env):
        raise TypeError(f"to_gymnasium needs a sekai.Env, got {type(env).__name__}")
    return _GymnasiumEnv(env)


def from_gymnasium(env: gymnasium.Env[Any, Any]) -> Env[Any, Any]:
    """A ``sekai.Env`` driving the gymnasium ``env``: spaces, render mode and spec carried over."""
    if not isinstance(env, gymnasium.Env):
        raise TypeError(f"from_gymnasium needs a gymnasium.Env, got {type(env).__name__}")
    return _SekaiEnv(env)


class _GymnasiumEnv(gymnasium.Env[Any, Any]):
    """A sekai env seen through gymnasium's API."""

    def __init__(self, env: Env[Any, Any]) -> None:
        self.env = env
        self.observation_space = to_gymnasium_space(env.observation_space)
        self.action_space = to_gymnasium_space(env.action_space)
        self.metadata = dict(env.metadata)
        self.render_mode = env.render_mode
        self.spec = None if env.spec is None else _gymnasium_spec(env.spec)

    @property  # type: ignore[override]
    def _np_random(self) -> np.random.Generator:
        return self.env.unwrapped.rng

    @_np_random.setter
    def _np_random(self, value: np.random.Generator | None) -> None:
        if value is not None:  # gymnasium.Env's class default; the sekai env owns its generator
            self.env.unwrapped.rng = value

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        observation, info = self.env.reset(seed=seed, options=options)
        return observation, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return observation, float(reward), bool(terminated), bool(truncated), info

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.env, name)

    def __repr__(self) -> str:
        return f"<to_gymnasium{self.env!r}>"


def _gymnasium_spec(spec: EnvSpec) -> gymnasium.envs.registration.EnvSpec:
    """A gymnasium spec that builds the same sekai env through this bridge.

    The time limit is the sekai env's own (make() adds it), so the gymnasium spec has none: a
    second TimeLimit would only repeat it.
    """
    return gymnasium.envs.registration.EnvSpec(
        id=spec.id,
        entry_point=functools.partial(_make_bridged, spec),
        kwargs=dict(spec.kwargs),
    )


def _make_bridged(spec: EnvSpec, **kwargs: Any) -> gymnasium.Env[Any, Any]:
    return to_gymnasium(make(spec, **kwargs))


class _SekaiEnv(Env[Any, Any]):
    """A gymnasium env seen through sekai's API."""

    def __init__(self, env: gymnasium.Env[Any, Any]) -> None:
        self.env = env
        self.observation_space = from_gymnasium_space(env.observation_space)
        self.action_space = from_gymnasium_space(env.action_space)
        self.metadata = dict(env.metadata)  # type: ignore[misc]
        self.render_mode = env.render_mode
        self.spec = None if env.spec is None else _sekai_spec(env.spec)

    @property  # type: ignore[override]
    def _rng(self) -> np.random.Generator:
        return self.env.unwrapped.np_random

    @_rng.setter
    def _rng(self, value: np.random.Generator | None) -> None:
        if value is not None:  # RngMixin's class default; the gymnasium env owns its generator
            self.env.unwrapped.np_random = value

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        observation, info = self.env.reset(seed=seed, options=options)
        return ResetResult(observation, info)

    def step(self, action: Any) -> StepResult:
        observation, reward, terminated, truncated, info = self.env.step(action)
        return StepResult(observation, float(reward), bool(terminated), bool(truncated), info)

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def __repr__(self) -> str:
        return f"<from_gymnasium{self.env!r}>"


def _sekai_spec(spec: gymnasium.envs.registration.EnvSpec) -> EnvSpec:
    """A sekai spec that builds the same gymnasium env through this bridge."""
    return EnvSpec(
        id=spec.id,
        entry_point=functools.partial(_make_from_gymnasium, spec),
        max_episode_steps=spec.max_episode_steps,
        kwargs=dict(spec.kwargs),
    )


def _make_from_gymnasium(spec: gymnasium.envs.registration.EnvSpec, **kwargs: Any) -> Any:
    return from_gymnasium(gymnasium.make(spec, **kwargs))
