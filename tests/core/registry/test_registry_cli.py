"""The ``sekai`` command line and ``sekai list``."""

from __future__ import annotations

import json
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


def _ids(block: list[str]) -> list[str]:
    return [line.split()[0] for line in block]


def test_list_groups_ids_by_distribution(capsys):
    output = _list_output(capsys)
    assert _ids(_block(output, "sekai-demo-plugin")) == ["demo/RandomWalk-v0"]
    assert "CartPole-v1" in _ids(_block(output, "sekai-core"))


def test_list_describes_each_env_by_its_docstrings_first_line(capsys):
    (line,) = _block(_list_output(capsys), "sekai-demo-plugin")
    assert line == (
        "  demo/RandomWalk-v0  "
        "Trade one asset whose log price moves by normal(drift, sigma) each step."
    )  # the docstring's ``normal(drift, sigma)``, without its reST markup


class WrappedSummaryEnv(CountingEnv):
    """A summary that wraps
    onto a second line; see :mod:`sekai.core`.

    Details that sekai list leaves out.
    """


def test_a_summary_that_wraps_is_listed_on_one_line(capsys):
    sekai.register("Wrapped-v0", WrappedSummaryEnv)
    block = _block(_list_output(capsys), "registered at runtime")
    assert "  Wrapped-v0  A summary that wraps onto a second line; see sekai.core." in block


def test_an_env_that_cannot_be_loaded_is_listed_with_its_error(capsys):
    sekai.register("Broken-v0", "no_such_module_xyz:Env")
    sekai.register("Fine-v0", CountingEnv)
    block = _block(_list_output(capsys), "registered at runtime")
    assert "  Broken-v0  (cannot load 'no_such_module_xyz:Env': ModuleNotFoundError)" in block
    assert any(line.startswith("  Fine-v0    Counts steps;") for line in block)


def test_list_json_gives_every_id_with_its_fields(capsys):
    sekai.register("zz/Beta-v0", CountingEnv, vector_entry_point="pkg.vec:BetaVecEnv")
    assert main(["list", "--json"]) == 0
    records = {record["id"]: record for record in json.loads(capsys.readouterr().out)}
    assert set(records) == set(sekai.registry)
    assert records["CartPole-v1"] == {
        "id": "CartPole-v1",
        "distribution": "sekai-core",
        "native_vec": False,
        "max_episode_steps": 500,
        "description": "The cart-pole task of Barto, Sutton and Anderson (1983), "
        "as gymnasium's CartPole-v1.",
    }
    assert records["zz/Beta-v0"]["native_vec"] is True
    assert records["zz/Beta-v0"]["distribution"] is None


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
    described = "Counts steps; keeps its constructor arguments so tests can see what make() passed."
    assert block == [
        "  Gamma-v0                    " + described,
        "  zz/Alpha-v2                 " + described,
        "  zz/Alpha-v10                " + described,
        "  zz/Beta-v0    [native vec]  " + described,
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
    assert "demo/RandomWalk-v0" in _ids(_block(result.stdout, "sekai-demo-plugin"))


def test_importing_sekai_dunder_main_does_not_run_the_command():
    result = subprocess.run(
        [sys.executable, "-c", "import sekai.__main__; print('imported')"],
        capture_output=True,
        text=True,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "imported\n", "")
