"""The built documentation site renders in a real browser (headless Chromium) without errors.

Run by ``nox -s browser``, which builds the site and passes its folder in ``SEKAI_SITE_DIR``; the
site is served over HTTP on localhost, as a reader's browser would get it (the search index
loads in a web worker, which a ``file://`` page may not start). Screenshots go next to the
site, in ``screenshots/``, for a person to look at.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"  # Debian's package: .ci/run installs it
# flags for a sandboxed machine without a display or network: no sandbox (root), no GPU, and
# no background connections to services the machine cannot reach
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# page -> text its main heading must show
PAGES = {
    "": "sekai",
    "getting-started/": "Getting started",
    "api/": "API reference",
    "performance/": "Performance",
}


@pytest.fixture(scope="module")
def site() -> Path:
    folder = os.environ.get("SEKAI_SITE_DIR")
    if not folder or not (Path(folder) / "index.html").is_file():
        pytest.fail("set SEKAI_SITE_DIR to a built site (nox -s browser does both)")
    return Path(folder)


@pytest.fixture(scope="module")
def base_url(site: Path) -> Iterator[str]:
    """The site served on an ephemeral localhost port for the module's tests."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # imported here: only the docs group (nox -s docs, browser) installs playwright, and every
    # run collects this module
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.mark.parametrize("path", list(PAGES), ids=lambda path: path or "index")
def test_page_renders_without_console_errors(browser, base_url, site, path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    failed: list[str] = []
    page.on("requestfailed", lambda request: failed.append(request.url))
    response = page.goto(base_url + path, wait_until="networkidle")

    assert response is not None and response.status == 200
    heading = page.locator("article h1").first.inner_text()
    assert heading.removesuffix("¶").strip() == PAGES[path]  # ¶: the toc permalink
    assert page.locator("nav.md-nav--primary").count() == 1  # the theme's navigation is there
    assert errors == [] and failed == []
    shots = site.parent / "screenshots"
    shots.mkdir(exist_ok=True)
    page.screenshot(path=str(shots / f"{path.strip('/') or 'index'}.png"), full_page=False)
    page.close()


def test_the_api_reference_is_generated_from_docstrings(browser, base_url):
    page = browser.new_page()
    page.goto(base_url + "api/", wait_until="networkidle")
    text = page.locator("article").inner_text()
    page.close()
    assert "make_vec" in text and "Build num_envs copies of the env registered under id" in text


def test_the_performance_plot_is_shown(browser, base_url):
    page = browser.new_page()
    page.goto(base_url + "performance/", wait_until="networkidle")
    plot = page.locator("article img").first
    width = plot.evaluate("image => image.complete ? image.naturalWidth : 0")
    page.close()
    assert width > 500  # the PNG loaded and decoded, not a broken-image icon


def test_the_api_reference_shows_no_raw_sphinx_roles(browser, base_url):
    """mkdocstrings renders docstrings as Markdown, where a Sphinx role (``:class:`Env```) is
    shown as typed: the docstrings use plain code spans instead."""
    page = browser.new_page()
    page.goto(base_url + "api/", wait_until="networkidle")
    text = page.locator("article").inner_text()
    page.close()
    assert "A single-agent environment." in text  # the reference is there to be read
    roles = re.findall(r":(?:class|func|meth|attr|mod|data|exc|obj):\S{0,30}", text)
    assert roles == [], f"raw Sphinx roles on the API page: {roles[:10]}"
