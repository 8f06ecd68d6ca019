"""sekai.testing: the conformance helpers an env package runs over the envs it registers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import numpy as np
import pytest

import sekai
import sekai.testing
from sekai.env_checker import EnvCheckError
from sekai.registration import EnvSpec, registry

CLASSIC_CONTROL = [
    "Acrobot-v1",
    "CartPole-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
]


class GoodEnv(sekai.Env):
    instances: ClassVar[list[GoodEnv]] = []

    def __init__(self, size: int = 1) -> None:
        self.observation_space = sekai.Box(0.0, 1.0, shape=(size,))
        self.action_space = sekai.Discrete(2)
        self.closed = False
        GoodEnv.instances.append(self)

    def reset(self, *, seed=None, options=None):
        self._set_rng(seed)
        return sekai.ResetResult(self.rng.random(self.observation_space.shape, np.float32), {})

    def step(self, action):
        observation = self.rng.random(self.observation_space.shape, np.float32)
        return sekai.StepResult(observation, 0.0, False, False, {})

    def close(self) -> None:
        self.closed = True


class BoolRewardEnv(GoodEnv):
    def step(self, action):
        return super().step(action)._replace(reward=False)


class NoInfoEnv(GoodEnv):
    def reset(self, *, seed=None, options=None):
        return super().reset(seed=seed, options=options)._replace(info=None)


@pytest.fixture
def package_envs() -> Iterator[None]:
    """Register the envs of a third-party distribution 'My_Env.Package'; forget them afterwards."""
    len(registry)  # load the installed plugins before the snapshot
    snapshot = dict(registry._specs)
    for env_id, entry_point in [
        ("mine/Good-v0", GoodEnv),
        ("mine/BoolReward-v0", BoolRewardEnv),
        ("mine/NoInfo-v0", NoInfoEnv),
    ]:
        registry.add(EnvSpec(env_id, entry_point, distribution="My_Env.Package"))
    yield
    registry._specs.clear()
    registry._specs.update(snapshot)


@pytest.mark.parametrize("env_id", sekai.testing.env_ids("sekai-core"))
def test_used_as_documented_on_sekai_cores_envs(env_id: str) -> None:
    sekai.testing.check_registered_env(env_id)


def test_env_ids_of_one_distribution() -> None:
    assert sekai.testing.env_ids("sekai-core") == CLASSIC_CONTROL
    assert set(CLASSIC_CONTROL) <= set(sekai.testing.env_ids())
    assert sekai.testing.env_ids() == sorted(sekai.testing.env_ids())


def test_distribution_names_match_in_any_spelling(package_envs: None) -> None:
    expected = ["mine/BoolReward-v0", "mine/Good-v0", "mine/NoInfo-v0"]
    assert sekai.testing.env_ids("my-env-package") == expected
    assert sekai.testing.env_ids("MY_ENV_PACKAGE") == expected


def test_unknown_distribution_is_an_error_not_zero_tests() -> None:
    with pytest.raises(ValueError, match=r"no envs are registered by .*'sekai-cor'.*'sekai-core'"):
        sekai.testing.env_ids("sekai-cor")


def test_check_registered_env_makes_checks_and_closes(package_envs: None) -> None:
    GoodEnv.instances.clear()
    sekai.testing.check_registered_env("mine/Good-v0", size=3)
    (env,) = GoodEnv.instances
    assert env.closed and env.observation_space.shape == (3,)
    with pytest.raises(EnvCheckError, match="reward False of type bool"):
        sekai.testing.check_registered_env("mine/BoolReward-v0")
    assert GoodEnv.instances[-1].closed


class CloseTwiceFailsEnv(GoodEnv):
    def close(self) -> None:
        if self.closed:
            raise RuntimeError("already closed")
        super().close()


def test_a_failing_close_does_not_hide_the_check_error(package_envs: None) -> None:
    registry.add(EnvSpec("mine/CloseTwiceFails-v0", CloseTwiceFailsEnv))
    with pytest.raises(EnvCheckError, match=r"close\(\) a second time raised RuntimeError"):
        sekai.testing.check_registered_env("mine/CloseTwiceFails-v0")


def test_check_registered_envs_reports_every_failing_id(package_envs: None) -> None:
    with pytest.raises(EnvCheckError) as failure:
        sekai.testing.check_registered_envs("my-env-package")
    message = str(failure.value)
    assert message.startswith("2 of 3 envs fail check_env:\n")
    assert "mine/BoolReward-v0: EnvCheckError: step() returned reward False" in message
    assert "mine/NoInfo-v0: EnvCheckError: reset() returned info of type NoneType" in message
    assert "mine/Good-v0" not in message


def test_check_registered_envs_returns_the_ids_it_checked(package_envs: None) -> None:
    assert sekai.testing.check_registered_envs("sekai-core") == CLASSIC_CONTROL
    assert sekai.testing.check_registered_envs(ids=["mine/Good-v0"]) == ["mine/Good-v0"]
    with pytest.raises(EnvCheckError, match=r"1 of 1 envs fail check_env:\n  mine/NoInfo-v0"):
        sekai.testing.check_registered_envs(ids=["mine/NoInfo-v0"])


def test_a_single_id_as_a_str_is_a_type_error_not_one_check_per_letter() -> None:
    with pytest.raises(TypeError, match=r"not the str 'CartPole-v1'; pass ids=\['CartPole-v1'\]"):
        sekai.testing.check_registered_envs(ids="CartPole-v1")


def test_distribution_and_ids_together_are_ambiguous() -> None:
    with pytest.raises(ValueError, match="either distribution or ids"):
        sekai.testing.check_registered_envs("sekai-core", ids=["CartPole-v1"])


def test_multi_agent_ids_fail_with_a_type_error(package_envs: None) -> None:
    registry.add(EnvSpec("mine/Market-v0", sekai.MultiAgentEnv, distribution="My_Env.Package"))
    with pytest.raises(TypeError, match="MultiAgentEnv"):
        sekai.testing.check_registered_env("mine/Market-v0")
