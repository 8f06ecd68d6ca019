"""Market environments and their native vector versions."""

from sekai.envs.finance.limit_order_book import LimitOrderBookMarket

__all__ = ["LimitOrderBookMarket"]
