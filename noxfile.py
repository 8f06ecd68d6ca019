"""Every check CI runs. `nox` runs them all but one; `nox -s tests` runs one; `nox -l` lists
them. The one, `browser`, needs Debian's chromium: `.ci/run` runs `nox`, then installs
chromium and runs `nox -s browser`, so the README's `nox` passes on a machine without a browser.

The wheels and sdists are built once per nox run (`_dist`) and shared by every session that
installs them, so each install set tests exactly what a user would install from an index.
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import tarfile
import tempfile
import tomllib
import zipfile
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True
# `nox` runs every check once: the install sets run each test folder against built wheels, each
# test in the first set that has what it needs, and `installs(install_set='all')` the rest of the
# suite (slow tests, and those needing several optional extras at once); `tests` (the editable
# workspace) and `sb3` are quicker loops for development, run by name. `ray` starts a local Ray.
# `learning` trains PPO on every finance setting of docs/learning.md at a small budget (about a
# minute). `oracle` checks the replays' fills against hftbacktest, order by order: the L3 replay's
# and the depth replay's with each queue model (about a minute).
# `browser` (headless Chromium) is not in the list: CI runs it by name once chromium is
# there.
nox.options.sessions = [
    "lint",
    "types",
    "importtime",
    "release",
    "installs",
    "render",
    "docs",
    "ray",
    "learning",
    "oracle",
]

ROOT = Path(__file__).parent
# Every session's TMPDIR: a short folder under the system's, removed when nox exits. nox's own
# (`session.create_tmp()`: .nox/<session>/tmp) sits under the checkout, and from a deep one the
# Unix socket paths under it (the forkserver's) pass the 107-byte limit; see `_tmp`.
_TMPDIR = os.environ["TMPDIR"] = tempfile.mkdtemp(prefix="sekai-nox-")
atexit.register(shutil.rmtree, _TMPDIR, ignore_errors=True)
# The tests the install sets have passed in this nox run (tests/conftest.py): each test runs in
# the first set that has what it needs, and `all` runs what no narrower set could
_LEDGER = os.path.join(_TMPDIR, "passed-tests")
PACKAGES = ["sekai-core", "sekai-vector", "sekai-finance", "sekai-compat"]
PYPROJECTS = [
    ROOT / "pyproject.toml",
    *(ROOT / "packages" / n / "pyproject.toml" for n in PACKAGES),
]
EXAMPLES = [ROOT / "examples" / n / "pyproject.toml" for n in ["demo-plugin", "demo-backend"]]
# pytest-xdist runs a session's tests on every core (-n auto): the suite runs in several sessions
# and CI has 2 cores to finish it in under 20 minutes
TEST_DEPS = ["pytest>=8", "pytest-xdist>=3.5", "hypothesis>=6.100"]
PARALLEL = ["-n", "auto"]
TORCH_CPU = "torch==2.13.0+cpu"  # the CPU wheel in /opt/wheels; PyPI's torch is a CUDA build
OPTIONAL = ["gymnasium", "pettingzoo", "stable-baselines3", "ray", "pygame", "matplotlib"]
OPTIONAL += ["pandas", "polars", "pyarrow"]  # dataframes for data=; sekai-finance reads them
OPTIONAL += ["databento-dbn"]  # sekai-finance[databento]: Databento DBN files

# What each distribution's wheel may ship under its top-level folders (sdists: the same under src/).
OWN_FILES = {
    "sekai_core": r"sekai/(?!vector/|finance/|envs/finance/|compat/|_plugins/(?!core\.py)).*",
    "sekai_vector": r"sekai/(vector/.*|_plugins/vector\.py)",
    "sekai_finance": r"sekai/(finance/.*|envs/finance/.*|_plugins/finance\.py)",
    "sekai_compat": r"sekai/(compat/.*|_plugins/compat\.py)",
    "sekai_demo_plugin": r"sekai_demo_plugin/.*",
    "sekai_demo_backend": r"sekai_demo_backend/.*",
    "sekai": r"(?!)",  # the meta-distribution ships no code
}

# Libraries some tests compare against (gymnasium's dynamics, cloudpickle round trips). The sets
# below sekai-compat install them as test tools; the compat sets must not, to test their absence.
REFERENCES = ["gymnasium>=1.0", "cloudpickle>=2.0"]

# name -> (what to install from the built wheels, the tests that apply to it, test tools)
INSTALL_SETS: dict[str, tuple[list[str], list[str], list[str]]] = {
    "core": (["sekai-core", "sekai-demo-plugin"], ["tests/core", "tests/integration"], REFERENCES),
    "core-vector": (
        ["sekai-core", "sekai-vector", "sekai-demo-plugin", "sekai-demo-backend"],
        ["tests/core", "tests/vector"],  # tests/core: those needing sekai-vector
        REFERENCES,
    ),
    "core-finance": (
        ["sekai-core", "sekai-finance"],
        ["tests/finance", "tests/integration/test_missing_distributions.py"],
        REFERENCES,
    ),
    # the readers behind extras, the DBN reader and the Parquet event store, with their extras:
    # the finance tests that need them (core-finance ran the others, and those that say what
    # is missing without them)
    "core-finance-readers": (
        ["sekai-core", "sekai-finance[databento,parquet]"],
        ["tests/finance"],
        REFERENCES,
    ),
    "core-vector-finance": (
        ["sekai-core", "sekai-vector", "sekai-finance", "sekai-demo-backend"],
        ["tests/core", "tests/vector", "tests/finance"],  # those needing both
        REFERENCES,
    ),
    "compat": (["sekai-compat"], ["tests/compat"], []),
    "compat-gymnasium": (["sekai-compat[gymnasium]"], ["tests/compat"], []),
    "compat-pettingzoo": (["sekai-compat[pettingzoo]"], ["tests/compat"], []),
    "compat-sb3": (["sekai-compat[sb3]"], ["tests/compat"], []),
    "all": (
        [
            "sekai[gymnasium,pettingzoo,sb3,plot,pandas,polars,parquet,databento]",
            "sekai-demo-plugin",
            "sekai-demo-backend",
        ],
        # what the sets above did not pass, slow tests included; the browser ones: `browser`
        ["tests", "-m", "not browser"],
        [],
    ),
}
_QUIET_MKDOCS = {"NO_MKDOCS_2_WARNING": "1"}  # material's end-of-life banner, on every build


def _tmp(session: nox.Session) -> Path:
    """A folder for the session's files (nox's ``.nox/<session>/tmp``), keeping TMPDIR short."""
    folder = Path(session.create_tmp())
    session.env["TMPDIR"] = _TMPDIR  # create_tmp points it at the folder
    return folder


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


@functools.cache
def _dist() -> Path:
    """Build every wheel and sdist of the workspace once per nox run."""
    folder = Path(tempfile.mkdtemp(prefix="sekai-dist-", dir=_TMPDIR))  # removed at exit
    nox.command.run(
        ["uv", "build", "--all-packages", "-q", "-o", str(folder)], external=True, silent=True
    )
    return folder


def _wheel(name: str) -> Path:
    """The built wheel of distribution ``name``."""
    (wheel,) = _dist().glob(f"{name.replace('-', '_')}-*.whl")
    return wheel


def _install_built(session: nox.Session, specs: list[str]) -> None:
    """Install built wheels into the session's venv, as a user would from an index.

    Every sekai distribution resolves to this run's wheel (a uv override), also when it comes in
    as another's dependency, so nothing of the same name can be taken from an index. An override
    replaces a requirement whole, extras included, so each carries the extras the set asks for,
    also those it asks for through the meta-distribution's extras.
    """
    meta_extras = tomllib.loads(PYPROJECTS[0].read_text())["project"]["optional-dependencies"]
    extras: dict[str, set[str]] = {}
    for spec in specs:
        name, _, wanted = spec.partition("[")
        for extra in filter(None, wanted.rstrip("]").split(",")):
            extras.setdefault(name, set()).add(extra)
            for requirement in meta_extras[extra] if name == "sekai" else []:
                sibling, _, sibling_extras = requirement.partition("[")
                extras.setdefault(sibling, set()).update(sibling_extras.split("]")[0].split(","))
    lines = []
    for wheel in _dist().glob("*.whl"):
        name = wheel.name.split("-")[0].replace("_", "-")
        chosen = sorted(extras.get(name, ()))
        lines.append(f"{name}{'[' + ','.join(chosen) + ']' if chosen else ''} @ {wheel.as_uri()}")
    overrides = _tmp(session) / "sekai-wheels.txt"
    overrides.write_text("\n".join(lines) + "\n")
    if "sb3" in set().union(*extras.values()):
        session.install("--find-links", "/opt/wheels", TORCH_CPU)
    session.install("--override", str(overrides), *specs, *TEST_DEPS)


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
    """The whole test suite against the editable workspace (stable-baselines3: `installs`)."""
    _sync(session)
    absent = "stable-baselines3,ray,pygame,hftbacktest"  # pygame: render; hftbacktest: oracle
    session.run("pytest", *PARALLEL, *session.posargs, env={"SEKAI_TEST_ABSENT": absent})


@nox.session(python="3.11")
@nox.parametrize("install_set", list(INSTALL_SETS))
def installs(session: nox.Session, install_set: str) -> None:
    """One install set from the built wheels in a fresh venv: its imports, then its tests."""
    specs, paths, tools = INSTALL_SETS[install_set]
    session.run("uv", "venv", "--clear", "-q", session.virtualenv.location, external=True)
    _install_built(session, specs)
    session.run("python", "tests/integration/import_check.py")  # before the test tools
    if tools:
        session.install(*tools)
    names = [*PACKAGES, *OPTIONAL, "sekai-demo-plugin", "sekai-demo-backend", "hftbacktest"]
    absent = _absent(session, names)
    if "sekai-vector" in absent:
        session.run("python", "tests/integration/slim_check.py")
    env = {"SEKAI_TEST_ABSENT": ",".join(absent), "SEKAI_TEST_LEDGER": _LEDGER}
    session.run(
        "pytest", "-q", "-p", "no:cacheprovider", *PARALLEL, *paths, *session.posargs, env=env
    )


def _absent(session: nox.Session, distributions: list[str]) -> list[str]:
    """Which of ``distributions`` are not installed in the session's venv."""
    output = session.run(
        "python",
        "-c",
        "import sys\n"
        "from importlib.metadata import PackageNotFoundError, distribution\n"
        "for name in sys.argv[1:]:\n"
        "    try: distribution(name)\n"
        "    except PackageNotFoundError: print(name)",
        *distributions,
        silent=True,
    )
    return str(output).split()


@nox.session(python="3.11")
def sb3(session: nox.Session) -> None:
    """Every Stable-Baselines3 test and example, the slow PPO-solves-CartPole one included.

    They need stable-baselines3 and torch (marker ``needs``), which the workspace does not
    install: here torch comes from the CPU wheel. Other runs deselect the slow test.
    """
    _sync(session)
    session.install("--find-links", "/opt/wheels", TORCH_CPU, "stable-baselines3>=2.3")
    tests = ["tests/compat/test_sb3.py", "tests/spec/test_docs.py"]
    session.run(
        "pytest", "-p", "no:cacheprovider", "-m", "slow or not slow", *tests, *session.posargs
    )


@nox.session(python="3.11")
def oracle(session: nox.Session) -> None:
    """LobsterReplay-v0's fills against hftbacktest's L3 FIFO queue model, and DepthReplay-v0's
    against its partial-fill exchange with each of its queue models, order by order
    (tests/oracle). hftbacktest is the dependency group `oracle`, locked and pinned (the tests
    count the disagreements exactly), installed by this session only: never by an install set."""
    _sync(session, "--group", "oracle")
    session.run("pytest", "-p", "no:cacheprovider", "tests/oracle", *session.posargs)


@nox.session(python="3.11")
def learning(session: nox.Session) -> None:
    """benchmarks/learning.py --quick --check: PPO trains through to_sb3 on every setting of
    docs/learning.md, end to end, and clearly beats a random policy on the simulated markets.
    The full setting, whose table the docs show, is run by hand (docs/learning.md)."""
    _sync(session)
    session.install("--find-links", "/opt/wheels", TORCH_CPU, "stable-baselines3>=2.3")
    out = str(_tmp(session) / "learning")
    session.run(
        "python", "benchmarks/learning.py", "--quick", "--check", "--out", out, *session.posargs
    )


@nox.session(python="3.11")
def render(session: nox.Session) -> None:
    """The classic-control frames against gymnasium's own, and render_mode="human" windows.
    Both draw with pygame, the optional extra sekai-core[human]: installed here only, and
    drawing offscreen."""
    _sync(session, "--extra", "human")
    session.run(
        "pytest",
        "tests/core/envs/test_classic_control_render_vs_gymnasium.py",
        "tests/core/test_human_rendering.py",
        *session.posargs,
        env={"SDL_VIDEODRIVER": "dummy"},
    )


@nox.session(python="3.11")
def ray(session: nox.Session) -> None:
    """RayVecEnv's tests, on a local Ray (2 CPUs, no dashboard) the tests start themselves."""
    _sync(session, "--extra", "ray")
    session.run(
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/vector/test_vec_ray.py",
        "tests/vector/test_vec_ray_restart.py",
        *session.posargs,
        env={"RAY_USAGE_STATS_ENABLED": "0"},
    )


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
    with session.chdir(_tmp(session)):
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
    """Build the site with --strict: every page, link and docstring reference resolves."""
    _build_site(session)


CHROMIUM = "/usr/bin/chromium"  # where tests/browser launches it


@nox.session(python="3.11")
def browser(session: nox.Session) -> None:
    """Build the site, then load it in headless Chromium (tests/browser/).

    Not in the default sessions: it needs Debian's ``chromium``, which ``.ci/run`` installs
    before it runs this session.
    """
    if not Path(CHROMIUM).is_file():
        session.error(f"nox -s browser needs Debian's chromium at {CHROMIUM} (.ci/run installs it)")
    site = _build_site(session)
    session.run(
        "pytest", "-p", "no:cacheprovider", "-m", "browser", "tests/browser",
        env={"SEKAI_SITE_DIR": str(site)},
    )  # fmt: skip


def _build_site(session: nox.Session) -> Path:
    """Build the documentation site with --strict into the session's tmp; return its folder.

    The packages go in non-editable, so that ``sekai`` is one folder for mkdocstrings (griffe
    does not follow ``__path__`` across the editable installs' separate folders).
    """
    # uv keys its cache of a workspace package on its pyproject.toml, not its sources: rebuild
    # them, or the reference shows the docstrings of an earlier run
    rebuild = [f"--reinstall-package={name}" for name in PACKAGES]
    _sync(session, "--group", "docs", "--no-editable", *rebuild)
    site = _tmp(session) / "site"
    session.run("mkdocs", "build", "--strict", "--site-dir", str(site), env=_QUIET_MKDOCS)
    return site


@nox.session(python="3.11")
def release(session: nox.Session) -> None:
    """Release checks on the built wheels and sdists: contents, metadata, versions, twine."""
    dist = _dist()
    built = sorted(dist.glob("*.whl")) + sorted(dist.glob("*.tar.gz"))
    problems = [problem for path in built for problem in _contents_problems(path)]
    problems += _version_problems()
    if problems:
        session.error("\n".join(problems))
    session.install("twine>=6")
    session.run("twine", "check", "--strict", *map(str, built))
    _install_built(session, ["sekai", "sekai-demo-plugin"])
    output = session.run("python", "-m", "sekai", "--version", silent=True)
    if str(output).strip() != f"sekai {_version()}":
        session.error(f"python -m sekai --version printed {output!r}")


@nox.session(python=False)
def bump(session: nox.Session) -> None:
    """`nox -s bump -- X.Y.Z`: set every distribution's version and the pins between them."""
    if len(session.posargs) != 1 or not re.fullmatch(r"\d+\.\d+\.\d+", session.posargs[0]):
        session.error("usage: nox -s bump -- X.Y.Z")
    (new,) = session.posargs
    old = _version()
    for path in [*PYPROJECTS, *EXAMPLES, _VERSION_FILE]:
        text = path.read_text()
        text = text.replace(f'"{old}"', f'"{new}"').replace(f"=={old}", f"=={new}")
        text = text.replace(f">={old}", f">={new}").replace(_next_minor(old), _next_minor(new))
        path.write_text(text)
    problems = _version_problems()
    if problems:
        session.error("\n".join(problems))
    session.log(f"{old} -> {new}; run `uv lock` and commit")


_VERSION_FILE = ROOT / "packages/sekai-core/src/sekai/_version.py"


def _version() -> str:
    """The one version of every sekai distribution, from sekai-core's _version.py."""
    match = re.search(r'__version__ = "(.+)"', _VERSION_FILE.read_text())
    assert match, _VERSION_FILE
    return match.group(1)


def _next_minor(version: str) -> str:
    major, minor, _ = version.split(".")
    return f"<{major}.{int(minor) + 1}"


def _version_problems() -> list[str]:
    """Every pyproject carries the one version; siblings pin a compatible sekai range."""
    version = _version()
    compatible = f">={version},{_next_minor(version)}"
    problems = []
    for path in [*PYPROJECTS, *EXAMPLES]:
        project = tomllib.loads(path.read_text())["project"]
        name = project["name"]
        if not name.startswith("sekai-demo-") and project["version"] != version:
            problems.append(f"{path}: version {project['version']}, sekai is {version}")
        requirements = [
            *project.get("dependencies", []),
            *(r for rs in project.get("optional-dependencies", {}).values() for r in rs),
        ]
        for requirement in requirements:
            pinned = re.match(r"(sekai-[a-z]+)(\[[^]]*\])?(.*)", requirement)
            if not pinned:
                continue
            wanted = f"=={version}" if name == "sekai" else compatible
            if pinned.group(3) != wanted:
                problems.append(f"{path}: {requirement!r} should pin {pinned.group(1)}{wanted}")
    return problems


def _contents_problems(path: Path) -> list[str]:
    """Files a wheel or sdist ships outside its own folders, and missing licence/README."""
    name = path.name.split("-")[0]
    own = re.compile(OWN_FILES[name])
    if path.suffix == ".whl":
        names = zipfile.ZipFile(path).namelist()
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = zipfile.ZipFile(path).read(meta).decode()
        code = [n for n in names if ".dist-info/" not in n]
    else:
        with tarfile.open(path) as archive:
            names = [n.split("/", 1)[1] for n in archive.getnames() if "/" in n]
            info = next(m for m in archive.getmembers() if m.name.endswith("/PKG-INFO"))
            metadata = archive.extractfile(info).read().decode()  # type: ignore[union-attr]
        extra = {"pyproject.toml", "PKG-INFO", "README.md", "LICENSE", ".gitignore"}
        code = [n.removeprefix("src/") for n in names if n not in extra]
    problems = [f"{path.name} ships {n}, outside its own folders" for n in code if not own.match(n)]
    if "License-Expression: MIT" not in metadata or "License-File: LICENSE" not in metadata:
        problems.append(f"{path.name}: no MIT licence metadata or LICENSE file")
    if "Description-Content-Type: text/markdown" not in metadata:
        problems.append(f"{path.name}: no README as its description")
    return problems
