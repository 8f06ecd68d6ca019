"""Every python block of docs/*.md runs, and every ``print(...)  # expected`` prints exactly that.

The blocks of one page share a namespace (``__name__ == "__main__"``), as a reader running the
page top to bottom would. Each top-level statement runs on its own with stdout captured; when it
contains print calls with a trailing comment, the captured lines must equal those comments.

A block that needs an optional package says so on the line before its fence, in a comment the
site does not show: ``<!-- needs: databento-dbn -->``. Such blocks are left out of their page's
run and run as a test of their own (in a fresh namespace, so they must import what they use),
marked ``needs`` so that it is deselected, and named, where the package is absent.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from sekai import registration

DOCS = Path(__file__).resolve().parents[2] / "docs"
_FENCE = re.compile(
    r"(?:^<!-- needs: ([^>]*?) -->\n)?^```python[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE
)


@pytest.fixture(autouse=True)
def _registry_as_it_was() -> Iterator[None]:
    """The envs a page registers are gone after it: a later test in the same process (``sekai
    list``'s, say) sees the registry the plugins made, not the pages' examples."""
    len(registration.registry)  # loads the plugins, so they are part of the snapshot
    snapshot = dict(registration.registry._specs)
    yield
    registration.registry._specs.clear()
    registration.registry._specs.update(snapshot)


def _blocks(page: Path, needs: tuple[str, ...] = ()) -> list[tuple[int, str]]:
    """The python blocks of a page that need exactly ``needs`` (none by default), with the
    line each starts on."""
    text = page.read_text()
    return [
        (text.count("\n", 0, m.start(2)) + 1, m.group(2))
        for m in _FENCE.finditer(text)
        if _needs(m) == needs
    ]


def _needs(match: re.Match[str]) -> tuple[str, ...]:
    return tuple(sorted((match.group(1) or "").split()))


def _optional(page: Path) -> list[tuple[str, ...]]:
    """The sets of optional packages that some block of a page needs."""
    return sorted({_needs(m) for m in _FENCE.finditer(page.read_text())} - {()})


def _print_comments(source: str) -> dict[int, str]:
    """Line number -> comment text, for lines that call print() and end in a comment."""
    comments = {}
    lines = source.splitlines()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            row = token.start[0]
            if re.match(r"\s*print\(", lines[row - 1]):
                comments[row] = token.string[1:].strip()
    return comments


def _run_page(page: Path, needs: tuple[str, ...] = ()) -> list[str]:
    """Run a page's blocks that need ``needs``; return a description of every mismatch."""
    namespace: dict[str, object] = {"__name__": "__main__"}
    problems = []
    for first_line, source in _blocks(page, needs):
        comments = _print_comments(source)
        for statement in ast.parse(source).body:
            expected = [
                comments[line]
                for line in range(statement.lineno, statement.end_lineno + 1)
                if line in comments
            ]
            code = compile(ast.Module([statement], []), f"{page.name}:{first_line}", "exec")
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                exec(code, namespace)
            if expected:
                printed = [line.rstrip() for line in buffer.getvalue().splitlines()]
                if printed != expected:
                    where = f"{page.name}:{first_line + statement.lineno - 1}"
                    problems.append(f"{where}\n  expected: {expected}\n  printed:  {printed}")
    return problems


# pages whose examples need stable-baselines3 (and torch), deselected where it is absent; the SB3
# page trains on a finance env, so it also needs sekai-finance's Trading-v0
NEEDS_SB3 = {"stable-baselines3"}
PAGES = [
    pytest.param(
        page,
        id=page.stem,
        marks=[pytest.mark.needs("stable-baselines3", "sekai-finance")]
        if page.stem in NEEDS_SB3
        else [],
    )
    for page in sorted(DOCS.glob("*.md"))
]


OPTIONAL_BLOCKS = [
    pytest.param(page, needs, id=f"{page.stem}[{','.join(needs)}]", marks=pytest.mark.needs(*needs))
    for page in sorted(DOCS.glob("*.md"))
    for needs in _optional(page)
]


@pytest.mark.parametrize("page", PAGES)
def test_page_prints_what_it_says(page: Path) -> None:
    if not _blocks(page):
        pytest.fail(f"{page.name} has no python blocks")
    problems = _run_page(page)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("page", "needs"), OPTIONAL_BLOCKS)
def test_blocks_needing_an_optional_package_print_what_they_say(
    page: Path, needs: tuple[str, ...]
) -> None:
    problems = _run_page(page, needs)
    assert not problems, "\n".join(problems)
