"""Warnings attributed to the user's line, however much sekai code lies between.

A fixed ``stacklevel`` is right for one call path only: the same warning reached through a
wrapper, a registry lookup by ``Mapping.get`` (frozen stdlib code) or a vector env would point at
sekai's own lines. ``warn`` attributes it to the innermost frame outside sekai instead.
"""

from __future__ import annotations

import os
import sys
import warnings


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """Warn at the innermost calling frame that is neither sekai's code nor frozen stdlib code."""
    frame = sys._getframe(1)
    while frame.f_back is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    module_globals = frame.f_globals
    warnings.warn_explicit(
        message,
        category,
        frame.f_code.co_filename,
        frame.f_lineno,
        module=module_globals.get("__name__", "<unknown>"),
        registry=module_globals.setdefault("__warningregistry__", {}),
        module_globals=module_globals,
    )


def _sekai_folders() -> tuple[str, ...]:
    package = sys.modules[__name__.rpartition(".")[0]]  # sekai, loaded before any of its modules
    return tuple(os.path.join(os.path.abspath(folder), "") for folder in package.__path__)


def _is_internal(filename: str) -> bool:
    if filename.startswith("<frozen "):
        return True
    return os.path.abspath(filename).startswith(_sekai_folders())
