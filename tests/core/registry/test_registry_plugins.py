"""Plugin discovery: lazy loading, distributions, broken plugins, user registrations."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
from registry_test_envs import CountingEnv

import sekai
from sekai import registration
from sekai.registration import EnvSpec, PluginWarning, Registry

GOOD_PLUGIN = """
from sekai.hookspecs import hookimpl

@hookimpl
def sekai_register_envs(register):
    register("fake/Good-v0", "registry_test_envs:CountingEnv", kwargs={"start": 7})
    register("fake/Native-v0", "registry_test_envs:CountingEnv", vector_entry_point="x.y:Vec")
"""

HALF_BROKEN_PLUGIN = """
from sekai.hookspecs import hookimpl

@hookimpl
def sekai_register_envs(register):
    register("fake/Partial-v0", "registry_test_envs:CountingEnv")
    raise RuntimeError("database unavailable")
"""


def test_plugins_load_on_first_use_not_at_import_and_import_nothing_heavy():
    code = (
        "import sys, sekai, sekai.registration\n"
        "modules = ['sekai_demo_plugin.plugin', 'sekai_demo_plugin.envs', 'numpy']\n"
        "def loaded(): return [module in sys.modules for module in modules]\n"
        "print(*loaded())\n"
        "sekai.spec('demo/RandomWalk-v0')\n"
        "print(*loaded())\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    # discovering the plugins imports only their tiny plugin modules: no env module, no numpy
    assert output.split() == ["False", "False", "False", "True", "False", "False"]


def test_plugin_registrations_record_their_distribution(fake_plugin):
    fake_plugin("fake-good-envs", "registry_fake_good", GOOD_PLUGIN)
    fresh = Registry()
    assert fresh["fake/Good-v0"] == EnvSpec(
        "fake/Good-v0",
        "registry_test_envs:CountingEnv",
        kwargs={"start": 7},
        distribution="fake-good-envs",
    )
    assert fresh["demo/RandomWalk-v0"].distribution == "sekai-demo-plugin"
    assert fresh["CartPole-v1"].distribution == "sekai-core"


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        (None, "ModuleNotFoundError"),
        ("raise ImportError('needs libfoo')", "ImportError: needs libfoo"),
        ("1 / 0", "ZeroDivisionError"),
        (HALF_BROKEN_PLUGIN, "RuntimeError: database unavailable"),
        (
            "from sekai.hookspecs import hookimpl\n"
            "@hookimpl\ndef sekai_register_envs(register, extra): pass\n",
            "PluginValidationError",
        ),
        (  # without @hookimpl pluggy ignores the function: the plugin would register nothing
            "def sekai_register_envs(register):\n"
            "    register('fake/Partial-v0', 'registry_test_envs:CountingEnv')\n",
            "implements no sekai hook",
        ),
        (
            "from sekai.hookspecs import hookimpl\n"
            "@hookimpl\ndef sekai_register_env(register): pass\n",
            "unknown hook 'sekai_register_env'",
        ),
        ("raise SystemExit(3)", "SystemExit: 3"),
    ],
    ids=[
        "missing-module",
        "import-error",
        "error-at-import",
        "hook-raises",
        "bad-hook",
        "no-hookimpl",
        "misspelt-hook",
        "exits-at-import",
    ],
)
def test_broken_plugin_warns_with_name_and_distribution_and_others_load(
    fake_plugin, source, reason
):
    fake_plugin("fake-broken-envs", "registry_fake_broken", source, name="broken")
    fake_plugin("fake-good-envs", "registry_fake_good", GOOD_PLUGIN)
    fresh = Registry()
    with pytest.warns(PluginWarning) as caught:
        assert "fake/Good-v0" in fresh
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "'broken'" in message
    assert "'fake-broken-envs'" in message
    assert reason in message
    assert "fake/Partial-v0" not in fresh  # a failing plugin registers nothing
    assert "demo/RandomWalk-v0" in fresh


def test_plugins_are_loaded_once(fake_plugin):
    fake_plugin("fake-broken-envs", "registry_fake_broken", "1 / 0", name="broken")
    fresh = Registry()
    with pytest.warns(PluginWarning):
        len(fresh)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # loading the plugins again would warn again
        fresh.add(EnvSpec("test/After-v0", CountingEnv))
        assert "test/After-v0" in fresh


def test_user_registration_before_first_use_beats_the_plugins(monkeypatch):
    monkeypatch.setattr(registration, "registry", Registry())
    with pytest.warns(UserWarning, match="already registered by sekai-demo-plugin"):
        sekai.register("demo/RandomWalk-v0", CountingEnv, kwargs={"start": 3})
    env = sekai.make("demo/RandomWalk-v0")
    assert type(env.unwrapped) is CountingEnv
    assert env.start == 3
    assert sekai.spec("demo/RandomWalk-v0").distribution is None


def test_two_plugins_registering_one_id_warn_and_the_later_wins(fake_plugin):
    fake_plugin("fake-a-envs", "registry_fake_a", GOOD_PLUGIN)
    fake_plugin("fake-b-envs", "registry_fake_b", GOOD_PLUGIN)
    fresh = Registry()
    with pytest.warns(UserWarning) as caught:
        len(fresh)
    assert [str(warning.message) for warning in caught] == [
        f"env id {env_id!r} was already registered by fake-a-envs; "
        "replacing it with the new registration by fake-b-envs"
        for env_id in ["fake/Good-v0", "fake/Native-v0"]
    ]
    assert fresh["fake/Good-v0"].distribution == "fake-b-envs"


def test_one_plugin_registering_an_id_twice_warns_and_the_later_wins(fake_plugin):
    twice = GOOD_PLUGIN + (
        "    register('fake/Good-v0', 'registry_test_envs:CountingEnv', kwargs={'start': 8})\n"
    )
    fake_plugin("fake-twice-envs", "registry_fake_twice", twice)
    fresh = Registry()
    with pytest.warns(UserWarning, match="'fake/Good-v0' was already registered by fake-twice"):
        len(fresh)
    assert fresh["fake/Good-v0"].kwargs == {"start": 8}


def test_with_warnings_as_errors_a_broken_plugin_raises_once_and_the_others_still_load(
    fake_plugin,
):
    fake_plugin("aaa-broken-envs", "registry_fake_broken", "1 / 0")  # sorted before the others
    fake_plugin("fake-good-envs", "registry_fake_good", GOOD_PLUGIN)
    fresh = Registry()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(PluginWarning, match="'aaa-broken-envs'"):
            len(fresh)
        assert {"fake/Good-v0", "CartPole-v1", "demo/RandomWalk-v0"} <= set(fresh)


def test_loading_interrupted_by_ctrl_c_is_redone_on_the_next_use(fake_plugin, monkeypatch):
    monkeypatch.delenv("SEKAI_TEST_INTERRUPTED", raising=False)
    slow = (
        "import os\n"
        "if not os.environ.get('SEKAI_TEST_INTERRUPTED'):\n"
        "    os.environ['SEKAI_TEST_INTERRUPTED'] = '1'\n"
        "    raise KeyboardInterrupt\n" + GOOD_PLUGIN
    )
    fake_plugin("aaa-slow-envs", "registry_fake_slow", slow)  # sorted before sekai-core
    fresh = Registry()
    with pytest.raises(KeyboardInterrupt):
        len(fresh)
    assert {"fake/Good-v0", "CartPole-v1", "demo/RandomWalk-v0"} <= set(fresh)
    assert fresh["fake/Good-v0"].distribution == "aaa-slow-envs"


def test_a_plugin_warning_points_at_the_users_line_through_a_mapping_method(fake_plugin):
    fake_plugin("fake-broken-envs", "registry_fake_broken", "1 / 0", name="broken")
    fresh = Registry()
    with pytest.warns(PluginWarning) as caught:
        fresh.get("CartPole-v1")  # Mapping.get: frozen stdlib code between the user and sekai
    assert caught[0].filename == __file__
