"""The install sets' ledger (tests/conftest.py): a test that passed in one set of a nox run is
left out of the later ones, and nothing else is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
MODULE = "tests/core/test_env_not_implemented.py"


def _pytest(ledger: Path, *args: str) -> str:
    """pytest's output for ``args``, run in a fresh process keeping the ledger at ``ledger``."""
    command = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider"]
    run = subprocess.run(
        [*command, "-n", "0", "-q", *args],
        cwd=ROOT,
        env={**os.environ, "SEKAI_TEST_LEDGER": str(ledger)},
        capture_output=True,
        text=True,
        check=False,
    )
    return run.stdout


def test_a_passed_test_runs_once_per_ledger(tmp_path):
    ledger = tmp_path / "passed"
    first = _pytest(ledger, MODULE)
    assert "6 passed" in first, first
    passed = ledger.read_text().splitlines()
    assert len(passed) == 6 and all(line.startswith(f"{MODULE}::") for line in passed)
    again = _pytest(ledger, MODULE)
    assert "6 deselected" in again and "passed" not in again.splitlines()[-1], again


def test_only_the_tests_that_ran_are_entered(tmp_path):
    ledger = tmp_path / "passed"
    first = _pytest(ledger, MODULE, "-k", "super_reset")
    assert "1 passed, 5 deselected" in first, first
    assert ledger.read_text().splitlines() == [
        f"{MODULE}::test_super_reset_says_to_seed_with_set_rng"
    ]
    rest = _pytest(ledger, MODULE)
    assert "5 passed, 1 deselected" in rest, rest
    assert len(set(ledger.read_text().splitlines())) == 6
