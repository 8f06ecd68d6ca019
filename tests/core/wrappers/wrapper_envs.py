"""Small envs for the wrapper tests: deterministic, so every expected value is known."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

import sekai
from sekai.core import ResetResult, StepResult


class CountingEnv(sekai.Env):
    """Observation = steps taken (float32 array of shape (1,)); reward = the action.

    Terminates after ``terminate_after`` steps (if given). Records every call in ``calls``.
    """

    def __init__(self, terminate_after: int | None = None, observation_space: Any = None) -> None:
        self.observation_space = observation_space
        self.action_space = None
        self.terminate_after = terminate_after
        self.count = 0
        self.calls: list[tuple[str, Any]] = []
        self.closed = False

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        self.calls.append(("reset", seed))
        self.count = 0
        return ResetResult(np.array([0.0], np.float32), {"start": True})

    def step(self, action):
        self.calls.append(("step", action))
        self.count += 1
        terminated = self.terminate_after is not None and self.count >= self.terminate_after
        obs = np.array([float(self.count)], np.float32)
        return StepResult(obs, float(action), terminated, False, {"count": self.count})

    def close(self):
        self.closed = True


class SlowCountingEnv(CountingEnv):
    """A CountingEnv whose async methods yield to the event loop, and log when they run."""

    def __init__(self, name: str, log: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.name = name
        self.log = log

    async def async_reset(self, *, seed=None, options=None):
        self.log.append(f"{self.name} reset start")
        await asyncio.sleep(0)
        self.log.append(f"{self.name} reset end")
        return self.reset(seed=seed, options=options)

    async def async_step(self, action):
        self.log.append(f"{self.name} step start")
        await asyncio.sleep(0)
        self.log.append(f"{self.name} step end")
        return self.step(action)


class SampleEnv(sekai.Env):
    """Observations are samples of ``observation_space`` (seeded by reset); reward 1 per step.

    Ends (terminated) after ``episode_length`` steps if given; keeps the actions it received and
    the observations it returned, so tests can compare a wrapper's output with its input.
    """

    def __init__(
        self,
        observation_space: Any,
        action_space: Any = None,
        episode_length: int | None = None,
    ) -> None:
        self.observation_space = observation_space
        self.action_space = sekai.Discrete(2) if action_space is None else action_space
        self.episode_length = episode_length
        self.actions: list[Any] = []
        self.observations: list[Any] = []
        self.steps = 0

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        if seed is not None:
            self.observation_space.seed(seed)
        self.steps = 0
        self.observations.append(self.observation_space.sample())
        return ResetResult(self.observations[-1], {})

    def step(self, action):
        self.actions.append(action)
        self.steps += 1
        self.observations.append(self.observation_space.sample())
        terminated = self.episode_length is not None and self.steps >= self.episode_length
        return StepResult(self.observations[-1], 1.0, terminated, False, {})
