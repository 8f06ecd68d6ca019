"""Which tests need which distributions, so that each install set runs the tests that apply to it.

A test needs the distributions of its folder (``tests/vector/`` needs sekai-vector, ...) or module
(a bridge's tests need its library), and those its ``@pytest.mark.needs(...)`` marker names. Tests
whose needs are not installed are deselected and named in the summary, never skipped as if they
had passed. ``@pytest.mark.absent(...)`` is the reverse, for what a slim install must say: the
test runs only where none of the distributions it names is installed. ``SEKAI_TEST_ABSENT`` (comma-
separated, set by the nox sessions) lists what a run knowingly lacks: when it is set, a need that
is missing but not listed is an error, so a broken install cannot quietly drop tests.

``SEKAI_TEST_LEDGER`` (a file, set by nox's install sets) runs each test once per nox run: in the
first install set that has what it needs. A run appends the tests that passed to the file and
leaves out those an earlier set already passed; a run without it runs every test it can.
"""

from __future__ import annotations

import importlib.metadata
import os
import signal
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import pytest

_TESTS = Path(__file__).parent
_PATH_NEEDS: dict[str, tuple[str, ...]] = {  # paths under tests/ -> what importing them needs
    "vector": ("sekai-vector",),
    "finance": ("sekai-finance",),
    "finance/lob/test_lob_vec.py": ("sekai-vector",),
    "finance/test_simulated_markets.py": ("sekai-vector",),
    "compat": ("sekai-compat",),
    "oracle": ("sekai-finance", "hftbacktest"),  # the outside oracle: nox -s oracle
    "spec": (
        "sekai-vector",
        "sekai-finance",
        "sekai-compat",
        "gymnasium",
        "pettingzoo",
        "matplotlib",
    ),
    "compat/test_spaces.py": ("gymnasium",),
    "compat/test_gymnasium_env.py": ("gymnasium",),
    "compat/test_gymnasium_vector.py": ("gymnasium",),
    "compat/test_pettingzoo.py": ("pettingzoo",),
}
_missing: set[str] = set()  # needs of tests this run left out
_present: set[str] = set()  # distributions that tests marked `absent` found installed
_passed: list[str] = []  # node ids this run passed, for the ledger


@cache
def _installed(distribution: str) -> bool:
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _absent(needs: Iterable[str]) -> set[str]:
    return {need for need in needs if not _installed(need)}


def pytest_configure(config: pytest.Config) -> None:
    # A shell starts background jobs with SIGINT ignored, and Python keeps an inherited SIG_IGN:
    # the Ctrl-C tests need Python's own handler however the suite was started.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    config.addinivalue_line(
        "markers", "needs(*distributions): the test runs only where these are installed"
    )
    config.addinivalue_line(
        "markers", "absent(*distributions): the test runs only where none of these is installed"
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Do not import a test folder or module whose distributions are absent."""
    if not collection_path.is_relative_to(_TESTS):
        return None
    absent = _absent(_PATH_NEEDS.get(collection_path.relative_to(_TESTS).as_posix(), ()))
    _missing.update(absent)
    return True if absent else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    keep, dropped = [], []
    for item in items:
        absent = _absent({need for mark in item.iter_markers("needs") for need in mark.args})
        unwanted = {name for mark in item.iter_markers("absent") for name in mark.args}
        present = unwanted - _absent(unwanted)
        (dropped if absent or present else keep).append(item)
        _missing.update(absent)
        _present.update(present)
    ledger = _ledger()
    if ledger is not None and ledger.is_file():
        done = set(ledger.read_text().splitlines())
        dropped += [item for item in keep if item.nodeid in done]
        keep = [item for item in keep if item.nodeid not in done]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    listed = os.environ.get("SEKAI_TEST_ABSENT")
    if listed is not None:
        unexpected = _missing - {name.strip() for name in listed.split(",") if name.strip()}
        if unexpected:
            raise pytest.UsageError(
                f"tests need {sorted(unexpected)}, which this run lacks and "
                f"SEKAI_TEST_ABSENT={listed!r} does not list"
            )


def _ledger() -> Path | None:
    path = os.environ.get("SEKAI_TEST_LEDGER")
    return Path(path) if path else None


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # a strict xfail that failed as expected counts as passed: it said what it should
    if report.when == "call" and (report.passed or hasattr(report, "wasxfail")):
        _passed.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session) -> None:
    ledger = _ledger()
    # xdist workers report to the controller, which writes the ledger once
    if ledger is not None and _passed and not hasattr(session.config, "workerinput"):
        with ledger.open("a") as file:
            file.write("".join(f"{nodeid}\n" for nodeid in _passed))


def pytest_report_header(config: pytest.Config) -> list[str]:
    lines = []
    listed = os.environ.get("SEKAI_TEST_ABSENT")
    if listed:
        lines.append(f"sekai: runs without {listed}")
    ledger = _ledger()
    if ledger is not None and ledger.is_file():
        passed = len(ledger.read_text().splitlines())
        lines.append(f"sekai: leaves out the {passed} tests earlier install sets passed")
    return lines


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _missing:
        terminalreporter.write_line(
            f"sekai: left out the tests that need {', '.join(sorted(_missing))} (not installed)"
        )
    if _present:
        terminalreporter.write_line(
            f"sekai: left out the tests that need {', '.join(sorted(_present))} absent (installed)"
        )
