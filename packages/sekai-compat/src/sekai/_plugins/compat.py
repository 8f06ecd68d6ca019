"""sekai-compat's plugin."""

from collections.abc import Callable
from typing import Any

from sekai.hookspecs import hookimpl


@hookimpl
def sekai_register_envs(register: Callable[..., Any]) -> None:
    pass
