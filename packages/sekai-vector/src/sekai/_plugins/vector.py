"""sekai-vector's plugin: registers the vectorization modes it ships (it has no envs).

Native vector versions are registered by the distributions that own the envs
(``vector_entry_point``).
"""

import importlib.util
from collections.abc import Callable

from sekai.hookspecs import hookimpl


@hookimpl
def sekai_register_vectorization_modes(register: Callable[[str, str], None]) -> None:
    register("sync", "sekai.vector.sync:SyncVecEnv")
    register("async", "sekai.vector.async_:AsyncVecEnv")
    register("proc", "sekai.vector.proc:ProcVecEnv")
    if importlib.util.find_spec("ray") is not None:  # the `ray` extra
        register("ray", "sekai.vector.ray:RayVecEnv")
