"""Portfolio-v0: allocate wealth between n assets and cash by target weights."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from sekai.core import StepResult
from sekai.envs.finance._history_env import HistoryEnv, check_data_options
from sekai.envs.finance._parameters import Parameter, ReadOnly
from sekai.envs.finance._pictures import Picture
from sekai.envs.finance._single import MarketModel, OneEnvModel
from sekai.finance._scalar import EXACT_SUM_LENGTH
from sekai.finance.arguments import check_float, check_int
from sekai.finance.costs import CostModel
from sekai.finance.data import read_panel
from sekai.finance.history import log_returns, price_history
from sekai.finance.portfolio import PortfolioModel, PortfolioModelOne
from sekai.finance.samplers import EpisodeSampler
from sekai.finance.weights import PortfolioWeights, check_weights
from sekai.spaces import Box


class PortfolioEnv(HistoryEnv):
    """Target weights of ``n_assets`` assets and cash each step; see
    ``sekai.finance.portfolio`` for the model.

    Parameters (wealth starts at 1.0; money amounts are in those units):

    - ``n_assets`` (default 5);
    - ``data``: the history as ``{symbol: table}`` or one long table with a ``symbol`` (or
      ``tic``) column (tables as Trading-v0's ``data``), aligned on dates: a date missing for
      one symbol is a ValueError unless ``align="inner"`` (keep the dates all share); with
      ``price_column``, ``features`` and ``fill`` as Trading-v0;
    - ``prices``: or a ``(T, n_assets)`` history of positive prices; without either, correlated
      geometric Brownian motions are simulated with ``mu``
      (annual drift, default 0.05), ``sigma`` (annual volatility, default 0.2), each a number or
      one per asset, ``correlation`` (of every pair, default 0.3, or an ``(n_assets, n_assets)``
      positive definite matrix) and ``dt`` (years per step, default 1/252);
    - ``lookback`` (bars, default 10) and ``episode_length`` (steps, default 252);
    - ``sampler``: where episodes start in the history (as Trading-v0);
    - ``transaction_cost`` (fraction of traded value, below 1, default 0.001) or ``cost_model``;
    - ``allow_short`` (default False) and ``max_leverage`` (default 1.0, only with shorts: the
      assets' gross exposure ``sum(|w|)`` may be up to ``max_leverage``);
    - ``periods_per_year`` (default: from the data's dates, else 252), ``render_mode`` (None,
      ``"ansi"`` or ``"rgb_array"``);
    - ``borrow_rate``, ``cash_rate``, ``opens`` and ``execution``: as Trading-v0 (cash is
      negative, and pays ``cash_rate``, when leverage borrows it; ``"next_open"`` needs
      ``opens``, a ``(T, n_assets)`` array aligned with the closes).

    Action: ``PortfolioWeights``, ``n_assets + 1`` weights (cash
    last) summing to 1. Observation: float32 ``(lookback * n_assets * (1 + n_features) +
    n_assets + 1,)``: for each of the last ``lookback`` bars (oldest first) the log returns of
    every asset, then (with features) every asset's features (asset-major); then the current
    weights. ``symbols``: the assets' names in column order (from ``data``, else None).
    Reward: the log change of wealth, net of costs and financing. Info: ``timestamp``, ``date``
    (when the data has dates), ``wealth``, ``weights`` (after the step's price move), ``cost``,
    ``financing``; at an episode's end also the episode figures of ``sekai.finance.metrics``.
    """

    parameters: ClassVar[tuple[str, ...]] = (
        *HistoryEnv.parameters,
        "n_assets",
        "mu",
        "sigma",
        "correlation",
        "dt",
        "max_leverage",
        "symbols",
    )
    picture = Picture(price="price", equity="wealth", holding="weights", time="timestamp")
    state_attributes: ClassVar[tuple[str, ...]] = ("wealth", "weights", "price", "timestamp")

    n_assets = ReadOnly("it fixes the spaces' shapes")
    max_leverage = ReadOnly("it fixes the action space")
    symbols = ReadOnly("data= names the assets")
    dt = Parameter(lambda value: _positive("dt", value))

    def __init__(
        self,
        n_assets: int | None = None,
        *,
        prices: Any = None,
        data: Any = None,
        price_column: str | None = None,
        features: Sequence[str] | None = None,
        fill: str | float | None = None,
        align: str | None = None,
        mu: Any = 0.05,
        sigma: Any = 0.2,
        correlation: Any = 0.3,
        dt: float = 1 / 252,
        lookback: int = 10,
        episode_length: int = 252,
        sampler: EpisodeSampler | str | None = None,
        transaction_cost: float | None = None,
        cost_model: CostModel | None = None,
        allow_short: bool = False,
        max_leverage: float = 1.0,
        periods_per_year: float | None = None,
        borrow_rate: float = 0.0,
        cash_rate: float = 0.0,
        opens: Any = None,
        execution: str = "close",
        render_mode: str | None = None,
    ) -> None:
        self._set_shared_parameters(
            lookback, episode_length, transaction_cost, cost_model, allow_short
        )
        check_data_options(
            data, prices, price_column=price_column, features=features, fill=fill, align=align
        )
        dates = values = self._symbols = None
        names: tuple[str, ...] = ()
        if data is not None:
            panel = read_panel(
                data,
                price_column=price_column or "close",
                features=features,
                fill=fill,
                align=align or "exact",
            )
            prices, dates, values, names = (
                panel.close,
                panel.dates,
                panel.features,
                panel.feature_names,
            )
            self._symbols = panel.symbols
        history = returns = None
        if prices is None:
            self._n_assets = check_int("n_assets", 5 if n_assets is None else n_assets, 1)
        else:
            minimum = self._lookback + self._episode_length + 1
            history = price_history(prices, ndim=2, min_length=minimum)
            returns = log_returns(history)
            self._n_assets = history.shape[1]
            if n_assets is not None and n_assets != self._n_assets:
                raise ValueError(
                    f"n_assets={n_assets!r} but prices has {self._n_assets} columns (assets)"
                )
        self._returns: np.ndarray | None = returns
        self._set_history(data, history, dates, values, names, sampler, periods_per_year)
        self._max_leverage = _positive("max_leverage", max_leverage)
        if self._max_leverage != 1.0 and not self._allow_short:
            raise ValueError(
                f"max_leverage={max_leverage!r} bounds the gross exposure of long and short "
                "weights, so it needs allow_short=True; long-only weights are never levered"
            )
        self._set_market_terms(borrow_rate, cash_rate, opens, execution)
        self.mu = mu
        self.sigma = sigma
        self.correlation = correlation
        self.dt = dt
        size = self._lookback * self._n_assets * (1 + len(names)) + self._n_assets + 1
        self.observation_space = Box(-np.inf, np.inf, shape=(size,))
        self.action_space = PortfolioWeights(
            self._n_assets, self._max_leverage if self._allow_short else None
        )
        super().__init__(render_mode)

    @property
    def mu(self) -> Any:
        """Annual drift of the simulated prices: a number or one per asset."""
        return self._mu

    @mu.setter
    def mu(self, value: Any) -> None:
        self._mu = self._per_asset("mu", value, -np.inf)

    @property
    def sigma(self) -> Any:
        """Annual volatility of the simulated prices: a number or one per asset, >= 0."""
        return self._sigma

    @sigma.setter
    def sigma(self, value: Any) -> None:
        self._sigma = self._per_asset("sigma", value, 0.0)

    @property
    def correlation(self) -> Any:
        """Correlation of the simulated Brownian motions: one for every pair, or a matrix."""
        return self._correlation

    @correlation.setter
    def correlation(self, value: Any) -> None:
        n = self._n_assets
        matrix = np.array(value, dtype=np.float64)
        if matrix.ndim == 0:
            matrix = np.full((n, n), float(matrix))
            np.fill_diagonal(matrix, 1.0)
        valid = (
            matrix.shape == (n, n)
            and np.isfinite(matrix).all()
            and np.allclose(matrix, matrix.T)
            and np.allclose(np.diag(matrix), 1.0)
            and np.linalg.eigvalsh(matrix).min() > 1e-12
        )
        if not valid:
            raise ValueError(
                f"correlation must be a number or an ({n}, {n}) symmetric positive definite "
                f"matrix with ones on the diagonal, got {value!r}"
            )
        self._correlation_matrix = matrix
        self._correlation = value

    def _per_asset(self, name: str, value: Any, minimum: float) -> Any:
        array = np.array(value, dtype=np.float64)
        if (
            array.shape not in ((), (self._n_assets,))
            or not (np.isfinite(array) & (array >= minimum)).all()
        ):
            bound = "" if minimum == -np.inf else f" of at least {minimum}"
            raise ValueError(
                f"{name} must be a finite number{bound} or {self._n_assets} of them (one per "
                f"asset), got {value!r}"
            )
        if array.ndim == 0:
            return float(array)
        array.flags.writeable = False  # replaced, never changed in place: the model caches it
        return array

    def _make_model(self, num_envs: int) -> MarketModel:
        return PortfolioModel(self, num_envs)

    def _make_one_model(self) -> OneEnvModel:
        if self._n_assets + 1 > EXACT_SUM_LENGTH:
            return self._make_model(1)
        return PortfolioModelOne(self)

    def step(self, action: Any) -> StepResult:
        """The scalar fast path of ``PortfolioModelOne``, when the env has one."""
        model = self._model
        if type(model) is not PortfolioModelOne:
            return super().step(action)
        targets = model.targets(action)
        if targets is None:  # not plainly valid: the array model's checks and errors
            self._check_shape(action)
            max_leverage = self._max_leverage if self._allow_short else None
            weights = check_weights(np.asarray([action]), self._n_assets, max_leverage)
            targets = weights[0, :-1].tolist()
        result = model.step_one(targets, self._rng or self.rng)  # the property only if unset
        if self._trace is None:  # _finish_step's work without the call
            self._last = result
            return result
        return self._finish_step(result)


def _positive(name: str, value: Any) -> float:
    number = check_float(name, value, 0.0)
    if number == 0.0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return number
