"""``import sekai.compat`` needs none of the peer libraries; a bridge names its missing extra."""

from __future__ import annotations

import subprocess
import sys

import pytest

import sekai.compat


def _run_without(libraries: list[str], code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter where importing any of ``libraries`` fails."""
    block = "".join(f"sys.modules[{name!r}] = None; " for name in libraries)
    return subprocess.run(
        [sys.executable, "-c", f"import sys; {block}\n{code}"],
        capture_output=True,
        text=True,
        check=False,
    )


def test_import_sekai_compat_needs_none_of_the_peer_libraries():
    result = _run_without(
        ["gymnasium", "pettingzoo", "stable_baselines3", "torch"],
        "import sekai.compat; print(sorted(sekai.compat.__all__))",
    )
    assert result.returncode == 0, result.stderr
    assert "'to_sb3'" in result.stdout and "'from_pettingzoo'" in result.stdout


@pytest.mark.parametrize(
    ("name", "missing", "extra"),
    [
        ("to_gymnasium", "gymnasium", "gymnasium"),
        ("to_gymnasium_vector", "gymnasium", "gymnasium"),
        ("from_gymnasium_space", "gymnasium", "gymnasium"),
        ("to_pettingzoo", "pettingzoo", "pettingzoo"),
        ("to_sb3", "stable_baselines3", "sb3"),
    ],
)
def test_a_bridge_whose_library_is_missing_names_the_extra_to_install(name, missing, extra):
    result = _run_without([missing], f"from sekai.compat import {name}")
    assert result.returncode == 1
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line == (
        f"ModuleNotFoundError: sekai.compat.{name} needs {missing}, which is not installed: "
        f'pip install "sekai[{extra}]" (or "sekai-compat[{extra}]")'
    )


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'to_gym'"):
        sekai.compat.to_gym  # noqa: B018
