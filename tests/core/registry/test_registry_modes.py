"""Vectorization modes registered by plugins through sekai_register_vectorization_modes."""

from __future__ import annotations

import json

import pytest

from sekai.cli import main
from sekai.registration import PluginWarning, Registry, VectorizationMode

MODE_PLUGIN = """
from sekai.hookspecs import hookimpl

@hookimpl
def sekai_register_vectorization_modes(register):
    register("fake-mode", "fake_backend.module:FakeVecEnv")
"""


@pytest.mark.needs("sekai-vector")
def test_a_plugin_registers_a_mode_under_its_distribution(fake_plugin):
    fake_plugin("fake-backend", "registry_fake_mode", MODE_PLUGIN)
    modes = Registry().vectorization_modes
    assert modes["fake-mode"] == VectorizationMode(
        "fake-mode", "fake_backend.module:FakeVecEnv", "fake-backend"
    )
    assert {"sync", "async", "proc"} <= set(modes)  # sekai-vector's, through the same hook
    assert modes["proc"].distribution == "sekai-vector"


@pytest.mark.parametrize(
    ("registration", "reason"),
    [
        ('register("native", "a.b:C")', "'native' is reserved"),
        ('register("two words", "a.b:C")', "mode name must be a str"),
        ('register("ok", "not an entry point")', "must be a 'package.module:Class' string"),
    ],
)
@pytest.mark.needs("sekai-vector")
def test_a_bad_mode_makes_the_plugin_fail_with_a_warning(fake_plugin, registration, reason):
    source = MODE_PLUGIN.replace('register("fake-mode", "fake_backend.module:FakeVecEnv")', "")
    fake_plugin("bad-backend", "registry_bad_mode", source + f"    {registration}\n")
    fresh = Registry()
    with pytest.warns(PluginWarning, match=reason):
        modes = fresh.vectorization_modes
    assert "ok" not in modes
    assert "sync" in modes  # the other plugins still load


def test_two_plugins_registering_one_mode_warn_and_the_later_wins(fake_plugin):
    fake_plugin("fake-a-backend", "registry_fake_mode_a", MODE_PLUGIN)
    fake_plugin("fake-b-backend", "registry_fake_mode_b", MODE_PLUGIN)
    with pytest.warns(UserWarning, match="mode 'fake-mode' was already registered by fake-a"):
        modes = Registry().vectorization_modes
    assert modes["fake-mode"].distribution == "fake-b-backend"


@pytest.mark.needs("sekai-vector", "sekai-demo-backend")
def test_sekai_list_modes_shows_every_mode_by_distribution(capsys):
    assert main(["list", "--modes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("native: an env's own vector implementation")
    start = lines.index("sekai-vector:")
    end = next(
        (i for i in range(start + 1, len(lines)) if not lines[i].startswith("  ")), len(lines)
    )
    block = lines[start + 1 : end]  # with sekai-vector[ray] installed, "ray" is listed too
    assert block == sorted(block)
    assert {
        "  async  sekai.vector.async_:AsyncVecEnv",
        "  proc   sekai.vector.proc:ProcVecEnv",
        "  sync   sekai.vector.sync:SyncVecEnv",
    } <= set(block)
    demo = lines.index("sekai-demo-backend:")
    assert lines[demo + 1] == "  demo-threads  sekai_demo_backend.threads:ThreadVecEnv"


@pytest.mark.needs("sekai-vector")
def test_sekai_list_modes_json_gives_each_mode_with_its_entry_point(capsys):
    assert main(["list", "--modes", "--json"]) == 0
    records = {record["name"]: record for record in json.loads(capsys.readouterr().out)}
    assert records["sync"] == {
        "name": "sync",
        "distribution": "sekai-vector",
        "entry_point": "sekai.vector.sync:SyncVecEnv",
    }
    assert {"async", "proc"} <= set(records)
