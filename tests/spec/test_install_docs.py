"""The pages that install Stable-Baselines3 give PyTorch's CPU route, and agree with the extra.

On Linux, PyPI's torch is a CUDA build (about 3 GB with its NVIDIA libraries), and what
`uv sync --extra sb3` or `pip install "sekai[sb3]"` brings unless the CPU build is there first.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "packages").glob("*/README.md")),
]
# what installs torch by way of the sb3 extra: `[sb3]`, `--extra sb3`, `--all-extras`
_SB3_INSTALL = re.compile(r"\[sb3\]|--extra sb3|--all-extras")
_CPU_ROUTE = re.compile(r"--torch-backend cpu|--index-url https://download\.pytorch\.org/whl/cpu")
# the uv command that installs SB3 beside a synced workspace
_UV_SB3 = re.compile(r'uv pip install --torch-backend cpu "(stable-baselines3[^"]*)"')


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_a_page_that_installs_the_sb3_extra_gives_the_cpu_route(page: Path) -> None:
    text = page.read_text()
    if _SB3_INSTALL.search(text):
        assert _CPU_ROUTE.search(text), f"{page.name} installs the sb3 extra, no CPU torch route"


def test_the_uv_commands_ask_for_the_stable_baselines3_of_the_sb3_extra() -> None:
    compat = tomllib.loads((ROOT / "packages/sekai-compat/pyproject.toml").read_text())
    (wanted,) = [
        requirement.replace(" ", "")
        for requirement in compat["project"]["optional-dependencies"]["sb3"]
        if requirement.startswith("stable-baselines3")
    ]
    pages = ["README.md", "docs/stable-baselines3.md", "docs/learning.md"]
    commands = {page: _UV_SB3.findall((ROOT / page).read_text()) for page in pages}
    assert all(commands.values()), commands
    assert {requirement for found in commands.values() for requirement in found} == {wanted}
