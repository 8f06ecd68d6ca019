"""Fixtures for the registry tests: a registry that no test leaks into, and fake plugins."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sekai import registration


@pytest.fixture(autouse=True)
def restore_registry() -> Iterator[None]:
    """Snapshot the process-wide registry (plugins loaded) and put it back after the test."""
    len(registration.registry)  # loads the plugins, so they are part of the snapshot
    snapshot = dict(registration.registry._specs)
    yield
    registration.registry._specs.clear()
    registration.registry._specs.update(snapshot)


FakePlugin = Callable[..., None]


@pytest.fixture
def fake_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakePlugin]:
    """Install throwaway distributions with ``sekai.plugins`` entry points.

    ``fake_plugin(distribution, module, source)`` puts the distribution's metadata and
    ``module.py`` (none when ``source`` is None: a dangling entry point) on ``sys.path``, so the
    real entry-point discovery finds it. The modules are forgotten after the test.
    """
    monkeypatch.syspath_prepend(str(tmp_path))
    modules: list[str] = []

    def install(distribution: str, module: str, source: str | None, name: str = "main") -> None:
        info = tmp_path / f"{distribution.replace('-', '_')}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 0.1\n"
        )
        (info / "entry_points.txt").write_text(f"[sekai.plugins]\n{name} = {module}\n")
        if source is not None:
            (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
        modules.append(module)
        importlib.invalidate_caches()

    yield install
    for module in modules:
        sys.modules.pop(module, None)
