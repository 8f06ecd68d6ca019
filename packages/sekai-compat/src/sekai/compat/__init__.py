"""Bridges to gymnasium, PettingZoo and Stable-Baselines3.

``import sekai.compat`` needs none of those libraries: each bridge is imported when first used,
and a missing library is an ImportError that names the extra to install.
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> (module under sekai.compat, extra that provides the library it needs)
_BRIDGES = {
    "to_gymnasium_space": ("spaces", "gymnasium"),
    "from_gymnasium_space": ("spaces", "gymnasium"),
    "to_gymnasium": ("gymnasium", "gymnasium"),
    "from_gymnasium": ("gymnasium", "gymnasium"),
    "to_gymnasium_vector": ("gymnasium_vector", "gymnasium"),
    "from_gymnasium_vector": ("gymnasium_vector", "gymnasium"),
    "to_pettingzoo": ("pettingzoo", "pettingzoo"),
    "from_pettingzoo": ("pettingzoo", "pettingzoo"),
    "to_sb3": ("sb3", "sb3"),
}
# the import name of each extra's library, to tell "library missing" from other ImportErrors
_LIBRARIES = {"gymnasium": {"gymnasium"}, "pettingzoo": {"pettingzoo", "gymnasium"}}
_LIBRARIES["sb3"] = {"stable_baselines3", "gymnasium", "torch"}

__all__ = sorted(_BRIDGES)


def __getattr__(name: str) -> Any:
    try:
        module_name, extra = _BRIDGES[name]
    except KeyError:
        raise AttributeError(f"module 'sekai.compat' has no attribute {name!r}") from None
    try:
        module = importlib.import_module(f"sekai.compat.{module_name}")
    except ModuleNotFoundError as error:
        library = (error.name or "").split(".")[0]
        if library not in _LIBRARIES[extra]:
            raise
        raise ModuleNotFoundError(
            f"sekai.compat.{name} needs {library}, which is not installed: "
            f'pip install "sekai[{extra}]" (or "sekai-compat[{extra}]")',
            name=library,
        ) from None
    return getattr(module, name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_BRIDGES])
