"""sekai-vector's plugin: the distribution ships backends and wrappers, and registers no envs.

The entry point stays so that every sekai distribution is discovered the same way; native
vector versions are registered by the distributions that own the envs (``vector_entry_point``).
"""

from collections.abc import Callable
from typing import Any

from sekai.hookspecs import hookimpl


@hookimpl
def sekai_register_envs(register: Callable[..., Any]) -> None:
    """Nothing to register: sekai-vector has no envs of its own."""
