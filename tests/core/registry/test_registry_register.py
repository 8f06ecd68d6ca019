"""register(), EnvSpec and env id validation."""

from __future__ import annotations

import dataclasses
import pickle

import pytest
from registry_test_envs import CountingEnv

import sekai
from sekai.registration import EnvSpec


@pytest.mark.parametrize(
    ("env_id", "namespace", "name", "version"),
    [
        ("Acrobatic-v1", None, "Acrobatic", 1),
        ("demo/Drift-v0", "demo", "Drift", 0),
        ("ma/QuoteAndTrade-v0", "ma", "QuoteAndTrade", 0),
        ("Unversioned", None, "Unversioned", None),
        ("my-org.labs/Mean_Reversion-v12", "my-org.labs", "Mean_Reversion", 12),
    ],
)
def test_well_formed_ids_register_and_split(env_id, namespace, name, version):
    sekai.register(env_id, CountingEnv)
    spec = sekai.spec(env_id)
    assert (spec.id, spec.namespace, spec.name, spec.version) == (env_id, namespace, name, version)


@pytest.mark.parametrize("env_id", ["", "has space-v0", "a/b/C-v0", "/Name-v0", "ns/", "Név-v0"])
def test_malformed_id_is_a_value_error_naming_it_and_the_form(env_id):
    with pytest.raises(ValueError, match=r"\[namespace/\]Name\[-vN\]") as caught:
        sekai.register(env_id, CountingEnv)
    assert repr(env_id) in str(caught.value)
    assert env_id not in sekai.registry


def test_non_string_id_is_a_type_error():
    with pytest.raises(TypeError, match="must be a str"):
        sekai.register(3, CountingEnv)  # type: ignore[arg-type]


@pytest.mark.parametrize("entry_point", ["no_colon", "pkg.mod:", ":Attr", "pkg mod:Attr"])
def test_malformed_string_entry_point_is_a_value_error(entry_point):
    with pytest.raises(ValueError, match="module:Attr"):
        sekai.register("test/Bad-v0", entry_point)


def test_entry_point_that_is_neither_callable_nor_string_is_a_type_error():
    with pytest.raises(TypeError, match="entry_point of 'test/Bad-v0'"):
        sekai.register("test/Bad-v0", 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="vector_entry_point"):
        sekai.register("test/Bad-v0", CountingEnv, vector_entry_point=42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ("ab", "must be a mapping, got 'ab'"),
        ([("start", 1)], "must be a mapping"),
        ({1: "x"}, r"must map keyword-argument names \(str\) to values, got the key 1"),
    ],
)
def test_kwargs_that_cannot_be_keyword_arguments_are_a_type_error(kwargs, problem):
    with pytest.raises(TypeError, match=f"kwargs of 'test/Bad-v0' {problem}"):
        sekai.register("test/Bad-v0", CountingEnv, kwargs=kwargs)
    assert "test/Bad-v0" not in sekai.registry


@pytest.mark.parametrize("steps", [0, -3, 1.5, True])
def test_max_episode_steps_must_be_a_positive_int(steps):
    with pytest.raises(ValueError, match="max_episode_steps"):
        sekai.register("test/Bad-v0", CountingEnv, max_episode_steps=steps)


def test_registration_keeps_every_field_and_no_distribution():
    defaults = {"start": 3}
    sekai.register(
        "test/Full-v2",
        CountingEnv,
        vector_entry_point="somewhere.vec:CountingVecEnv",
        max_episode_steps=7,
        kwargs=defaults,
    )
    defaults["start"] = 100  # the registry keeps its own copy
    spec = sekai.spec("test/Full-v2")
    assert spec == EnvSpec(
        "test/Full-v2",
        CountingEnv,
        vector_entry_point="somewhere.vec:CountingVecEnv",
        max_episode_steps=7,
        kwargs={"start": 3},
    )
    assert spec.distribution is None


def test_reregistering_warns_and_replaces():
    sekai.register("test/Twice-v0", CountingEnv, kwargs={"start": 1})
    with pytest.warns(UserWarning, match="'test/Twice-v0' was already registered"):
        sekai.register("test/Twice-v0", CountingEnv, kwargs={"start": 2})
    assert sekai.spec("test/Twice-v0").kwargs == {"start": 2}


def test_spec_is_frozen_and_hashable():
    spec = EnvSpec("test/Frozen-v0", CountingEnv, kwargs={"start": 1})
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.id = "other"  # type: ignore[misc]
    assert hash(spec) == hash(EnvSpec("test/Frozen-v0", CountingEnv, kwargs={"start": 2}))


def test_repr_shows_id_and_time_limit_only():
    assert repr(EnvSpec("ma/QuoteAndTrade-v0", CountingEnv)) == "EnvSpec(id='ma/QuoteAndTrade-v0')"
    full = EnvSpec(
        "demo/Drift-v0",
        "pkg.envs:Drift",
        vector_entry_point="pkg.envs:DriftVecEnv",
        max_episode_steps=100,
        kwargs={"sigma": 0.1},
        distribution="pkg",
    )
    assert repr(full) == "EnvSpec(id='demo/Drift-v0', max_episode_steps=100)"


def test_registry_is_a_mapping_of_ids_to_specs():
    sekai.register("test/Mapped-v0", CountingEnv)
    assert "test/Mapped-v0" in sekai.registry
    assert "test/Mapped-v0" in list(sekai.registry)
    assert sekai.registry["test/Mapped-v0"] is sekai.spec("test/Mapped-v0")
    assert sekai.registry.get("test/Absent-v0") is None
    assert "test/Absent-v0" not in sekai.registry
    assert len(sekai.registry) == len(list(sekai.registry))


def test_spec_survives_pickling_for_worker_processes():
    spec = EnvSpec(
        "test/Pickled-v0", CountingEnv, max_episode_steps=5, kwargs={"start": 2}, distribution="x"
    )
    assert pickle.loads(pickle.dumps(spec)) == spec
