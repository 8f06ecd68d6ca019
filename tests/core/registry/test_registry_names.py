"""Plugins contribute public names (``sekai.X``, ``sekai.testing.X``) and ``sekai`` commands."""

from __future__ import annotations

import subprocess
import sys

import pytest

import sekai
import sekai.cli
import sekai.testing
from sekai import registration
from sekai.registration import PluginWarning, PublicName, Registry

NAMES_PLUGIN = """
import argparse

from sekai.hookspecs import hookimpl

@hookimpl
def sekai_register_names(register):
    register("CountingEnv", "registry_test_envs")
    register("check_counting", "registry_fake_names_kit", namespace="sekai.testing")

@hookimpl
def sekai_add_commands(commands):
    command = commands.add_parser("fake-hello", help="say hello")
    command.add_argument("who")
    command.set_defaults(run=lambda args: print(f"hello {args.who}") or 0)
"""


@pytest.fixture
def names_plugin(fake_plugin, tmp_path, monkeypatch):
    """A third-party plugin adding names to sekai and sekai.testing and a command, loaded into
    a fresh registry that ``sekai``, ``sekai.testing`` and ``sekai.cli`` use."""
    fake_plugin("fake-names", "registry_fake_names", NAMES_PLUGIN)
    (tmp_path / "registry_fake_names_kit.py").write_text("def check_counting():\n    return 7\n")
    fresh = Registry()
    for module in (registration, sekai.testing, sekai.cli):
        monkeypatch.setattr(module, "registry", fresh)
    monkeypatch.delitem(vars(sekai), "CountingEnv", raising=False)
    monkeypatch.delitem(vars(sekai.testing), "check_counting", raising=False)
    yield fresh
    sys.modules.pop("registry_fake_names_kit", None)


def test_a_plugin_adds_names_to_sekai_and_sekai_testing(names_plugin):
    from registry_test_envs import CountingEnv

    assert sekai.CountingEnv is CountingEnv
    assert names_plugin.names()["CountingEnv"] == PublicName(
        "CountingEnv", "registry_test_envs", "sekai", "fake-names"
    )
    assert sekai.testing.check_counting() == 7
    assert "CountingEnv" in dir(sekai) and "check_counting" in dir(sekai.testing)
    namespace: dict[str, object] = {}
    exec("from sekai import *", namespace)
    assert namespace["CountingEnv"] is CountingEnv


def test_a_name_for_its_own_submodule_is_that_module():
    assert PublicName("registration", "sekai.registration").load() is registration
    assert PublicName("registry", "sekai.registration").load() is registration.registry


def test_a_plugin_adds_a_command(names_plugin, capsys):
    assert sekai.cli.main(["fake-hello", "world"]) == 0
    assert capsys.readouterr().out == "hello world\n"


def test_a_plugin_whose_command_fails_warns_and_the_others_still_work(
    fake_plugin, monkeypatch, capsys
):
    fake_plugin(
        "fake-bad-command",
        "registry_fake_bad_command",
        "from sekai.hookspecs import hookimpl\n\n"
        "@hookimpl\n"
        "def sekai_add_commands(commands):\n"
        "    commands.add_parser('list')  # taken: argparse refuses it\n",
    )
    monkeypatch.setattr(sekai.cli, "registry", Registry())
    with pytest.warns(PluginWarning, match="'fake-bad-command:main' failed in sekai_add_commands"):
        assert sekai.cli.main(["list", "--json"]) == 0
    assert '"id": "CartPole-v1"' in capsys.readouterr().out


def test_core_names_are_not_replaced_by_a_plugin(fake_plugin, monkeypatch):
    fake_plugin(
        "fake-shadow",
        "registry_fake_shadow",
        "from sekai.hookspecs import hookimpl\n\n"
        "@hookimpl\n"
        "def sekai_register_names(register):\n"
        "    register('Box', 'registry_test_envs')\n",
    )
    monkeypatch.setattr(registration, "registry", Registry())
    monkeypatch.delitem(vars(sekai), "Box", raising=False)
    assert sekai.Box.__module__ == "sekai.spaces.box"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("_private", "x.y"), "an identifier not starting with '_'"),
        (("good", "not a module"), "must be a dotted module name"),
        (("good", "x.y", "sekai.vector"), "namespace must be one of"),
    ],
)
def test_a_bad_public_name_is_a_value_error(arguments, message):
    with pytest.raises(ValueError, match=message):
        PublicName(*arguments)


def test_a_bad_name_fails_its_plugin_only(fake_plugin):
    fake_plugin(
        "fake-bad-name",
        "registry_fake_bad_name",
        "from sekai.hookspecs import hookimpl\n\n"
        "@hookimpl\n"
        "def sekai_register_envs(register):\n"
        "    register('fake/Bad-v0', 'registry_test_envs:CountingEnv')\n\n"
        "@hookimpl\n"
        "def sekai_register_names(register):\n"
        "    register('_hidden', 'registry_test_envs')\n",
    )
    fresh = Registry()
    with pytest.warns(PluginWarning, match="fake-bad-name.*not starting with '_'"):
        assert "fake/Bad-v0" not in fresh
    assert "CartPole-v1" in fresh


def test_an_unknown_name_is_an_attribute_error_and_private_names_load_no_plugin():
    code = (
        "import sys, sekai\n"
        "print(hasattr(sekai, '_nope'), hasattr(sekai, '__wrapped__'), 'pluggy' in sys.modules)\n"
        "print(hasattr(sekai, 'nope'), 'pluggy' in sys.modules)\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert output.split() == ["False", "False", "False", "False", "True"]


def test_a_submodule_is_an_attribute_without_a_plugin():
    code = "import sys, sekai\nprint(sekai.checks.__name__, 'pluggy' in sys.modules)\n"
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert output.split() == ["sekai.checks", "False"]
