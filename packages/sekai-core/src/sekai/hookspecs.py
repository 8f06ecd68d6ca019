"""The hooks a sekai plugin may implement.

A plugin is a module named by an entry point in the ``sekai.plugins`` group. Plugins are loaded
the first time the registry is used (``make``, ``make_vec``, ``spec``, ``register``,
``sekai list``), never at ``import sekai``. Implement a hook by defining a function of the same
name decorated with ``hookimpl``; a plugin implements any subset of the hooks.

Core knows nothing of the other distributions: each one's plugin contributes its envs, its
vectorization modes, its top-level names (``sekai.make_vec``), its test kit
(``sekai.testing.check_vec_env``) and its ``sekai`` subcommands (``sekai bench``) here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    import argparse

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


@hookspec
def sekai_register_names(register: Callable[..., None]) -> None:
    """Register the public names this plugin adds to ``sekai`` (or to ``sekai.testing``).

    Called once per process, when the registry is first used; ``sekai.<name>`` for a name
    that sekai-core does not define is such a use. Call ``register(name, module)`` once per
    name: ``sekai.<name>`` is then ``getattr(module, name)``, imported on first access, or the
    module itself when ``module`` is ``"sekai.<name>"``. ``register(name, module,
    namespace="sekai.testing")`` adds a helper of the plugin's test kit to ``sekai.testing``
    instead. A name sekai-core defines is not replaced. Returns nothing.
    """


@hookspec
def sekai_add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this plugin's subcommands to the ``sekai`` command line.

    Called each time the command line is built, after the plugins are loaded. Call
    ``commands.add_parser(name, help=..., description=...)`` once per command, add its
    arguments, and ``set_defaults(run=function)``: ``function(args)`` runs the command and
    returns its exit status; it raises ``sekai.cli.UsageError`` for a mistake in what the user
    typed (one line on stderr, exit status 2). Import heavy modules inside ``function``, so
    that the other commands stay quick. Returns nothing.
    """
