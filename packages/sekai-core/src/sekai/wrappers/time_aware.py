"""TimeAwareObservation: add the elapsed fraction of the time limit to the observation."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from sekai.core import ActType, Env, ResetResult, StepResult
from sekai.spaces import Box, Dict, Space, Tuple
from sekai.wrappers.base import ObservationWrapper


class TimeAwareObservation(ObservationWrapper[Any, ActType]):
    """Append ``elapsed_steps / max_episode_steps``, in [0, 1], to every observation.

    A 1-D Box gets one more entry, a Dict a ``"time"`` key and a Tuple one more element (both a
    Box of shape (1,)). The limit is ``max_episode_steps`` found down the wrapper stack (the
    ``TimeLimit`` that ``make()`` adds), read again at every reset.
    """

    def __init__(self, env: Env[Any, ActType]) -> None:
        super().__init__(env)
        self._max_steps = self._max_episode_steps()
        self._elapsed = 0
        space = env.observation_space
        time_space = Box(0.0, 1.0, shape=(1,), dtype=np.float32)
        if isinstance(space, Dict):
            if "time" in space.keys():  # noqa: SIM118 (`in space` would test a sample)
                raise ValueError(f"the observation space already has a 'time' key: {space}")
            self.observation_space = Dict({**dict(space.items()), "time": time_space})
        elif isinstance(space, Tuple):
            self.observation_space = Tuple([*(space[i] for i in range(len(space))), time_space])
        elif isinstance(space, Box) and len(space.shape) == 1:
            dtype = np.promote_types(space.low.dtype, np.float32)
            self.observation_space = Box(
                np.append(space.low, 0.0).astype(dtype),
                np.append(space.high, 1.0).astype(dtype),
                dtype=dtype,
            )
        else:
            raise TypeError(
                "TimeAwareObservation needs a 1-D Box, Dict or Tuple observation space, "
                f"got {space}; flatten it first with FlattenObservation"
            )
        self._inner_space: Space[Any] = space

    def _max_episode_steps(self) -> int:
        try:
            steps = self.env.get_attr("max_episode_steps")
        except AttributeError:
            steps = None
        if steps is None:
            raise ValueError(
                "TimeAwareObservation needs a time limit below it: wrap the env in "
                "TimeLimit(env, max_episode_steps) or make() it with max_episode_steps"
            )
        return int(steps)

    def after_reset(self, result: ResetResult) -> ResetResult:
        self._max_steps = self._max_episode_steps()
        self._elapsed = 0
        return super().after_reset(result)

    def after_step(self, result: StepResult) -> StepResult:
        self._elapsed += 1
        return super().after_step(result)

    def observation(self, observation: Any) -> Any:
        fraction = np.array([min(self._elapsed / self._max_steps, 1.0)], np.float32)
        if isinstance(self._inner_space, Dict):
            return {**copy.deepcopy(observation), "time": fraction}
        if isinstance(self._inner_space, Tuple):
            return (*copy.deepcopy(observation), fraction)
        return np.concatenate([observation, fraction]).astype(self.observation_space.dtype)
