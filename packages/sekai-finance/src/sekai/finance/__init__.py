"""Market building blocks shared by the finance envs: samplers, costs, data, metrics."""

from sekai.finance.baselines import BuyAndHold, EqualWeight
from sekai.finance.costs import (
    CostModel,
    HalfSpreadCost,
    ProportionalCost,
    SquareRootImpact,
)
from sekai.finance.data import Bars, load_csv, load_parquet
from sekai.finance.metrics import EpisodeMetrics
from sekai.finance.samplers import DateRange, EpisodeSampler, RandomStart, SequentialStart
from sekai.finance.weights import PortfolioWeights

__all__ = [
    "Bars",
    "BuyAndHold",
    "CostModel",
    "DateRange",
    "EpisodeMetrics",
    "EpisodeSampler",
    "EqualWeight",
    "HalfSpreadCost",
    "PortfolioWeights",
    "ProportionalCost",
    "RandomStart",
    "SequentialStart",
    "SquareRootImpact",
    "load_csv",
    "load_parquet",
]
