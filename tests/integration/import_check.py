"""Import every module of the installed sekai distributions; fail on an undeclared dependency.

Run by each nox install-set session in a venv holding only that set's wheels. A module may fail to
import only for want of an optional extra of its own distribution (a native vector env without
sekai-vector, an adapter without gymnasium); everything imported must be the standard library or
a declared requirement of an installed sekai distribution, followed transitively.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata as metadata
import re
import sys

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(distribution: metadata.Distribution) -> tuple[set[str], set[str]]:
    """(required, optional) dependency names of a distribution, canonicalised."""
    required, optional = set(), set()
    for requirement in distribution.requires or []:
        name = _canonical(_NAME.match(requirement).group(1))
        (optional if "extra ==" in requirement.replace("extra==", "extra ==") else required).add(
            name
        )
    return required, optional


def _closure(names: set[str]) -> set[str]:
    """The installed distributions that ``names`` require, transitively."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        with contextlib.suppress(metadata.PackageNotFoundError):
            todo.extend(_requirements(metadata.distribution(name))[0])
    return seen


def _module_distribution(missing: str) -> str:
    """The distribution a missing module would come from: sekai.vector -> sekai-vector."""
    parts = missing.split(".")
    if parts[0] == "sekai" and len(parts) > 1:
        return f"sekai-{parts[1]}"
    return _canonical(parts[0])


def main() -> None:
    sekai_dists = {
        _canonical(d.metadata["Name"]): d
        for d in metadata.distributions()
        if _canonical(d.metadata["Name"]).startswith("sekai")
    }
    allowed = _closure(set(sekai_dists))
    owners = {
        module: {_canonical(d) for d in dists}
        for module, dists in metadata.packages_distributions().items()
    }
    problems, skipped, imported = [], [], 0
    for name, distribution in sorted(sekai_dists.items()):
        _, optional = _requirements(distribution)
        for file in distribution.files or []:
            parts = file.parts
            if file.suffix != ".py" or parts[0] != "sekai" or parts[-1] == "__main__.py":
                continue
            module = ".".join(
                parts[:-1] if parts[-1] == "__init__.py" else (*parts[:-1], file.stem)
            )
            try:
                importlib.import_module(module)
                imported += 1
            except ModuleNotFoundError as error:
                needed = _module_distribution(error.name or "")
                if needed in optional:
                    skipped.append(f"{module} (needs the optional {needed})")
                else:
                    problems.append(f"{module} ({name}) imports {error.name}, not declared")
    for top in sorted({m.split(".")[0] for m in sys.modules}):
        if (
            top in sys.stdlib_module_names
            or top in {"sekai", "_distutils_hack"}
            or top.startswith("_")
        ):
            continue
        if not owners.get(top, set()) & allowed:
            problems.append(f"{top} was imported but no installed sekai distribution requires it")
    for line in skipped:
        print("optional:", line)
    print(f"imported {imported} modules of {', '.join(sorted(sekai_dists))}")
    if problems:
        raise SystemExit("undeclared imports:\n  " + "\n  ".join(problems))


if __name__ == "__main__":
    main()
