"""The base of the finance envs that trade on a price history: the parameters they share."""

from __future__ import annotations

from typing import Any, ClassVar

from sekai.envs.finance._parameters import (
    Parameter,
    ReadOnly,
    check_bool,
    check_cost_model,
    check_float,
    check_int,
)
from sekai.envs.finance._single import FinanceEnv
from sekai.finance.costs import CostModel, resolve_costs
from sekai.finance.samplers import EpisodeSampler, resolve_sampler


class HistoryEnv(FinanceEnv):
    """Declares and checks ``prices``, ``lookback``, ``episode_length``, ``sampler``,
    ``transaction_cost``/``cost_model``, ``allow_short`` and ``periods_per_year``; a subclass
    calls ``_set_shared_parameters`` first in its ``__init__`` and sets ``_prices``."""

    parameters: ClassVar[tuple[str, ...]] = (
        "metadata",
        "prices",
        "lookback",
        "episode_length",
        "sampler",
        "transaction_cost",
        "cost_model",
        "allow_short",
        "periods_per_year",
    )

    prices = ReadOnly("the price history is data every sub-env shares")
    lookback = ReadOnly("it fixes the observation's shape")
    episode_length = ReadOnly("it fixes where episodes can start")
    allow_short = ReadOnly("it fixes the action space")
    transaction_cost = ReadOnly("set cost_model (e.g. ProportionalCost(rate)) instead")
    sampler = Parameter(resolve_sampler)
    cost_model = Parameter(check_cost_model)
    periods_per_year = Parameter(lambda value: check_float("periods_per_year", value, 1.0))

    def _set_shared_parameters(
        self,
        lookback: Any,
        episode_length: Any,
        sampler: EpisodeSampler | str | None,
        transaction_cost: float | None,
        cost_model: CostModel | None,
        allow_short: Any,
        periods_per_year: Any,
    ) -> None:
        self._lookback = check_int("lookback", lookback, 1)
        self._episode_length = check_int("episode_length", episode_length, 1)
        self._allow_short = check_bool("allow_short", allow_short)
        self.cost_model, self._transaction_cost = resolve_costs(cost_model, transaction_cost)
        self.sampler = sampler
        self.periods_per_year = periods_per_year
