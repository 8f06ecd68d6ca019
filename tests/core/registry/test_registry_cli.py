"""The ``sekai`` command line and ``sekai list``."""

from __future__ import annotations

import subprocess
import sys

import pytest
from registry_test_envs import CountingEnv

import sekai
from sekai.cli import main


def _list_output(capsys) -> str:
    assert main(["list"]) == 0
    return capsys.readouterr().out


def _block(output: str, header: str) -> list[str]:
    """The indented lines under ``header:`` in the output of ``sekai list``."""
    lines = output.splitlines()
    start = lines.index(f"{header}:") + 1
    block = []
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        block.append(line)
    return block


def test_list_groups_ids_by_distribution(capsys):
    output = _list_output(capsys)
    assert _block(output, "sekai-demo-plugin") == ["  demo/RandomWalk-v0"]
    assert "  CartPole-v1" in _block(output, "sekai-core")


def test_list_prints_every_registered_id(capsys):
    output = _list_output(capsys)
    listed = {line.split()[0] for line in output.splitlines() if line.startswith("  ")}
    assert listed == set(sekai.registry)


def test_list_sorts_ids_and_marks_native_vector_versions(capsys):
    sekai.register("zz/Beta-v0", CountingEnv, vector_entry_point="pkg.vec:BetaVecEnv")
    sekai.register("zz/Alpha-v10", CountingEnv)
    sekai.register("zz/Alpha-v2", CountingEnv)
    sekai.register("Gamma-v0", CountingEnv)
    block = _block(_list_output(capsys), "registered at runtime")
    assert block == [
        "  Gamma-v0",
        "  zz/Alpha-v2",
        "  zz/Alpha-v10",
        "  zz/Beta-v0    [native vec]",
    ]


def test_sekai_without_a_command_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as caught:
        main([])
    assert caught.value.code == 2
    assert "usage: sekai" in capsys.readouterr().err


def test_python_dash_m_sekai_lists_envs():
    result = subprocess.run(
        [sys.executable, "-m", "sekai", "list"], capture_output=True, text=True, check=True
    )
    assert "  demo/RandomWalk-v0" in result.stdout.splitlines()


def test_importing_sekai_dunder_main_does_not_run_the_command():
    result = subprocess.run(
        [sys.executable, "-c", "import sekai.__main__; print('imported')"],
        capture_output=True,
        text=True,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "imported\n", "")
