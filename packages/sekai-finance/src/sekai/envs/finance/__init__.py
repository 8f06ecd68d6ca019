"""Market environments and their native vector versions.

``LimitOrderBookMarket`` loads on first use: its engine brings numba, which the other envs and
this package never import.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sekai.envs.finance.limit_order_book import LimitOrderBookMarket

__all__ = ["LimitOrderBookMarket"]


def __getattr__(name: str) -> Any:
    if name == "LimitOrderBookMarket":
        from sekai.envs.finance.limit_order_book import LimitOrderBookMarket

        return LimitOrderBookMarket
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
