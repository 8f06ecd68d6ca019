"""Unknown ids: the error type, close matches and the install hint."""

from __future__ import annotations

import importlib.metadata

import pytest
from registry_test_envs import CountingEnv

import sekai
from sekai.registration import UnknownEnvError


def test_unknown_id_error_is_a_key_error_and_a_value_error():
    with pytest.raises(KeyError):
        sekai.spec("test/Nothing-v0")
    with pytest.raises(ValueError):
        sekai.make("test/Nothing-v0")


def test_unknown_id_suggests_close_matches():
    sekai.register("test/MeanReversion-v1", CountingEnv)
    with pytest.raises(UnknownEnvError) as caught:
        sekai.make("test/MeanReversion-v0")
    message = str(caught.value)
    assert message.startswith("no env registered with id 'test/MeanReversion-v0'.")
    assert "Did you mean 'test/MeanReversion-v1'?" in message
    assert "sekai list" in message


def test_unknown_id_without_close_matches_points_to_sekai_list():
    with pytest.raises(UnknownEnvError) as caught:
        sekai.spec("zzz/Qqqqqq-v9")
    assert "Did you mean" not in str(caught.value)
    assert "Run `sekai list`" in str(caught.value)


@pytest.fixture
def without_the_family(monkeypatch):
    """Pretend the meta-distribution ``sekai`` (every sekai distribution) is not installed."""
    real = importlib.metadata.distribution

    def distribution(name):
        if name == "sekai":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)


@pytest.mark.parametrize("env_id", ["Portfolio-v0", "LimitOrderBook-v0", "Tradingg-v0"])
def test_unknown_ids_hint_the_family_install_when_part_of_it_may_be_absent(
    without_the_family, env_id
):
    """Core cannot know what an absent distribution registers: one hint fits every id."""
    sekai.registry._specs.pop(env_id, None)  # as if the finance plugin never registered it
    with pytest.raises(UnknownEnvError) as caught:
        sekai.make(env_id)
    assert str(caught.value).endswith(
        "Run `sekai list` to see every registered id. Envs, names and commands of sekai "
        "distributions that are not installed are missing; pip install sekai installs them all."
    )


def test_no_install_hint_when_every_distribution_is_installed(monkeypatch):
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: object())
    with pytest.raises(UnknownEnvError) as caught:
        sekai.make("Tradingg-v0")
    assert "pip install" not in str(caught.value)
