"""Wrappers that apply a user function to observations, actions or rewards."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sekai.core import ActType, Env, ObsType
from sekai.spaces import Space
from sekai.wrappers.base import ActionWrapper, ObservationWrapper, RewardWrapper


class TransformObservation(ObservationWrapper[Any, ActType]):
    """Apply ``fn`` to every observation; pass ``observation_space`` when ``fn`` changes it."""

    def __init__(
        self,
        env: Env[Any, ActType],
        fn: Callable[[Any], Any],
        observation_space: Space[Any] | None = None,
    ) -> None:
        super().__init__(env)
        self.fn = _check_callable(fn)
        if observation_space is not None:
            self.observation_space = observation_space

    def observation(self, observation: Any) -> Any:
        return self.fn(observation)


class TransformAction(ActionWrapper[ObsType, Any]):
    """Apply ``fn`` to every action; ``action_space`` is the space the caller's actions are in."""

    def __init__(
        self,
        env: Env[ObsType, Any],
        fn: Callable[[Any], Any],
        action_space: Space[Any] | None = None,
    ) -> None:
        super().__init__(env)
        self.fn = _check_callable(fn)
        if action_space is not None:
            self.action_space = action_space

    def action(self, action: Any) -> Any:
        return self.fn(action)


class TransformReward(RewardWrapper[ObsType, ActType]):
    """Apply ``fn`` to every reward."""

    def __init__(self, env: Env[ObsType, ActType], fn: Callable[[float], float]) -> None:
        super().__init__(env)
        self.fn = _check_callable(fn)

    def reward(self, reward: float) -> float:
        return self.fn(reward)


def _check_callable(fn: Any) -> Any:
    """``fn``, or a TypeError now rather than at the first reset or step."""
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    return fn
