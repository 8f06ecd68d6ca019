"""Shared fixtures of the finance tests: the real market data of ../shared/data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sekai.finance import Bars, load_csv

_CANDIDATES = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "data",
    Path("/work/shared/data"),
)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The first existing of <repo>/../shared/data and /work/shared/data."""
    for candidate in _CANDIDATES:
        if (candidate / "STOCKS_GOOGL.csv").exists():
            return candidate
    raise FileNotFoundError(f"no market data in any of {[str(c) for c in _CANDIDATES]}")


@pytest.fixture(scope="session")
def googl(data_dir: Path) -> Bars:
    return load_csv(data_dir / "STOCKS_GOOGL.csv")


@pytest.fixture(scope="session")
def eurusd(data_dir: Path) -> Bars:
    return load_csv(data_dir / "FOREX_EURUSD_1H_ASK.csv")


@pytest.fixture
def history() -> np.ndarray:
    """The spec's 179-bar synthetic history."""
    return 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0.0, 0.01, 179)))


@pytest.fixture
def trading_vec_env() -> type:
    """TradingVecEnv, imported by the test that asks: it needs sekai-vector, and the finance
    tests also run where only sekai-core and sekai-finance are installed."""
    from sekai.envs.finance.trading_vec import TradingVecEnv

    return TradingVecEnv


@pytest.fixture
def portfolio_vec_env() -> type:
    """PortfolioVecEnv, imported by the test that asks (it needs sekai-vector)."""
    from sekai.envs.finance.portfolio_vec import PortfolioVecEnv

    return PortfolioVecEnv
