"""A name of a sekai distribution that is not installed names that distribution and its install.

sekai-core's table of which distribution provides each of the family's names must agree with
what the distributions' plugins register, or the error would send users to the wrong package.
"""

from __future__ import annotations

import importlib.metadata
import re

import pytest

import sekai
from sekai import registration
from sekai.registration import Registry

FAMILY = ("sekai-core", "sekai-vector", "sekai-finance", "sekai-compat")


def _missing(qualified: str, distribution: str) -> str:
    return re.escape(
        f"{qualified} is provided by {distribution}, which is not installed: "
        f"pip install {distribution}"
    )


@pytest.mark.absent("sekai-vector")
@pytest.mark.parametrize("name", ["make_vec", "SyncVecEnv", "VecNormalizeReward", "vector"])
def test_a_vector_name_without_sekai_vector_names_it_and_its_install(name):
    with pytest.raises(AttributeError, match=_missing(f"sekai.{name}", "sekai-vector")):
        getattr(sekai, name)


@pytest.mark.absent("sekai-vector")
def test_a_vector_test_helper_without_sekai_vector_names_it_and_its_install():
    with pytest.raises(
        AttributeError, match=_missing("sekai.testing.check_vec_env", "sekai-vector")
    ):
        sekai.testing.check_vec_env  # noqa: B018


@pytest.mark.absent("sekai-compat")
def test_to_sb3_without_sekai_compat_names_it_and_its_install():
    with pytest.raises(AttributeError, match=_missing("sekai.compat", "sekai-compat")):
        sekai.compat.to_sb3  # noqa: B018


@pytest.mark.needs(*FAMILY)
def test_the_table_of_provided_names_is_what_the_family_plugins_register():
    registered = {
        f"{entry.namespace}.{entry.name}": entry.distribution
        for namespace in ("sekai", "sekai.testing")
        for entry in registration.registry.names(namespace).values()
        if entry.distribution in FAMILY
    }
    assert registered == registration._PROVIDED_BY


@pytest.fixture
def without_vector_plugin(monkeypatch):
    """A registry that loaded every plugin but sekai-vector's, as if it were not installed."""
    entry_points = [
        entry_point
        for entry_point in registration._plugin_entry_points()
        if entry_point.dist is None or entry_point.dist.name != "sekai-vector"
    ]
    monkeypatch.setattr(registration, "_plugin_entry_points", lambda: entry_points)
    monkeypatch.setattr(registration, "registry", Registry())


@pytest.mark.needs("sekai-vector")
def test_a_name_of_an_uninstalled_distribution_names_it_and_its_install(
    without_vector_plugin, monkeypatch
):
    real = importlib.metadata.distribution

    def distribution(name):
        if name == "sekai-vector":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)
    with pytest.raises(AttributeError, match=_missing("sekai.make_vec", "sekai-vector")):
        sekai.__getattr__("make_vec")


@pytest.mark.needs("sekai-vector")
def test_a_name_an_installed_distribution_did_not_register_is_not_called_uninstalled(
    without_vector_plugin,
):
    with pytest.raises(AttributeError) as caught:
        sekai.__getattr__("make_vec")
    message = str(caught.value)
    assert "sekai.make_vec is provided by sekai-vector, which is installed" in message
    assert "not installed" not in message
