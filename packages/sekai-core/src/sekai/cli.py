"""The ``sekai`` command line: ``sekai list`` shows every registered env (``--modes``: every
vectorization mode); plugins add their own commands (sekai-vector's ``sekai bench``).

A subcommand adds its parser to the subparsers and sets ``run`` to the function that executes
it and returns the exit code: ``_add_list`` here, and each plugin's ``sekai_add_commands`` hook
(``sekai.hookspecs``). A mistake the user made is a ``UsageError``: one line on stderr and exit
status 2, no traceback.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from sekai._version import __version__
from sekai.registration import (
    EnvSpec,
    VectorizationMode,
    load_entry_point,
    missing_family_hint,
    registry,
)

_USER_REGISTRATIONS = "registered at runtime"
_EXIT_USAGE = 2  # argparse's status for a usage error; ours are the same kind of mistake


class UsageError(Exception):
    """A mistake in the command the user typed: reported in one line, without a traceback."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``sekai`` command with ``argv`` (default: the process arguments)."""
    parser, commands = _parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    typed = next((word for word in argv if not word.startswith("-")), None)
    if typed is not None and typed not in commands.choices:
        known = ", ".join(sorted(commands.choices))
        message = f"no command {typed!r} (commands: {known}).{missing_family_hint()}"
        print(f"{parser.prog}: error: {message}", file=sys.stderr)
        return _EXIT_USAGE
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except UsageError as error:
        print(f"{parser.prog} {args.command}: error: {error}", file=sys.stderr)
        return _EXIT_USAGE
    except BrokenPipeError:  # `sekai list | head`: the reader left, which is not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction[Any]]:
    """The parser, and its subcommands: ``list`` and those the plugins add."""
    parser = argparse.ArgumentParser(
        prog="sekai", description="Reinforcement-learning environments for markets."
    )
    parser.add_argument("--version", action="version", version=f"sekai {__version__}")
    commands = parser.add_subparsers(
        title="commands", required=True, metavar="COMMAND", dest="command"
    )
    _add_list(commands)
    registry.call_hook("sekai_add_commands", commands=commands)
    return parser, commands


def _add_list(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = commands.add_parser(
        "list",
        help="list every registered env id",
        description="List every registered env id with its docstring's summary, grouped by the "
        "distribution that registers it; [native vec] marks envs with a native vector "
        "implementation.",
    )
    command.add_argument("--json", action="store_true", help="print the list as JSON")
    command.add_argument(
        "--modes",
        action="store_true",
        help="list the vectorization modes for make_vec instead, by distribution",
    )
    command.set_defaults(run=_run_list)


def _run_list(args: argparse.Namespace) -> int:
    if args.modes:
        modes = sorted(registry.vectorization_modes.values(), key=lambda mode: mode.name)
        if args.json:
            print(json.dumps([_mode_record(mode) for mode in modes]))
        else:
            print(_format_modes(modes), end="")
        return 0
    specs = list(registry.values())
    if args.json:
        print(json.dumps([_list_record(env_spec) for env_spec in sorted(specs, key=_sort_key)]))
    else:
        print(_format_list(specs), end="")
    return 0


def _list_record(env_spec: EnvSpec) -> dict[str, Any]:
    return {
        "id": env_spec.id,
        "distribution": env_spec.distribution,
        "native_vec": env_spec.vector_entry_point is not None,
        "max_episode_steps": env_spec.max_episode_steps,
        "description": _describe(env_spec),
    }


def _mode_record(mode: VectorizationMode) -> dict[str, Any]:
    return {"name": mode.name, "distribution": mode.distribution, "entry_point": mode.entry_point}


def _format_modes(modes: Iterable[VectorizationMode]) -> str:
    """The native mode first, then one block per distribution (sorted) of its modes."""
    groups: dict[str, list[VectorizationMode]] = {}
    for mode in modes:
        groups.setdefault(mode.distribution or _USER_REGISTRATIONS, []).append(mode)
    blocks = ["native: an env's own vector implementation, for envs marked [native vec]\n"]
    for distribution in sorted(groups):
        entries = sorted(groups[distribution], key=lambda mode: mode.name)
        width = max(len(mode.name) for mode in entries)
        lines = [f"{distribution}:"]
        lines += [f"  {mode.name:<{width}}  {mode.entry_point}" for mode in entries]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _format_list(specs: Iterable[EnvSpec]) -> str:
    """One block per distribution (sorted), its ids sorted by namespace, name and version."""
    groups: dict[str, list[EnvSpec]] = {}
    for env_spec in specs:
        groups.setdefault(env_spec.distribution or _USER_REGISTRATIONS, []).append(env_spec)
    if not groups:
        return "no envs registered\n"
    blocks = []
    for distribution in sorted(groups):
        entries = sorted(groups[distribution], key=_sort_key)
        width = max(len(env_spec.id) for env_spec in entries)
        marker_width = max(len(_native_marker(env_spec)) for env_spec in entries)
        lines = [f"{distribution}:"]
        for env_spec in entries:
            native = _native_marker(env_spec)
            line = f"  {env_spec.id:<{width}}{native:<{marker_width}}  {_describe(env_spec)}"
            lines.append(line.rstrip())
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _native_marker(env_spec: EnvSpec) -> str:
    return "  [native vec]" if env_spec.vector_entry_point is not None else ""


def _sort_key(env_spec: EnvSpec) -> tuple[str, str, int]:
    version = env_spec.version
    return (env_spec.namespace or "", env_spec.name.lower(), -1 if version is None else version)


def _describe(env_spec: EnvSpec) -> str:
    """The env docstring's summary (its first paragraph, on one line) without reST markup.

    Loads the env's module: ``sekai list`` is the one place that needs it.

    An entry point that cannot be loaded is described by its error, so one broken env does not
    hide the others from ``sekai list``.
    """
    try:
        env_class = load_entry_point(env_spec.entry_point)
    except Exception as error:  # a broken third-party env: say so, list the rest
        return f"(cannot load {env_spec.entry_point!r}: {type(error).__name__})"
    summary = (inspect.getdoc(env_class) or "").strip().split("\n\n")[0]
    summary = re.sub(r":[\w.]+:(?=`)", "", " ".join(summary.split()))  # :mod:`x` -> `x`
    return re.sub(r"``?([^`]+)``?", r"\1", summary)
