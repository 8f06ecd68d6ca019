"""The order book's home, ``sekai.finance.lob``, is reached from outside only through its public
names, and reaches outside only through theirs: no module on one side of the boundary imports a
private module (``_engine``) or a private name (``_check_replay``) of the other. So a new data
format or queue model can change anything private in the package without touching the envs."""

from __future__ import annotations

import ast
from pathlib import Path

from test_import_graph import _absolute, modules

_HOME = "sekai.finance.lob"


def _inside(module: str) -> bool:
    return module == _HOME or module.startswith(_HOME + ".")


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and part != "__init__" for part in dotted.split("."))


def crossings(packages: Path | None = None) -> list[str]:
    """Every import of a private module or name across the boundary, as 'importer -> name'."""
    found = []
    for name, path in (modules() if packages is None else modules(packages)).items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(node.module, node.level, package)
                targets = [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                if not target.startswith("sekai.") or _inside(target) == _inside(name):
                    continue
                # the part beyond sekai (the other side's modules and names) must be public;
                # ``sekai._plugins`` and the like are not crossings of this boundary
                if _private(target.removeprefix("sekai.")):
                    found.append(f"{name} -> {target}")
    return found


def test_nothing_private_crosses_the_order_books_boundary():
    assert crossings() == []


def test_a_private_import_across_the_boundary_is_found(tmp_path):
    src = tmp_path / "sekai-x" / "src" / "sekai"
    (src / "finance" / "lob").mkdir(parents=True)
    (src / "envs").mkdir()
    (src / "finance" / "lob" / "_engine.py").write_text("from sekai.envs.helpers import _h\n")
    (src / "finance" / "lob" / "book.py").write_text("from sekai.finance.lob._engine import x\n")
    (src / "envs" / "helpers.py").write_text("from sekai.finance.lob import _engine\n")
    (src / "envs" / "env.py").write_text("from sekai.finance.lob.book import OrderBook\n")
    assert sorted(crossings(tmp_path)) == [
        "sekai.envs.helpers -> sekai.finance.lob._engine",
        "sekai.finance.lob._engine -> sekai.envs.helpers._h",
    ]


def test_the_order_book_code_lives_in_its_home():
    """The engine, the book, the flow, the formats and the replay are modules of the home, and
    the compiled engine (numba) is imported nowhere else: the envs are drivers over it."""
    found = modules()
    home = {name.removeprefix(_HOME + ".") for name in found if name.startswith(_HOME + ".")}
    assert {"book", "_engine", "flow", "lobster", "level_books", "market", "replay_model"} <= home
    assert {"_replay_kernel", "_replay_day", "_replay_days", "_replay_windows"} <= home
    numba_users = {
        name
        for name, path in found.items()
        if any(
            isinstance(node, ast.Import | ast.ImportFrom)
            and any(
                (alias.name if isinstance(node, ast.Import) else node.module or "") == "numba"
                for alias in node.names
            )
            for node in ast.walk(ast.parse(path.read_text(), str(path)))
        )
    }
    assert numba_users and all(_inside(name) for name in numba_users), numba_users
