"""numba compiles the limit order book engine and nothing else: the four simple market envs and
``import sekai.finance`` never import it."""

from __future__ import annotations

import subprocess
import sys

import pytest

SIMPLE = ["Trading-v0", "Portfolio-v0", "MarketMaking-v0", "OptimalExecution-v0"]


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


def _compiled(modules: list[str]) -> list[str]:
    return [name for name in modules if name.split(".")[0] in {"numba", "llvmlite"}]


@pytest.mark.parametrize(
    "code",
    [
        *(f"import sekai; sekai.make({env_id!r}).reset(seed=0)" for env_id in SIMPLE),
        "import sekai.finance, sekai.envs.finance",
    ],
)
def test_the_simple_envs_and_the_package_import_no_numba(code: str) -> None:
    modules = _imported(code)
    assert "sekai.finance" in modules  # the report was read
    assert not _compiled(modules)


def test_the_order_book_market_does_import_it() -> None:
    """The check above can see numba: the LOB env, which needs it, shows up."""
    assert _compiled(_imported("import sekai; sekai.make('LimitOrderBook-v0')"))
