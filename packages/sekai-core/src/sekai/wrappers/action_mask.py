"""Action masks: read an env's current mask, or put it into the observation."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from sekai.core import ActType, Env
from sekai.spaces import Box, Dict, Discrete, MultiBinary, MultiDiscrete, Space, Tuple
from sekai.wrappers.base import ObservationWrapper


def get_action_mask(env: Env[Any, Any]) -> Any:
    """The current action mask from ``env.action_mask()``, looked up through any wrappers.

    The mask is in the format ``env.action_space.sample(mask=...)`` accepts.
    """
    return _action_mask_method(env)()


def _action_mask_method(env: Env[Any, Any]) -> Any:
    from sekai.multi_agent import MultiAgentEnv

    if isinstance(env, MultiAgentEnv):
        raise TypeError(
            "get_action_mask is single-agent; call env.action_mask(agent) on a MultiAgentEnv"
        )
    method = getattr(env, "action_mask", None)
    if not callable(method):
        raise AttributeError(f"{env!r} has no action_mask() method, so it publishes no action mask")
    return method


def action_mask_space(action_space: Space[Any]) -> Space[Any]:
    """The space of masks for ``action_space`` (the format its ``sample(mask=...)`` accepts)."""
    if isinstance(action_space, Discrete):
        return MultiBinary(int(action_space.n))
    if isinstance(action_space, MultiDiscrete) and len(action_space.shape) == 1:
        return Tuple([MultiBinary(int(n)) for n in action_space.nvec])
    if isinstance(action_space, MultiBinary):  # -1 samples randomly, 0 and 1 force the value
        return Box(-1, 1, shape=action_space.shape, dtype=np.int8)
    if isinstance(action_space, Box):
        return MultiBinary(action_space.shape)
    if isinstance(action_space, Dict):
        return Dict({key: action_mask_space(sub) for key, sub in action_space.items()})
    if isinstance(action_space, Tuple):
        return Tuple([action_mask_space(action_space[i]) for i in range(len(action_space))])
    raise TypeError(
        f"ActionMaskObservation cannot describe masks of the action space {action_space}"
    )


class ActionMaskObservation(ObservationWrapper[dict[str, Any], ActType]):
    """Add the env's current action mask to every observation, under ``key``.

    A Dict observation gains the key; any other observation becomes
    ``{"observation": obs, key: mask}``.
    """

    def __init__(self, env: Env[Any, ActType], key: str = "action_mask") -> None:
        super().__init__(env)
        _action_mask_method(env)  # fail now, not at the first reset, if the env has no mask
        space = env.observation_space
        mask_space = action_mask_space(env.action_space)
        if isinstance(space, Dict):
            if key in space.keys():  # noqa: SIM118 (`key in space` would test a sample)
                raise ValueError(f"the observation space already has a {key!r} key: {space}")
            self.observation_space = Dict({**dict(space.items()), key: mask_space})
        else:
            self.observation_space = Dict({"observation": space, key: mask_space})
        self.key = key
        self._merge = isinstance(space, Dict)

    def observation(self, observation: Any) -> dict[str, Any]:
        mask = _as_mask(self.env.action_space, get_action_mask(self.env))
        if self._merge:
            return {**copy.deepcopy(observation), self.key: mask}
        return {"observation": copy.deepcopy(observation), self.key: mask}


def _as_mask(action_space: Space[Any], mask: Any) -> Any:
    """A fresh copy of ``mask`` for ``action_space``, in ``action_mask_space``'s format.

    Lists are accepted, and a MultiDiscrete mask given as one array padded to ``max(nvec)``
    becomes one mask per entry without the padding.
    """
    if isinstance(action_space, Dict):
        return {key: _as_mask(sub, mask[key]) for key, sub in action_space.items()}
    if isinstance(action_space, Tuple):
        return tuple(_as_mask(action_space[i], mask[i]) for i in range(len(action_space)))
    if isinstance(action_space, MultiDiscrete):
        if isinstance(mask, tuple):
            return tuple(np.array(entry, np.int8) for entry in mask)
        padded = np.asarray(mask)
        return tuple(np.array(padded[i, :n], np.int8) for i, n in enumerate(action_space.nvec))
    return np.array(mask, np.int8)  # every other mask space holds int8
