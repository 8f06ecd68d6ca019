"""What a gymnasium user sees on calling sekai.Env's reset()/step() that a subclass must provide."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sekai
from sekai.env_checker import EnvCheckError


class _SuperReset(sekai.Env):
    """Seeds the gymnasium way, with super().reset(seed=seed)."""

    def __init__(self) -> None:
        self.observation_space = sekai.Box(-1.0, 1.0, (1,))
        self.action_space = sekai.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        return sekai.ResetResult(np.zeros(1, np.float32), {})

    def step(self, action: Any) -> sekai.StepResult:
        return sekai.StepResult(np.zeros(1, np.float32), 0.0, False, False, {})


class _NoStep(sekai.Env):
    def __init__(self) -> None:
        self.observation_space = sekai.Box(-1.0, 1.0, (1,))
        self.action_space = sekai.Discrete(2)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._set_rng(seed)
        return sekai.ResetResult(np.zeros(1, np.float32), {})


class _NoReset(sekai.Env):
    def __init__(self) -> None:
        self.observation_space = sekai.Box(-1.0, 1.0, (1,))
        self.action_space = sekai.Discrete(2)


def test_super_reset_says_to_seed_with_set_rng() -> None:
    with pytest.raises(NotImplementedError, match=r"self\._set_rng\(seed\).*super\(\)\.reset"):
        _SuperReset().reset(seed=1)


def test_a_missing_step_names_the_class_and_what_to_define() -> None:
    with pytest.raises(NotImplementedError, match=r"_NoStep does not implement step\(\)"):
        _NoStep().step(0)


def test_a_missing_reset_names_the_class_and_set_rng() -> None:
    with pytest.raises(
        NotImplementedError, match=r"_NoReset does not implement reset\(\).*_set_rng"
    ):
        _NoReset().reset()


@pytest.mark.parametrize(
    ("env_type", "expected"),
    [
        (_SuperReset, r"self\._set_rng\(seed\)"),
        (_NoStep, r"_NoStep does not implement step\(\)"),
        (_NoReset, r"_NoReset does not implement reset\(\)"),
    ],
)
def test_check_env_reports_what_to_do(env_type: type[sekai.Env], expected: str) -> None:
    with pytest.raises(EnvCheckError, match=expected) as caught:
        sekai.check_env(env_type())
    assert isinstance(caught.value.__cause__, NotImplementedError)
