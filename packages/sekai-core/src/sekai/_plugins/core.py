"""sekai-core's plugin: registers the classic-control environments."""

from collections.abc import Callable
from typing import Any

from sekai.hookspecs import hookimpl

_CLASSIC_CONTROL = "sekai.envs.classic_control"


@hookimpl
def sekai_register_envs(register: Callable[..., Any]) -> None:
    register(
        "CartPole-v1", entry_point=f"{_CLASSIC_CONTROL}.cartpole:CartPoleEnv", max_episode_steps=500
    )
    register(
        "Pendulum-v1", entry_point=f"{_CLASSIC_CONTROL}.pendulum:PendulumEnv", max_episode_steps=200
    )
    register(
        "MountainCar-v0",
        entry_point=f"{_CLASSIC_CONTROL}.mountain_car:MountainCarEnv",
        max_episode_steps=200,
    )
    register(
        "MountainCarContinuous-v0",
        entry_point=f"{_CLASSIC_CONTROL}.continuous_mountain_car:MountainCarContinuousEnv",
        max_episode_steps=999,
    )
    register(
        "Acrobot-v1", entry_point=f"{_CLASSIC_CONTROL}.acrobot:AcrobotEnv", max_episode_steps=500
    )
