"""make(): kwargs, env.spec, TimeLimit, string entry points, multi-agent envs."""

from __future__ import annotations

import sys

import pytest
from registry_test_envs import CountingEnv, TwoAgentEnv

import sekai
from sekai.registration import EnvSpec


def test_make_passes_registered_kwargs_updated_by_the_callers():
    sekai.register("test/Counting-v0", CountingEnv, kwargs={"start": 5, "colour": "red"})
    env = sekai.make("test/Counting-v0", colour="blue", size=2)
    assert isinstance(env.unwrapped, CountingEnv)
    assert (env.start, env.extra) == (5, {"colour": "blue", "size": 2})


def test_env_spec_holds_the_overrides_and_registry_entry_is_unchanged():
    sekai.register("test/Counting-v0", CountingEnv, kwargs={"start": 5})
    env = sekai.make("test/Counting-v0", start=9)
    assert env.spec == EnvSpec("test/Counting-v0", CountingEnv, kwargs={"start": 9})
    assert sekai.spec("test/Counting-v0").kwargs == {"start": 5}
    assert sekai.make(env.spec).start == 9  # the env's spec rebuilds the same env


def test_without_time_limit_make_returns_the_env_in_order_enforcing_only():
    sekai.register("test/Counting-v0", CountingEnv)
    env = sekai.make("test/Counting-v0")
    assert type(env) is sekai.OrderEnforcing and type(env.env) is CountingEnv
    assert env.spec == sekai.spec("test/Counting-v0")


def test_envs_share_no_spec_and_no_registered_default_with_each_other_or_the_registry():
    sekai.register("test/Counting-v0", CountingEnv, kwargs={"history": []})
    first, second = sekai.make("test/Counting-v0"), sekai.make("test/Counting-v0")
    first.extra["history"].append(1)  # an env changing its own list default
    first.spec.kwargs["start"] = 9  # or its own spec
    assert second.extra["history"] == []
    assert sekai.spec("test/Counting-v0").kwargs == {"history": []}
    assert sekai.make("test/Counting-v0").start == 0


@pytest.mark.parametrize("built", [None, 5, CountingEnv])
def test_entry_point_that_builds_no_env_is_a_type_error_naming_it(built):
    sekai.register("test/NotAnEnv-v0", lambda: built)
    with pytest.raises(TypeError, match=r"of 'test/NotAnEnv-v0' returned .* not a sekai\.Env"):
        sekai.make("test/NotAnEnv-v0")


def test_registered_time_limit_wraps_in_time_limit_and_truncates():
    sekai.register("test/Limited-v0", CountingEnv, max_episode_steps=3)
    env = sekai.make("test/Limited-v0")
    assert isinstance(env, sekai.OrderEnforcing) and isinstance(env.env, sekai.TimeLimit)
    assert isinstance(env.unwrapped, CountingEnv)
    env.reset()
    truncated = [env.step(0).truncated for _ in range(3)]
    assert truncated == [False, False, True]


def test_spec_is_on_the_unwrapped_env_and_visible_from_the_wrapper():
    sekai.register("test/Limited-v0", CountingEnv, max_episode_steps=3, kwargs={"start": 1})
    env = sekai.make("test/Limited-v0", start=2)
    assert env.unwrapped.spec is env.spec
    assert env.spec.kwargs == {"start": 2}
    assert env.spec.max_episode_steps == 3


@pytest.mark.parametrize("registered", [None, 50])
def test_callers_max_episode_steps_wins(registered):
    sekai.register("test/Limited-v0", CountingEnv, max_episode_steps=registered)
    env = sekai.make("test/Limited-v0", max_episode_steps=2)
    assert env.max_episode_steps == 2
    assert env.spec.max_episode_steps == 2
    env.reset()
    assert [env.step(0).truncated for _ in range(2)] == [False, True]


def test_bad_max_episode_steps_at_make_is_a_value_error():
    sekai.register("test/Counting-v0", CountingEnv)
    with pytest.raises(ValueError, match="max_episode_steps"):
        sekai.make("test/Counting-v0", max_episode_steps=0)


def test_make_from_an_unregistered_spec():
    spec = EnvSpec("test/Loose-v0", CountingEnv, max_episode_steps=4, kwargs={"start": 1})
    env = sekai.make(spec, start=3)
    assert "test/Loose-v0" not in sekai.registry
    assert (env.max_episode_steps, env.unwrapped.start) == (4, 3)
    assert sekai.make(spec).spec == spec


def test_multi_agent_env_builds_without_time_limit():
    sekai.register("ma/QuoteAndTrade-v0", TwoAgentEnv)
    env = sekai.make("ma/QuoteAndTrade-v0", n_steps=10)
    assert type(env) is TwoAgentEnv
    assert (str(env.spec), env.n_steps) == ("EnvSpec(id='ma/QuoteAndTrade-v0')", 10)


def test_multi_agent_env_with_max_episode_steps_is_a_type_error_and_is_closed(monkeypatch):
    built = []
    monkeypatch.setattr(TwoAgentEnv, "__init__", lambda self: built.append(self))
    sekai.register("ma/Limited-v0", TwoAgentEnv, max_episode_steps=10)
    with pytest.raises(TypeError, match="TimeLimit is a single-agent wrapper"):
        sekai.make("ma/Limited-v0")
    assert built[0].closed


@pytest.fixture
def env_module(tmp_path, monkeypatch):
    """A module on sys.path that no test has imported yet."""
    (tmp_path / "registry_lazy_env.py").write_text(
        "from registry_test_envs import CountingEnv\n\nclass LazyEnv(CountingEnv):\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "registry_lazy_env"
    sys.modules.pop("registry_lazy_env", None)


def test_string_entry_point_is_imported_only_when_made(env_module):
    sekai.register("test/Lazy-v0", f"{env_module}:LazyEnv")
    assert env_module not in sys.modules
    env = sekai.make("test/Lazy-v0", start=4)
    assert type(env.unwrapped).__name__ == "LazyEnv"
    assert env.start == 4


def test_string_entry_point_with_a_missing_attribute_names_it(env_module):
    sekai.register("test/Lazy-v0", f"{env_module}:Missing")
    with pytest.raises(AttributeError, match=f"'{env_module}:Missing'"):
        sekai.make("test/Lazy-v0")


def test_string_entry_point_with_a_missing_module_raises_module_not_found():
    sekai.register("test/Lazy-v0", "registry_no_such_module:Env")
    with pytest.raises(ModuleNotFoundError, match="registry_no_such_module"):
        sekai.make("test/Lazy-v0")


def test_string_entry_point_naming_something_not_callable_is_a_type_error(env_module):
    sekai.register("test/Lazy-v0", f"{env_module}:__name__")
    with pytest.raises(TypeError, match=f"'{env_module}:__name__' names str .* not callable"):
        sekai.make("test/Lazy-v0")


def test_an_error_from_the_entry_point_keeps_its_type_and_names_the_id_and_kwargs():
    def build(sigma: float) -> CountingEnv:
        raise ValueError("sigma must be positive")

    sekai.register("test/Raises-v0", build, kwargs={"sigma": 1.0})
    with pytest.raises(ValueError) as caught:
        sekai.make("test/Raises-v0", sigma=-1)
    assert str(caught.value) == "sigma must be positive"
    assert caught.value.__notes__ == [
        "raised by sekai.make('test/Raises-v0') with kwargs {'sigma': -1}"
    ]
    sekai.register("test/Lazy-v0", "registry_no_such_module:Env")
    with pytest.raises(ModuleNotFoundError) as caught:
        sekai.make("test/Lazy-v0")
    assert caught.value.__notes__ == ["raised by sekai.make('test/Lazy-v0') with kwargs {}"]
