"""The hooks a sekai plugin may implement.

A plugin is a module named by an entry point in the ``sekai.plugins`` group. Plugins are loaded
the first time the registry is used (``make``, ``make_vec``, ``spec``, ``register``,
``sekai list``), never at ``import sekai``. Implement a hook by defining a function of the same
name decorated with ``hookimpl``; a plugin implements any subset of the hooks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

PROJECT_NAME = "sekai"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def sekai_register_envs(register: Callable[..., Any]) -> None:
    """Register this plugin's environments.

    Called once per process, when the registry is first used. ``register`` has the signature of
    ``sekai.register``; give entry points (and vector entry points) as ``"module:Class"``
    strings so that an env's module is imported only when the env is made. Returns nothing.
    """


@hookspec
def sekai_register_vectorization_modes(register: Callable[[str, str], None]) -> None:
    """Register this plugin's vectorization modes (vector env backends) for ``make_vec``.

    Called once per process, when the registry is first used. Call ``register(name,
    entry_point)`` once per mode: ``name`` is what users pass as ``make_vec(...,
    vectorization_mode=name)``, ``entry_point`` a ``"module:Class"`` string naming a
    ``sekai.vector.VecEnv`` subclass whose constructor takes a list of zero-argument env
    factories first, then keyword arguments (``make_vec``'s ``vector_kwargs``). The module is
    imported only when the mode is used. ``"native"`` is reserved for envs' own vector entry
    points. Returns nothing.
    """
