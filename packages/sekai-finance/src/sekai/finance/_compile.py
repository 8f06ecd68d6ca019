"""numba for the replay kernels, or plain Python where it is not installed.

With numba (the extra ``sekai-finance[lob]``) ``jit`` compiles a kernel (cached beside its
module) and ``parallel_jit`` spreads its ``prange`` loops over the cores. Without it the same
functions run as Python, many times slower but equal, so the replay envs still load and run
where the extra is absent. Imported only by the kernel modules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:
    import numba
except ModuleNotFoundError as error:
    if error.name != "numba":
        raise
    numba = None  # type: ignore[assignment]

if numba is not None:
    jit: Callable[[Any], Any] = numba.njit(cache=True)
    parallel_jit: Callable[[Any], Any] = numba.njit(cache=True, parallel=True)
    prange: Callable[..., Any] = numba.prange
else:

    def jit(function: Any) -> Any:
        return function

    parallel_jit = jit
    prange = range
