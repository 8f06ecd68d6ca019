"""The base of the finance envs that trade on a price history: the parameters they share."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from sekai.envs.finance._parameters import Parameter, ReadOnly, check_bool, check_cost_model
from sekai.envs.finance._single import FinanceEnv
from sekai.finance.arguments import check_float, check_int
from sekai.finance.costs import CostModel, resolve_costs
from sekai.finance.data import infer_periods_per_year
from sekai.finance.history import price_history
from sekai.finance.samplers import EpisodeSampler, resolve_sampler

EXECUTIONS = ("close", "next_open")


class HistoryEnv(FinanceEnv):
    """Declares and checks ``prices``/``data``, ``features``, ``lookback``, ``episode_length``,
    ``sampler``, ``transaction_cost``/``cost_model``, ``allow_short``, ``periods_per_year`` and
    the market terms; a subclass calls ``_set_shared_parameters`` first in its ``__init__``,
    then ``_set_history`` with the prices (and dates, features) it read, then
    ``_set_market_terms`` for the financing rates, the opens and the execution price."""

    parameters: ClassVar[tuple[str, ...]] = (
        "metadata",
        "prices",
        "data",
        "features",
        "lookback",
        "episode_length",
        "sampler",
        "transaction_cost",
        "cost_model",
        "allow_short",
        "periods_per_year",
        "borrow_rate",
        "cash_rate",
        "opens",
        "execution",
    )

    _prices: np.ndarray | None
    _opens: np.ndarray | None

    prices = ReadOnly("the price history is data every sub-env shares")
    data = ReadOnly("the history is data every sub-env shares")
    features = ReadOnly("they fix the observation's shape")
    lookback = ReadOnly("it fixes the observation's shape")
    episode_length = ReadOnly("it fixes where episodes can start")
    allow_short = ReadOnly("it fixes the action space")
    transaction_cost = ReadOnly("set cost_model (e.g. ProportionalCost(rate)) instead")
    cost_model = Parameter(check_cost_model)
    periods_per_year = Parameter(lambda value: check_float("periods_per_year", value, 1.0))
    borrow_rate = Parameter(lambda value: check_float("borrow_rate", value, 0.0))
    cash_rate = Parameter(lambda value: check_float("cash_rate", value))
    opens = ReadOnly("the open prices are data every sub-env shares")
    execution = ReadOnly("it fixes which prices the model reads")

    def _set_shared_parameters(
        self,
        lookback: Any,
        episode_length: Any,
        transaction_cost: float | None,
        cost_model: CostModel | None,
        allow_short: Any,
    ) -> None:
        self._lookback = check_int("lookback", lookback, 1)
        self._episode_length = check_int("episode_length", episode_length, 1)
        self._allow_short = check_bool("allow_short", allow_short)
        self.cost_model, self._transaction_cost = resolve_costs(cost_model, transaction_cost)

    def _set_history(
        self,
        data: Any,
        prices: np.ndarray | None,
        dates: np.ndarray | None,
        features: np.ndarray | None,
        feature_names: tuple[str, ...],
        sampler: EpisodeSampler | str | None,
        periods_per_year: Any,
    ) -> None:
        """The history every sub-env shares: ``prices`` (None: simulated), its ``dates``
        (datetime64[ns], or None) and ``features`` (a row per bar, or None); then the sampler
        (bound to the history) and ``periods_per_year`` (None: inferred from the dates, else
        252)."""
        self._data = data
        self._prices = prices
        self._dates = dates
        self._feature_values = features
        self._features = feature_names
        self.sampler = sampler
        if periods_per_year is None:
            periods_per_year = 252.0 if dates is None else infer_periods_per_year(dates)
        self.periods_per_year = periods_per_year

    @property
    def sampler(self) -> EpisodeSampler:
        """Where episodes start; a new value is resolved (``"random"``, ``"sequential"``, an
        ``EpisodeSampler``) and given the env's history (``DateRange`` takes its dates)."""
        return self._sampler

    @sampler.setter
    def sampler(self, value: EpisodeSampler | str | None) -> None:
        sampler = resolve_sampler(value)
        length = 0 if self._prices is None else len(self._prices)
        if self._prices is not None or self._dates is not None:
            sampler = sampler.for_history(self._dates, length)
        self._sampler = sampler

    def _set_market_terms(
        self, borrow_rate: Any, cash_rate: Any, opens: Any, execution: Any
    ) -> None:
        """The yearly financing rates, and where trades fill: ``"close"``, the close of the
        decision bar, or ``"next_open"``, the open of the bar after it (needs ``opens``, an
        array shaped as ``_prices``)."""
        self.borrow_rate = borrow_rate
        self.cash_rate = cash_rate
        if execution not in EXECUTIONS:
            raise ValueError(f"execution must be one of {EXECUTIONS}, got {execution!r}")
        self._execution = execution
        prices = self._prices
        self._opens = None
        if opens is not None:
            if prices is None:
                raise ValueError("opens need a price history: pass prices= or data= with them")
            checked = price_history(opens, ndim=prices.ndim, min_length=len(prices), name="opens")
            if checked.shape != prices.shape:
                raise ValueError(
                    f"opens must have the shape of prices {prices.shape}, got {checked.shape}"
                )
            self._opens = checked
        if execution == "next_open" and self._opens is None:
            raise ValueError(
                'execution="next_open" fills at the open of the next bar: it needs the opens '
                "(an open column in data=, or opens= aligned with the closes)"
            )


def check_data_options(data: Any, prices: Any, **options: Any) -> None:
    """``data=`` and ``prices=`` exclude each other; the reading options need ``data=``."""
    if data is not None and prices is not None:
        raise ValueError("give data= (a table) or prices= (an array), not both")
    given = [name for name, value in options.items() if value is not None]
    if data is None and given:
        raise ValueError(f"{given[0]}= chooses columns of data=, but no data= was given")
