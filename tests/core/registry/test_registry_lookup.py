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
def without_finance(monkeypatch):
    """Pretend the sekai-finance distribution is not installed."""
    real = importlib.metadata.distribution

    def distribution(name):
        if name == "sekai-finance":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)


@pytest.mark.parametrize("env_id", ["Trading-v0", "Portfolio-v0", "MarketMaking-v0"])
def test_finance_ids_hint_the_install_command_when_finance_is_absent(without_finance, env_id):
    sekai.registry._specs.pop(env_id, None)  # as if the finance plugin never registered it
    with pytest.raises(UnknownEnvError, match="pip install sekai-finance") as caught:
        sekai.make(env_id)
    assert f"{env_id!r} is provided by the sekai-finance distribution" in str(caught.value)


def test_finance_hint_only_for_finance_ids(without_finance):
    with pytest.raises(UnknownEnvError) as caught:
        sekai.make("Tradingg-v0")
    assert "pip install" not in str(caught.value)


@pytest.mark.needs("sekai-finance")
def test_no_install_hint_when_finance_is_installed():
    sekai.registry._specs.pop("OptimalExecution-v0", None)
    with pytest.raises(UnknownEnvError) as caught:
        sekai.make("OptimalExecution-v0")
    assert "pip install" not in str(caught.value)
