"""Small envs for the vector tests (SyncVecEnv, AsyncVecEnv, NativeVecEnv, wrappers)."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np

import sekai
from sekai.spaces import Box, Dict, Discrete


class WalkEnv(sekai.Env):
    """A noisy counter: obs [step, noise], reward = action, episode ends after ``length`` steps.

    The noise comes from the seeded rng, so trajectories show how each sub-env was seeded.
    ``reset(options={"start": k})`` starts the counter at k.
    """

    def __init__(self, length: int = 3) -> None:
        self.length = length
        self.observation_space = Box(-np.inf, np.inf, shape=(2,))
        self.action_space = Discrete(3)
        self.resets = 0
        self.closed = False
        self.last_options: dict[str, Any] | None = None

    def _obs(self) -> np.ndarray:
        return np.array([self.t, self.rng.normal()], np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._set_rng(seed)
        self.resets += 1
        self.last_options = options
        self.t = 0 if options is None else options.get("start", 0)
        return sekai.ResetResult(self._obs(), {"start": self.t})

    def step(self, action: Any) -> sekai.StepResult:
        self.t += 1
        return sekai.StepResult(
            self._obs(), float(action), self.t >= self.length, False, {"t": self.t}
        )

    def scaled_length(self, factor: int) -> int:
        return self.length * factor

    def close(self) -> None:
        self.closed = True


class DictObsEnv(sekai.Env):
    """A Dict observation space and Dict actions, to check batching beyond plain arrays."""

    def __init__(self) -> None:
        self.observation_space = Dict(
            {"position": Box(-10.0, 10.0, shape=(2,)), "mode": Discrete(3)}
        )
        self.action_space = Dict({"move": Box(-1.0, 1.0, shape=(2,)), "mode": Discrete(3)})

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._set_rng(seed)
        self.position = np.zeros(2, np.float32)
        return sekai.ResetResult({"position": self.position.copy(), "mode": 0}, {})

    def step(self, action: Any) -> sekai.StepResult:
        self.position = self.position + np.asarray(action["move"], np.float32)
        obs = {"position": self.position.copy(), "mode": int(action["mode"])}
        return sekai.StepResult(obs, 0.0, False, False, {})


class GateEnv(sekai.Env):
    """Its async_step waits until every sub-env sharing ``gate`` has started its step.

    A backend that awaited the sub-envs one after another would never open the gate.
    """

    def __init__(self, gate: dict[str, Any]) -> None:
        self.gate = gate
        self.observation_space = Box(-1.0, 1.0, shape=(1,))
        self.action_space = Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> sekai.StepResult:
        raise AssertionError("GateEnv must be stepped through async_step")

    async def async_step(self, action: Any) -> sekai.StepResult:
        self.gate["arrived"] += 1
        if self.gate["arrived"] == self.gate["expected"]:
            self.gate["open"].set()
        await asyncio.wait_for(self.gate["open"].wait(), timeout=2.0)
        return sekai.StepResult(np.zeros(1, np.float32), float(action), False, False, {})


def gate(expected: int) -> dict[str, Any]:
    """A fresh gate for ``expected`` GateEnvs (make it inside the event loop that uses it)."""
    return {"arrived": 0, "expected": expected, "open": asyncio.Event()}


class Drift(sekai.Env):
    """The spec's Drift env."""

    def __init__(self) -> None:
        self.observation_space = sekai.Box(-10.0, 10.0, shape=(1,))
        self.action_space = sekai.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._set_rng(seed)
        self.x = self.rng.normal()
        return sekai.ResetResult(np.array([self.x], np.float32), {})

    def step(self, action: Any) -> sekai.StepResult:
        self.x += (0.5 if action == 1 else -0.5) + self.rng.normal(0.0, 0.1)
        obs = np.array([np.clip(self.x, -10, 10)], np.float32)
        return sekai.StepResult(obs, -abs(self.x), abs(self.x) > 5, False, {})


class DriftVecEnv(sekai.NativeVecEnv):
    """The spec's native Drift, plus what the tests inspect: options, info arrays, a mask."""

    def __init__(
        self,
        num_envs: int,
        *,
        max_episode_steps: int | None = None,
        autoreset: Any = True,
        bound: float = 5.0,
    ) -> None:
        super().__init__(
            num_envs,
            sekai.Box(-10.0, 10.0, shape=(1,)),
            sekai.Discrete(2),
            autoreset=autoreset,
            max_episode_steps=max_episode_steps,
        )
        self.bound = bound
        self.x = np.zeros(num_envs)
        self.reset_calls: list[tuple[list[int], list[Any]]] = []

    def _reset_envs(self, indices: np.ndarray, options: list[Any]) -> None:
        self.reset_calls.append((indices.tolist(), list(options)))
        self.x[indices] = self.rng.normal(size=len(indices))
        for i, env_options in zip(indices, options, strict=True):
            if env_options is not None and "x" in env_options:
                self.x[i] = env_options["x"]

    def _observe(self) -> np.ndarray:
        return np.clip(self.x, -10, 10)[:, None].astype(np.float32)

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        push = np.where(np.asarray(actions) == 1, 0.5, -0.5)
        self.x += push + self.rng.normal(0.0, 0.1, size=self.num_envs)
        terminated = np.abs(self.x) > self.bound
        infos = {"x": self.x.copy(), "pair": np.stack([self.x, -self.x], axis=1), "tag": "drift"}
        return -np.abs(self.x), terminated, np.zeros(self.num_envs, bool), infos

    def _reset_infos(self, indices: np.ndarray) -> dict[str, Any]:
        return {"start": self.x[indices].copy()}

    def action_mask(self) -> np.ndarray:
        return np.ones((self.num_envs, 2), np.int8)


class CountingRows(np.ndarray):
    """An info array that counts how many per-env rows were read from it."""

    reads = 0

    def __getitem__(self, index: Any) -> Any:
        CountingRows.reads += 1
        return super().__getitem__(index)


class CountingDriftVecEnv(DriftVecEnv):
    """DriftVecEnv whose step info ``"x"`` counts the rows the infos read."""

    def _step(self, actions: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
        rewards, terminated, truncated, infos = super()._step(actions)
        return rewards, terminated, truncated, {"x": infos["x"].view(CountingRows)}
