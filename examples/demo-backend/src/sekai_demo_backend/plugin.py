"""Registers this package's vectorization mode with sekai (entry point ``sekai.plugins``)."""

from collections.abc import Callable

from sekai.hookspecs import hookimpl


@hookimpl
def sekai_register_vectorization_modes(register: Callable[[str, str], None]) -> None:
    register("demo-threads", "sekai_demo_backend.threads:ThreadVecEnv")
