"""Every check CI runs. `nox` runs them all; `nox -s tests` runs one."""

from __future__ import annotations

import zipfile
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True

ROOT = Path(__file__).parent
PACKAGES = ["sekai-core", "sekai-vector", "sekai-finance", "sekai-compat"]
TEST_DEPS = ["pytest>=8", "hypothesis>=6.100"]
_QUIET_MKDOCS = {"NO_MKDOCS_2_WARNING": "1"}  # material's end-of-life banner, on every build


def _sync(session: nox.Session, *args: str) -> None:
    """Install the locked workspace (every member editable) into the session's venv."""
    session.run_install(
        "uv",
        "sync",
        "--locked",
        *args,
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
        external=True,
    )


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    """The whole test suite against the editable workspace."""
    _sync(session)
    session.run("pytest", *session.posargs)


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
    """ruff lint and format check."""
    session.install("ruff>=0.8")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session(python="3.11")
def types(session: nox.Session) -> None:
    """mypy over the packages, installed as one `sekai` folder (mypy does not follow __path__)."""
    session.install("--no-sources", *(f"packages/{name}" for name in PACKAGES), "mypy>=1.13")
    config = str(ROOT / "pyproject.toml")
    with session.chdir(session.create_tmp()):
        session.run("mypy", "--config-file", config, "-p", "sekai")


@nox.session(python="3.11")
def importtime(session: nox.Session) -> None:
    """`import sekai` stays cheap: no numpy, no pluggy, no importlib.metadata."""
    session.install("-e", "packages/sekai-core")
    session.run(
        "python",
        "-c",
        "import sys, sekai; heavy = {'numpy', 'pluggy', 'importlib.metadata'} & set(sys.modules);"
        " assert not heavy, f'import sekai imported {sorted(heavy)}'",
    )
    session.run("python", "-X", "importtime", "-c", "import sekai", silent=True)


@nox.session(python="3.11")
def docs(session: nox.Session) -> None:
    """Build the site with --strict, then load it in headless Chromium (tests/browser/).

    The packages go in non-editable, so that ``sekai`` is one folder for mkdocstrings (griffe
    does not follow ``__path__`` across the editable installs' separate folders). The browser
    test needs Debian's ``chromium`` (.ci/run installs it).
    """
    _sync(session, "--group", "docs", "--no-editable")
    site = Path(session.create_tmp()) / "site"
    session.run("mkdocs", "build", "--strict", "--site-dir", str(site), env=_QUIET_MKDOCS)
    session.run(
        "pytest", "-p", "no:cacheprovider", "-m", "browser", "tests/browser",
        env={"SEKAI_SITE_DIR": str(site)},
    )  # fmt: skip


@nox.session(python="3.11")
def slim(session: nox.Session) -> None:
    """sekai-core alone in a fresh venv: spaces and make() work, other parts fail clearly."""
    session.install("packages/sekai-core")
    session.run("python", "tests/integration/slim_check.py")


@nox.session(python="3.11")
def wheels(session: nox.Session) -> None:
    """Build every wheel, check who ships sekai/__init__.py, install the wheels, run the tests."""
    dist = Path(session.create_tmp()) / "dist"
    session.run("uv", "build", "--all-packages", "--wheel", "-o", str(dist), external=True)
    built = sorted(dist.glob("*.whl"))
    for wheel in built:
        names = set(zipfile.ZipFile(wheel).namelist())
        owns_init = {"sekai/__init__.py", "sekai/envs/__init__.py"} & names
        if wheel.name.startswith("sekai_core-"):
            if len(owns_init) != 2:
                session.error(f"{wheel.name} lacks {sorted({'sekai/__init__.py'} - names)}")
        elif owns_init:
            session.error(f"{wheel.name} ships {sorted(owns_init)}: only sekai-core may")
    session.install(
        *map(str, built), *TEST_DEPS, "gymnasium>=1.0", "pettingzoo>=1.24", "matplotlib>=3.8"
    )
    with session.chdir(session.create_tmp()):
        session.run("python", "-c", "import sekai, sekai.vector, sekai.finance, sekai.compat")
    session.run("pytest", "-p", "no:cacheprovider", *session.posargs)
