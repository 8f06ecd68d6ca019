"""The classic-control tasks, with gymnasium 1.x's dynamics, rewards and start distributions.

Registered as ``CartPole-v1``, ``Pendulum-v1``, ``MountainCar-v0``, ``MountainCarContinuous-v0``
and ``Acrobot-v1``. With ``render_mode="rgb_array"`` each draws gymnasium's picture of its
state with NumPy alone; ``render_mode="human"`` shows that picture in a pygame window.
"""

from sekai.envs.classic_control.acrobot import AcrobotEnv
from sekai.envs.classic_control.cartpole import CartPoleEnv
from sekai.envs.classic_control.continuous_mountain_car import MountainCarContinuousEnv
from sekai.envs.classic_control.mountain_car import MountainCarEnv
from sekai.envs.classic_control.pendulum import PendulumEnv

__all__ = ["AcrobotEnv", "CartPoleEnv", "MountainCarContinuousEnv", "MountainCarEnv", "PendulumEnv"]
