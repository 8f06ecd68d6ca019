"""Market building blocks shared by the finance envs: the order book and its order flow."""

from sekai.finance.order_book import BUY, PUBLIC, SELL, Order, OrderBook, Trade
from sekai.finance.order_flow import (
    CANCEL,
    LIMIT,
    MARKET,
    ContStoikovTalreja,
    FlowEvents,
    simulate_flow,
)

__all__ = [
    "BUY",
    "CANCEL",
    "LIMIT",
    "MARKET",
    "PUBLIC",
    "SELL",
    "ContStoikovTalreja",
    "FlowEvents",
    "Order",
    "OrderBook",
    "Trade",
    "simulate_flow",
]
