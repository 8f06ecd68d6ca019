"""sekai-core's plugin: registers the classic-control environments."""

from collections.abc import Callable
from typing import Any

from sekai.hookspecs import hookimpl


@hookimpl
def sekai_register_envs(register: Callable[..., Any]) -> None:
    pass
