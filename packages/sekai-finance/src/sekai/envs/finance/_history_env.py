"""The base of the finance envs that trade on a price history: the parameters they share."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

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
from sekai.finance.history import price_history
from sekai.finance.samplers import EpisodeSampler, resolve_sampler

EXECUTIONS = ("close", "next_open")


class HistoryEnv(FinanceEnv):
    """Declares and checks ``prices``, ``lookback``, ``episode_length``, ``sampler``,
    ``transaction_cost``/``cost_model``, ``allow_short`` and ``periods_per_year``; a subclass
    calls ``_set_shared_parameters`` first in its ``__init__`` and sets ``_prices``, then
    ``_set_market_terms`` for the financing rates, the opens and the execution price."""

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
        "borrow_rate",
        "cash_rate",
        "opens",
        "execution",
    )

    _prices: np.ndarray | None
    _opens: np.ndarray | None

    prices = ReadOnly("the price history is data every sub-env shares")
    lookback = ReadOnly("it fixes the observation's shape")
    episode_length = ReadOnly("it fixes where episodes can start")
    allow_short = ReadOnly("it fixes the action space")
    transaction_cost = ReadOnly("set cost_model (e.g. ProportionalCost(rate)) instead")
    sampler = Parameter(resolve_sampler)
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

    def _set_market_terms(
        self, borrow_rate: Any, cash_rate: Any, opens: Any, execution: Any
    ) -> None:
        """The yearly financing rates, and where trades fill: ``"close"``, the close of the
        decision bar, or ``"next_open"``, the open of the bar after it (needs ``opens``, an
        array shaped as ``_prices``, set before this call or given here)."""
        self.borrow_rate = borrow_rate
        self.cash_rate = cash_rate
        if execution not in EXECUTIONS:
            raise ValueError(f"execution must be one of {EXECUTIONS}, got {execution!r}")
        self._execution = execution
        prices = self._prices
        if opens is not None:
            if prices is None:
                raise ValueError("opens need a price history: pass prices= with them")
            checked = price_history(opens, ndim=prices.ndim, min_length=len(prices), name="opens")
            if checked.shape != prices.shape:
                raise ValueError(
                    f"opens must have the shape of prices {prices.shape}, got {checked.shape}"
                )
            self._opens = checked
        elif "_opens" not in self.__dict__:
            self._opens = None
        if execution == "next_open" and self._opens is None:
            raise ValueError(
                'execution="next_open" fills at the open of the next bar: it needs the opens '
                "(opens=, aligned with the closes)"
            )
