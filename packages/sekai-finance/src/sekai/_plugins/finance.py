"""sekai-finance's plugin: registers the market environments."""

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
