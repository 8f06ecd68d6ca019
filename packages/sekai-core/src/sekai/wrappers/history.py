"""Observation wrappers that remember past observations: stack the last few, or delay them."""

from __future__ import annotations

import copy
from collections import deque
from typing import Any

from sekai.checks import is_whole_number
from sekai.core import ActType, Env, ResetResult
from sekai.spaces import batch_space, concatenate, zero_sample
from sekai.wrappers.base import ObservationWrapper

_PADDINGS = ("zeros", "reset")


class FrameStackObservation(ObservationWrapper[Any, ActType]):
    """Observe the last ``stack_size`` observations, stacked along a new leading axis.

    The space is ``batch_space(space, stack_size)``, oldest first. At reset the missing history
    is padded with ``zero_sample(space)`` (``padding="zeros"``) or with copies of the first
    observation (``padding="reset"``).
    """

    def __init__(self, env: Env[Any, ActType], stack_size: int, padding: str = "zeros") -> None:
        super().__init__(env)
        if not is_whole_number(stack_size) or stack_size < 1:
            raise ValueError(f"stack_size must be an int of at least 1, got {stack_size!r}")
        if padding not in _PADDINGS:
            raise ValueError(f"padding must be one of {_PADDINGS}, got {padding!r}")
        self.stack_size = int(stack_size)
        self.padding = padding
        self._inner_space = env.observation_space
        self._frames: deque[Any] = deque(maxlen=self.stack_size)
        self.observation_space = batch_space(env.observation_space, self.stack_size)

    def after_reset(self, result: ResetResult) -> ResetResult:
        pad = zero_sample(self._inner_space) if self.padding == "zeros" else result.observation
        self._frames.clear()
        self._frames.extend([pad] * (self.stack_size - 1))
        return super().after_reset(result)

    def observation(self, observation: Any) -> Any:
        self._frames.append(observation)
        return concatenate(self._inner_space, list(self._frames))


class DelayObservation(ObservationWrapper[Any, ActType]):
    """Observe what the env showed ``delay`` steps ago.

    The first ``delay`` observations of an episode are ``zero_sample(space)``
    (``padding="zeros"``) or copies of the episode's first observation (``padding="reset"``).
    """

    def __init__(self, env: Env[Any, ActType], delay: int, padding: str = "zeros") -> None:
        super().__init__(env)
        if not is_whole_number(delay) or delay < 0:
            raise ValueError(f"delay must be a non-negative int, got {delay!r}")
        if padding not in _PADDINGS:
            raise ValueError(f"padding must be one of {_PADDINGS}, got {padding!r}")
        self.delay = int(delay)
        self.padding = padding
        self._queue: deque[Any] = deque()

    def after_reset(self, result: ResetResult) -> ResetResult:
        self._queue.clear()
        for _ in range(self.delay):  # observation() hands out copies, so sharing one is safe
            if self.padding == "zeros":
                self._queue.append(zero_sample(self.observation_space))
            else:
                self._queue.append(result.observation)
        return super().after_reset(result)

    def observation(self, observation: Any) -> Any:
        self._queue.append(observation)
        return copy.deepcopy(self._queue.popleft())
