"""Shared fixtures of the finance tests: the real market data sekai.finance.datasets ships."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance import Bars, datasets


@pytest.fixture(scope="session")
def googl() -> Bars:
    return datasets.load("GOOGL")


@pytest.fixture(scope="session")
def eurusd() -> Bars:
    return datasets.load("EURUSD")


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
