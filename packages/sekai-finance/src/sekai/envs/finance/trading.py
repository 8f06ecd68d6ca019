"""Trading-v0: trade one asset on a price history by choosing a target position."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from sekai.core import StepResult
from sekai.envs.finance._history_env import HistoryEnv, check_data_options
from sekai.envs.finance._pictures import Picture
from sekai.envs.finance._single import MarketModel
from sekai.finance.costs import CostModel
from sekai.finance.data import read_bars
from sekai.finance.history import log_returns, price_history
from sekai.finance.samplers import EpisodeSampler
from sekai.finance.trading import TradingModel, TradingModelOne
from sekai.spaces import Box, Discrete


class TradingEnv(HistoryEnv):
    """One asset, a target position each bar; see ``sekai.finance.trading`` for the model.

    Parameters (equity starts at 1.0; money amounts are in those units):

    - ``data``: the history as a table (``Bars``, a pandas, polars or pyarrow table, a dict of
      1-D arrays, or the path of a CSV or Parquet file; see ``sekai.finance.data``), with
      ``price_column`` (default ``"close"``, case-insensitive), ``features`` (columns in the
      observation; default those named ``feature_*``) and ``fill`` (for missing features);
    - ``prices``: or the price history alone, a 1-D array or pandas Series of positive finite
      prices (default, without ``data``: a fixed synthetic path of 2,521 daily bars, seeded, the
      same for every env);
    - ``lookback`` (bars, default 10): bars in the observation; the first decision is at bar
      ``lookback``;
    - ``episode_length`` (steps, default 252): steps per episode, then truncated;
    - ``sampler``: where episodes start (default random; ``"sequential"``, a
      ``SequentialStart`` or any ``EpisodeSampler``, e.g. ``DateRange(start="2017-01-01")``
      on dated data); ``reset(options={"start": t})`` starts at decision bar ``t``;
    - ``transaction_cost`` (fraction of traded value, below 1, default 0.001) or ``cost_model``
      (any cost model of ``sekai.finance.costs``), not both;
    - ``allow_short`` (default False): actions ``Discrete(3, start=-1)`` (short, flat, long)
      instead of ``Discrete(2)`` (flat, long);
    - ``periods_per_year``: annualises the episode's Sharpe ratio and turns the yearly rates
      below into per-period ones (default: inferred from the data's dates, see
      ``sekai.finance.data.infer_periods_per_year``, else 252);
    - ``borrow_rate`` and ``cash_rate`` (yearly, default 0): financing charged every period on
      the value of short positions, and earned (paid) on positive (negative) cash;
    - ``execution`` (``"close"``, default, or ``"next_open"``): trades fill at the decision
      bar's close, or at the next bar's open, read from ``data``'s open column or from ``opens``
      (an array aligned with ``prices``);
    - ``render_mode``: None, ``"ansi"`` or ``"rgb_array"``.

    Observation: float32 ``(lookback * (1 + n_features) + 1,)``: for each of the last
    ``lookback`` bars (oldest first, the last one the decision bar) its log return and then its
    features, then the current position. Without features: the ``lookback`` log returns and the
    position. Reward: the log change of equity over the step, net of costs. Info: ``timestamp``
    (index of the decision bar), ``date`` (a ``datetime.datetime``, when the data has dates),
    ``price``, ``position``, ``equity``, ``cost`` (of this step's trade), ``financing``
    (credited to cash this period, negative when paid); at an episode's end
    also ``episode_return``, ``sharpe``, ``max_drawdown``, ``turnover``.
    """

    picture = Picture(price="price", equity="equity", holding="position", time="timestamp")
    state_attributes: ClassVar[tuple[str, ...]] = ("equity", "position", "price", "timestamp")

    def __init__(
        self,
        prices: Any = None,
        *,
        data: Any = None,
        price_column: str | None = None,
        features: Sequence[str] | None = None,
        fill: str | float | None = None,
        lookback: int = 10,
        episode_length: int = 252,
        sampler: EpisodeSampler | str | None = None,
        transaction_cost: float | None = None,
        cost_model: CostModel | None = None,
        allow_short: bool = False,
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
        check_data_options(data, prices, price_column=price_column, features=features, fill=fill)
        minimum = self._lookback + self._episode_length + 1
        dates = values = None
        names: tuple[str, ...] = ()
        if data is not None:
            bars = read_bars(
                data, price_column=price_column or "close", features=features, fill=fill
            )
            if opens is not None:
                raise ValueError("opens= goes with prices=; data= brings its own open column")
            prices, dates, names = bars.close, bars.dates, tuple(bars.features)
            opens = bars.open
            if names:
                values = np.column_stack([bars.features[name] for name in names])
        history = (
            _synthetic_prices()
            if prices is None
            else price_history(prices, ndim=1, min_length=minimum)
        )
        if len(history) < minimum:
            raise ValueError(
                f"lookback={lookback} and episode_length={episode_length} need "
                f"{minimum} bars, but the default prices have {len(history)}; pass prices="
            )
        self._returns = _returns_of(history)
        self._set_history(data, history, dates, values, names, sampler, periods_per_year)
        self._set_market_terms(borrow_rate, cash_rate, opens, execution)
        size = self._lookback * (1 + len(names)) + 1
        self.observation_space = Box(-np.inf, np.inf, shape=(size,))
        self.action_space = Discrete(3, start=-1) if self._allow_short else Discrete(2)
        super().__init__(render_mode)

    def _make_model(self, num_envs: int) -> MarketModel:
        return TradingModel(self, num_envs)

    def _make_one_model(self) -> TradingModelOne:
        return TradingModelOne(self)

    def step(self, action: Any) -> StepResult:
        """The scalar fast path of ``TradingModelOne``."""
        return self._finish_step(self._model.step_one(action))  # type: ignore[attr-defined]


@functools.cache
def _synthetic_prices() -> np.ndarray:
    """The default history: 2,521 daily closes of a geometric Brownian motion (8% drift, 20%
    volatility a year) from 100, always drawn from seed 0."""
    rng = np.random.default_rng(0)
    daily = rng.normal(0.08 / 252 - 0.5 * 0.2**2 / 252, 0.2 / np.sqrt(252), size=2520)
    path = 100.0 * np.exp(np.concatenate([[0.0], np.cumsum(daily)]))
    path.flags.writeable = False
    return path


def _returns_of(prices: np.ndarray) -> np.ndarray:
    """Log returns; the default history's are computed once and shared."""
    return _synthetic_returns() if prices is _synthetic_prices() else log_returns(prices)


@functools.cache
def _synthetic_returns() -> np.ndarray:
    return log_returns(_synthetic_prices())
