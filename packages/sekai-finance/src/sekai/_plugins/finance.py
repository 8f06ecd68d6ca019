"""sekai-finance's plugin: registers the market envs and their native vector versions, and adds
``sekai.finance`` to the names of ``sekai``."""

from collections.abc import Callable
from typing import Any

from sekai.hookspecs import hookimpl

_ENVS = "sekai.envs.finance"


@hookimpl
def sekai_register_envs(register: Callable[..., Any]) -> None:
    register(
        "Trading-v0",
        entry_point=f"{_ENVS}.trading:TradingEnv",
        vector_entry_point=f"{_ENVS}.trading_vec:TradingVecEnv",
    )
    register(
        "Portfolio-v0",
        entry_point=f"{_ENVS}.portfolio:PortfolioEnv",
        vector_entry_point=f"{_ENVS}.portfolio_vec:PortfolioVecEnv",
    )
    register(
        "MarketMaking-v0",
        entry_point=f"{_ENVS}.market_making:MarketMakingEnv",
        vector_entry_point=f"{_ENVS}.market_making_vec:MarketMakingVecEnv",
    )
    register(
        "OptimalExecution-v0",
        entry_point=f"{_ENVS}.execution:OptimalExecutionEnv",
        vector_entry_point=f"{_ENVS}.execution_vec:OptimalExecutionVecEnv",
    )
    register(
        "LimitOrderBook-v0",
        entry_point=f"{_ENVS}.limit_order_book:LimitOrderBookMarket",
        vector_entry_point=f"{_ENVS}.limit_order_book_vec:LimitOrderBookVecEnv",
    )
    register(
        "LobsterReplay-v0",
        entry_point=f"{_ENVS}.lobster_replay:LobsterReplayEnv",
        vector_entry_point=f"{_ENVS}.lobster_replay_vec:LobsterReplayVecEnv",
    )
    register(
        "LobsterReplayMarket-v0", entry_point=f"{_ENVS}.lobster_replay_market:LobsterReplayMarket"
    )


@hookimpl
def sekai_register_names(register: Callable[..., None]) -> None:
    register("finance", "sekai.finance")
