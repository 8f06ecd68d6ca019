"""sekai-finance's plugin: registers the market envs and their native vector versions."""

from collections.abc import Callable
from typing import Any

from sekai.hookspecs import hookimpl

_FINANCE = "sekai.envs.finance"


@hookimpl
def sekai_register_envs(register: Callable[..., Any]) -> None:
    register(
        "LimitOrderBook-v0",
        entry_point=f"{_FINANCE}.limit_order_book:LimitOrderBookMarket",
        vector_entry_point=f"{_FINANCE}.limit_order_book_vec:LimitOrderBookVecEnv",
    )
    register(
        "Trading-v0",
        entry_point=f"{_FINANCE}.trading:TradingEnv",
        vector_entry_point=f"{_FINANCE}.trading_vec:TradingVecEnv",
    )
    register(
        "Portfolio-v0",
        entry_point=f"{_FINANCE}.portfolio:PortfolioEnv",
        vector_entry_point=f"{_FINANCE}.portfolio_vec:PortfolioVecEnv",
    )
