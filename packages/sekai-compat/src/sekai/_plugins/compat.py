"""sekai-compat's plugin: adds ``sekai.compat`` to the names of ``sekai`` (it has no envs)."""

from collections.abc import Callable

from sekai.hookspecs import hookimpl


@hookimpl
def sekai_register_names(register: Callable[..., None]) -> None:
    register("compat", "sekai.compat")
