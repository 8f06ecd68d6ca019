"""``make``: build a registered env and wrap it as its registration says.

The registry (``sekai.registration``) only stores and finds ``EnvSpec``s and needs no numpy;
building an env needs ``Env`` and the wrappers, so it lives here, one floor up: the registry
below, the wrappers beside, and nothing below imports this module.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

from sekai import registration
from sekai.core import Env
from sekai.multi_agent import MultiAgentEnv
from sekai.registration import EnvSpec, load_entry_point
from sekai.wrappers import OrderEnforcing, TimeLimit

__all__ = ["make"]


def make(id: str | EnvSpec, *, max_episode_steps: int | None = None, **kwargs: Any) -> Any:
    """Build the env registered under ``id`` (or described by an ``EnvSpec``).

    The entry point is called with a deep copy of the registered kwargs updated by ``kwargs``,
    and must return a sekai.Env or MultiAgentEnv. The env's ``spec`` is set to a copy of the
    spec it was built from, overrides included. When the spec or the caller gives
    ``max_episode_steps`` (the caller's wins) the env is wrapped in ``TimeLimit``. A sekai.Env
    is then wrapped in ``OrderEnforcing``, which enforces the episode lifecycle: no step before
    reset (``ResetNeeded``), a warning for a step after the episode ended, and no reset or step
    after close (``EnvClosed``).
    """
    base = id if isinstance(id, EnvSpec) else registration.registry[id]
    steps = base.max_episode_steps if max_episode_steps is None else max_episode_steps
    # each env gets its own copy of the registered defaults (a list default is not shared
    # between envs) and its own spec (changing env.spec.kwargs does not change the registry)
    env_spec = dataclasses.replace(
        base, kwargs={**copy.deepcopy(base.kwargs), **kwargs}, max_episode_steps=steps
    )
    try:
        env = load_entry_point(base.entry_point)(**env_spec.kwargs)
    except Exception as error:  # keep the type, say which env and arguments it came from
        error.add_note(f"raised by sekai.make({base.id!r}) with kwargs {env_spec.kwargs!r}")
        raise
    if not isinstance(env, Env | MultiAgentEnv):
        raise TypeError(
            f"the entry point {base.entry_point!r} of {base.id!r} returned "
            f"{type(env).__name__} {env!r:.80}, not a sekai.Env or sekai.MultiAgentEnv"
        )
    env.unwrapped.spec = env_spec
    if not isinstance(env, Env):
        if steps is None:
            return env
        env.close()
        raise TypeError(
            f"{base.id!r} has max_episode_steps={steps}, but its entry point built a "
            f"{type(env).__name__}, not a sekai.Env: TimeLimit is a single-agent wrapper, so "
            "register and make multi-agent envs without max_episode_steps"
        )
    return OrderEnforcing(env if steps is None else TimeLimit(env, steps))
