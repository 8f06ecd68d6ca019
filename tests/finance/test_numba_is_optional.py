"""numba is the extra ``sekai-finance[lob]``: nothing but the LOB vector env imports it."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _imported(code: str) -> list[str]:
    """Every module ``python -X importtime -c code`` imports (read from its report)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return [
        line.rsplit("|", 1)[1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]


@pytest.mark.parametrize(
    "code",
    [
        "import sekai; sekai.make('Portfolio-v0').reset(seed=0)",
        "import sekai.finance",
        "import sekai; sekai.make('LimitOrderBook-v0').reset(seed=0)",
    ],
)
def test_the_finance_envs_and_package_import_no_numba(code):
    modules = _imported(code)
    assert "sekai.finance" in modules  # the report was read
    assert not [name for name in modules if name.split(".")[0] in {"numba", "llvmlite"}]


@pytest.mark.needs("sekai-vector")
def test_the_lob_vector_env_without_numba_names_the_extra():
    code = (
        "import sekai\n"
        "try:\n"
        "    sekai.make_vec('LimitOrderBook-v0', 2)\n"
        "except ModuleNotFoundError as error:\n"
        "    print(error.name, error)\n"
    )
    result = subprocess.run(  # sys.modules["numba"] = None: as if numba were not installed
        [sys.executable, "-c", "import sys; sys.modules['numba'] = None\n" + code],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.startswith("numba LimitOrderBookVecEnv")
    assert "pip install 'sekai-finance[lob]'" in result.stdout
