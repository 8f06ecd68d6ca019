"""Market building blocks the finance envs share and users compose: samplers, cost models,
data loading (``datasets``: real bars shipped with the package), episode metrics, baselines,
the order book and its order flow (``sekai.finance.lob``)."""

from sekai.finance.baselines import (
    TWAP,
    AlmgrenChriss,
    AvellanedaStoikov,
    BuyAndHold,
    CarteaJaimungal,
    EqualWeight,
)
from sekai.finance.costs import (
    CostModel,
    HalfSpreadCost,
    ProportionalCost,
    SquareRootImpact,
)
from sekai.finance.data import Bars, Panel, load_csv, load_parquet, read_bars, read_panel
from sekai.finance.lob import (
    BUY,
    CANCEL,
    LEGACY,
    LIMIT,
    MARKET,
    PUBLIC,
    SELL,
    ContStoikovTalreja,
    FlowEvents,
    Order,
    OrderBook,
    Trade,
    TradingHalted,
    simulate_flow,
)
from sekai.finance.metrics import EpisodeMetrics
from sekai.finance.samplers import DateRange, EpisodeSampler, RandomStart, SequentialStart
from sekai.finance.weights import PortfolioWeights

__all__ = [
    "BUY",
    "CANCEL",
    "LEGACY",
    "LIMIT",
    "MARKET",
    "PUBLIC",
    "SELL",
    "TWAP",
    "AlmgrenChriss",
    "AvellanedaStoikov",
    "Bars",
    "BuyAndHold",
    "CarteaJaimungal",
    "ContStoikovTalreja",
    "CostModel",
    "DateRange",
    "EpisodeMetrics",
    "EpisodeSampler",
    "EqualWeight",
    "FlowEvents",
    "HalfSpreadCost",
    "Order",
    "OrderBook",
    "Panel",
    "PortfolioWeights",
    "ProportionalCost",
    "RandomStart",
    "SequentialStart",
    "SquareRootImpact",
    "Trade",
    "TradingHalted",
    "load_csv",
    "load_parquet",
    "read_bars",
    "read_panel",
    "simulate_flow",
]
