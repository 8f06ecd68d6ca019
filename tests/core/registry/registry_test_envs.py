"""Tiny envs the registry tests build (no spaces needed: the registry never looks at them)."""

from __future__ import annotations

from typing import Any

import sekai
from sekai.multi_agent import MultiAgentEnv


class CountingEnv(sekai.Env[int, int]):
    """Counts steps; keeps its constructor arguments so tests can see what make() passed."""

    def __init__(self, start: int = 0, **extra: Any) -> None:
        self.start = start
        self.extra = extra
        self.count = start
        self.closed = False

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> sekai.ResetResult:
        self.count = self.start
        return sekai.ResetResult(self.count, {})

    def step(self, action: int) -> sekai.StepResult:
        self.count += 1
        return sekai.StepResult(self.count, 1.0, False, False, {})

    def close(self) -> None:
        self.closed = True


class TwoAgentEnv(MultiAgentEnv[int, int, str]):
    """A multi-agent env that does nothing: make() must not put TimeLimit around it."""

    possible_agents = ("a", "b")

    def __init__(self, n_steps: int = 5) -> None:
        self.n_steps = n_steps
        self.closed = False

    def close(self) -> None:
        self.closed = True
