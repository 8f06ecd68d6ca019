"""The docs hang together as a site: mkdocs.yml lists every page, and every link lands.

Links are checked the way mkdocs resolves them: a relative ``page.md`` must exist in docs/, and an
``#anchor`` must be the slug of a heading on that page (Python-Markdown's toc slugs).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))

_FENCED = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_NAV_PAGE = re.compile(r"^\s*-\s*[^:]+:\s*(\S+\.md)\s*$", re.MULTILINE)


def _nav_pages() -> list[str]:
    """The .md files named in mkdocs.yml's nav, in order."""
    return _NAV_PAGE.findall((ROOT / "mkdocs.yml").read_text())


def _slug(heading: str) -> str:
    """The anchor mkdocs gives a heading (Python-Markdown's default toc slugify)."""
    text = unicodedata.normalize("NFKD", heading.replace("`", ""))
    text = re.sub(r"[^\w\s-]", "", text.encode("ascii", "ignore").decode()).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _prose(page: Path) -> str:
    """The page without its fenced code blocks, whose ``#`` lines are comments, not headings."""
    return _FENCED.sub("", page.read_text())


def _anchors(page: Path) -> set[str]:
    return {_slug(heading) for heading in _HEADING.findall(_prose(page))}


def test_mkdocs_nav_lists_every_page_once() -> None:
    nav = _nav_pages()
    assert sorted(nav) == sorted(page.name for page in PAGES)
    assert len(set(nav)) == len(nav), f"a page appears twice in the nav: {nav}"
    assert nav[0] == "index.md", "the site starts at index.md"


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_links_point_to_existing_pages_and_headings(page: Path) -> None:
    broken = []
    for target in _LINK.findall(_prose(page)):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto: leave the site
            continue
        path, _, anchor = target.partition("#")
        linked = page if not path else DOCS / path
        if not linked.is_file():
            broken.append(f"{target}: no page {path}")
        elif anchor and anchor not in _anchors(linked):
            broken.append(f"{target}: no heading with anchor #{anchor} on {linked.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)
