"""Registers this package's envs with sekai.

``pyproject.toml`` names this module in the ``sekai.plugins`` entry-point group, so sekai calls
:func:`sekai_register_envs` the first time its registry is used. The env is named by a
``"module:Class"`` string: its module (and numpy) is imported only when someone makes it.
"""

from collections.abc import Callable
from typing import Any

from sekai.hookspecs import hookimpl


@hookimpl
def sekai_register_envs(register: Callable[..., Any]) -> None:
    register(
        "demo/RandomWalk-v0",
        "sekai_demo_plugin.envs:RandomWalkEnv",
        max_episode_steps=200,
        kwargs={"sigma": 0.01},
    )
