"""The ``sekai`` command line: ``sekai list`` shows every registered env.

Each subcommand is an ``_add_<name>`` function, called from :func:`_parser`, that adds its
parser to the subparsers and sets ``run`` to the function that executes it and returns the exit
code. A command whose code lives in another distribution (``sekai bench``) adds its parser here
and imports that code inside its ``run`` function, so ``sekai list`` works with sekai-core alone.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence

from sekai._version import __version__
from sekai.registration import EnvSpec, registry

_USER_REGISTRATIONS = "registered at runtime"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``sekai`` command with ``argv`` (default: the process arguments)."""
    args = _parser().parse_args(argv)
    return int(args.run(args))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sekai", description="Reinforcement-learning environments for markets."
    )
    parser.add_argument("--version", action="version", version=f"sekai {__version__}")
    commands = parser.add_subparsers(title="commands", required=True, metavar="COMMAND")
    _add_list(commands)
    return parser


def _add_list(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = commands.add_parser(
        "list",
        help="list every registered env id",
        description="List every registered env id, grouped by the distribution that registers "
        "it; [native vec] marks envs with a native vector implementation.",
    )
    command.set_defaults(run=_run_list)


def _run_list(args: argparse.Namespace) -> int:
    print(_format_list(registry.values()), end="")
    return 0


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
        lines = [f"{distribution}:"]
        for env_spec in entries:
            marker = "  [native vec]" if env_spec.vector_entry_point is not None else ""
            lines.append(f"  {env_spec.id:<{width}}{marker}".rstrip())
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _sort_key(env_spec: EnvSpec) -> tuple[str, str, int]:
    version = env_spec.version
    return (env_spec.namespace or "", env_spec.name.lower(), -1 if version is None else version)
