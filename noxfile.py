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
# torch for the SB3 tests: the CPU wheel from here, never PyPI's multi-GB CUDA build
TORCH_WHEELS = "/opt/wheels"
TORCH_CPU = "torch==2.13.0+cpu"


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
def sb3(session: nox.Session) -> None:
    """The Stable-Baselines3 tests (marker sb3, slow PPO-solves-CartPole included).

    The default test run deselects them: they need torch, installed here from the CPU wheel.
    """
    _sync(session)
    session.install("--find-links", TORCH_WHEELS, TORCH_CPU, "stable-baselines3>=2.3")
    tests = ["tests/compat", "tests/spec/test_docs.py"]
    session.run("pytest", "-p", "no:cacheprovider", "-m", "sb3", *tests, *session.posargs)


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
    session.install(*map(str, built), *TEST_DEPS, "gymnasium>=1.0", "pettingzoo>=1.24")
    with session.chdir(session.create_tmp()):
        session.run("python", "-c", "import sekai, sekai.vector, sekai.finance, sekai.compat")
    session.run("pytest", "-p", "no:cacheprovider", *session.posargs)
