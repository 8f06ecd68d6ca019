"""Every sekai warning points at the user's line, whatever sekai code lies between."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import sekai
from sekai.env_checker import check_env
from sekai.registration import Registry


def _warning_from(call: Callable[[], Any]) -> warnings.WarningMessage:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    assert caught, "expected a warning"
    return caught[0]


def test_a_box_bound_clipped_to_its_dtype() -> None:
    caught = _warning_from(lambda: sekai.Box(-1, 300, (2,), dtype=np.uint8))
    assert caught.filename == __file__


def test_a_box_bound_clipped_inside_a_dict_space() -> None:
    caught = _warning_from(lambda: sekai.Dict(a=sekai.Box(0, 1000, (1,), dtype=np.uint8)))
    assert caught.filename == __file__


def test_registering_an_id_again(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = Registry()
    monkeypatch.setattr(sekai.registration, "registry", fresh)
    sekai.register("test/Twice-v0", entry_point="sekai.envs.classic_control:CartPoleEnv")
    caught = _warning_from(
        lambda: sekai.register(
            "test/Twice-v0", entry_point="sekai.envs.classic_control:PendulumEnv"
        )
    )
    assert caught.filename == __file__


def test_stepping_a_made_cartpole_after_termination() -> None:
    env = sekai.make("CartPole-v1")
    env.reset(seed=0)
    while not env.step(1).terminated:
        pass
    caught = _warning_from(lambda: env.step(1))
    assert caught.filename == __file__


def test_a_soft_check_env_problem() -> None:
    class Float64Obs(sekai.Env):
        def __init__(self) -> None:
            self.observation_space = sekai.Box(-1.0, 1.0, (1,))
            self.action_space = sekai.Discrete(2)

        def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
            self._set_rng(seed)
            return sekai.ResetResult(np.zeros(1), {})

        def step(self, action: Any) -> sekai.StepResult:
            return sekai.StepResult(np.zeros(1), 0.0, False, False, {})

    caught = _warning_from(lambda: check_env(Float64Obs()))
    assert caught.filename == __file__
