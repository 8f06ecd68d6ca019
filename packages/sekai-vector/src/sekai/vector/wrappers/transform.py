"""VecTransformObservation and VecTransformReward: a function applied to every batch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from sekai.spaces import Space
from sekai.vector.base import VecEnv
from sekai.vector.wrappers.base import VecObservationWrapper, VecRewardWrapper


class VecTransformObservation(VecObservationWrapper):
    """Apply ``fn`` to every batch of observations (terminal ones as a batch of one).

    Pass ``new_observation_space`` (the single-env space) when ``fn`` changes the observations'
    shape, dtype or bounds.
    """

    def __init__(
        self,
        venv: VecEnv,
        fn: Callable[[Any], Any],
        new_observation_space: Space[Any] | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        super().__init__(venv)
        self.fn = fn
        if new_observation_space is not None:
            self.observation_space = new_observation_space

    def observation(self, batch: Any) -> Any:
        return self.fn(batch)


class VecTransformReward(VecRewardWrapper):
    """Apply ``fn`` to every ``(num_envs,)`` array of rewards."""

    def __init__(self, venv: VecEnv, fn: Callable[[np.ndarray], Any]) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        super().__init__(venv)
        self.fn = fn

    def reward(self, rewards: np.ndarray) -> np.ndarray:
        return np.asarray(self.fn(rewards), dtype=np.float64)
