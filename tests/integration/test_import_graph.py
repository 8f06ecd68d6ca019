"""No import circle of more than two files in the sources of any sekai distribution.

The graph has one node per module under ``packages/*/src`` and one edge per import of another
of those modules, wherever the import stands: at the top, inside a function, or under
``TYPE_CHECKING`` (a deferred or type-only edge still ties two files together for a reader),
and ``importlib.import_module`` with a literal name. A strongly connected component of the
graph is a set of modules that all reach each other: a circle. The only one allowed is the
deliberate pair named in ``_ALLOWED``.

Run this file on its own to print every circle, largest first:
``python tests/integration/test_import_graph.py``.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

_PACKAGES = Path(__file__).resolve().parents[2] / "packages"
_ALLOWED = {  # a Sequence flattens through utils, and utils dispatches on Sequence
    frozenset({"sekai.spaces.sequence", "sekai.spaces.utils"}),
}


def modules(packages: Path = _PACKAGES) -> dict[str, Path]:
    """Every module under ``packages/*/src``, by dotted name."""
    found = {}
    for path in sorted(packages.glob("*/src/**/*.py")):
        parts = path.relative_to(_src_of(path)).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _src_of(path: Path) -> Path:
    return next(parent for parent in path.parents if parent.name == "src")


def imports(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The known modules that module ``name`` (at ``path``) imports, anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(_known_prefix(alias.name, known) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module, node.level, package)
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                targets.add(submodule if submodule in known else _known_prefix(base, known))
        elif _is_import_module_call(node):
            targets.add(_known_prefix(node.args[0].value, known))  # type: ignore[attr-defined]
    targets.discard("")
    targets.discard(name)
    return targets


def _absolute(module: str | None, level: int, package: str) -> str:
    if level == 0:
        return module or ""
    base = package.rsplit(".", level - 1)[0] if level > 1 else package
    return f"{base}.{module}" if module else base


def _known_prefix(dotted: str, known: Mapping[str, Path]) -> str:
    """The longest prefix of ``dotted`` that is a known module, or ``""``."""
    parts = dotted.split(".")
    while parts and ".".join(parts) not in known:
        parts.pop()
    return ".".join(parts)


def _is_import_module_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute | ast.Name)
        and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
        == "import_module"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def graph(packages: Path = _PACKAGES) -> dict[str, set[str]]:
    """Module -> the modules it imports, over every distribution's sources."""
    known = modules(packages)
    return {name: imports(name, path, known) for name, path in known.items()}


def circles(edges: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_no_import_circle_beyond_the_allowed_pair():
    found = circles(graph())
    unexpected = [sorted(component) for component in found if component not in _ALLOWED]
    assert not unexpected, f"import circles: {unexpected}"


def test_the_allowed_pair_is_still_a_circle():
    """If the pair stops importing each other, drop it from ``_ALLOWED``."""
    assert set(_ALLOWED) <= set(circles(graph()))


def test_the_graph_sees_every_kind_of_import(tmp_path):
    source = tmp_path / "dist" / "src" / "pkg"
    source.mkdir(parents=True)
    (source / "__init__.py").write_text("")
    (source / "a.py").write_text("import pkg.b\n")
    (source / "b.py").write_text("def f():\n    from . import c\n")
    (source / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.d import D\n"
    )
    (source / "d.py").write_text("import importlib\nimportlib.import_module('pkg.a')\n")
    (source / "e.py").write_text("from pkg import a\n")
    edges = graph(tmp_path)
    assert edges["pkg.e"] == {"pkg.a"}
    assert circles(edges) == [frozenset({"pkg.a", "pkg.b", "pkg.c", "pkg.d"})]


@pytest.mark.parametrize(
    ("module", "level", "package", "expected"),
    [("x", 0, "p.q", "x"), ("x", 1, "p.q", "p.q.x"), ("x", 2, "p.q", "p.x"), (None, 1, "p", "p")],
)
def test_relative_imports_resolve_against_the_package(module, level, package, expected):
    assert _absolute(module, level, package) == expected


if __name__ == "__main__":
    for component in sorted(circles(graph()), key=len, reverse=True):
        print(len(component), sorted(component), file=sys.stdout)
