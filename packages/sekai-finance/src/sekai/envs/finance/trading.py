"""Trading-v0: trade one asset on a price history by choosing a target position."""

from __future__ import annotations

import functools
from typing import Any, ClassVar

import numpy as np

from sekai.core import StepResult
from sekai.envs.finance._history_env import HistoryEnv
from sekai.envs.finance._pictures import Picture
from sekai.envs.finance._single import MarketModel
from sekai.finance.costs import CostModel
from sekai.finance.history import log_returns, price_history
from sekai.finance.samplers import EpisodeSampler
from sekai.finance.trading import TradingModel, TradingModelOne
from sekai.spaces import Box, Discrete


class TradingEnv(HistoryEnv):
    """One asset, a target position each bar; see ``sekai.finance.trading`` for the model.

    Parameters (equity starts at 1.0; money amounts are in those units):

    - ``prices``: the price history, a 1-D array or pandas Series of positive finite prices
      (default: a fixed synthetic path of 2,521 daily bars, seeded, the same for every env);
    - ``lookback`` (bars, default 10): log returns in the observation; the first decision is at
      bar ``lookback``;
    - ``episode_length`` (steps, default 252): steps per episode, then truncated;
    - ``sampler``: where episodes start (default random; ``"sequential"``, a
      ``SequentialStart`` or any ``EpisodeSampler``);
      ``reset(options={"start": t})`` starts at decision bar ``t``;
    - ``transaction_cost`` (fraction of traded value, default 0.001) or ``cost_model`` (any cost
      model of ``sekai.finance.costs``), not both;
    - ``allow_short`` (default False): actions ``Discrete(3, start=-1)`` (short, flat, long)
      instead of ``Discrete(2)`` (flat, long);
    - ``periods_per_year`` (default 252): annualises the episode's Sharpe ratio and turns the
      yearly rates below into per-period ones;
    - ``borrow_rate`` and ``cash_rate`` (yearly, default 0): financing charged every period on
      the value of short positions, and earned (paid) on positive (negative) cash;
    - ``opens`` (default None) and ``execution`` (``"close"``, default, or ``"next_open"``):
      trades fill at the decision bar's close, or at the next bar's open (needs ``opens``,
      aligned with ``prices``);
    - ``render_mode``: None, ``"ansi"`` or ``"rgb_array"``.

    Observation: float32 ``(lookback + 1,)``, the last ``lookback`` log returns (oldest first,
    the last one ending at the decision bar) and the current position. Reward: the log change of
    equity over the step, net of costs. Info: ``timestamp`` (index of the decision bar),
    ``price``, ``position``, ``equity``, ``cost`` (of this step's trade), ``financing``
    (credited to cash this period, negative when paid); at an episode's end
    also ``episode_return``, ``sharpe``, ``max_drawdown``, ``turnover``.
    """

    picture = Picture(price="price", equity="equity", holding="position")
    state_attributes: ClassVar[tuple[str, ...]] = ("equity", "position", "price", "timestamp")

    def __init__(
        self,
        prices: Any = None,
        *,
        lookback: int = 10,
        episode_length: int = 252,
        sampler: EpisodeSampler | str | None = None,
        transaction_cost: float | None = None,
        cost_model: CostModel | None = None,
        allow_short: bool = False,
        periods_per_year: float = 252.0,
        borrow_rate: float = 0.0,
        cash_rate: float = 0.0,
        opens: Any = None,
        execution: str = "close",
        render_mode: str | None = None,
    ) -> None:
        self._set_shared_parameters(
            lookback,
            episode_length,
            sampler,
            transaction_cost,
            cost_model,
            allow_short,
            periods_per_year,
        )
        minimum = self._lookback + self._episode_length + 1
        self._prices = (
            _synthetic_prices()
            if prices is None
            else price_history(prices, ndim=1, min_length=minimum)
        )
        if len(self._prices) < minimum:
            raise ValueError(
                f"lookback={lookback} and episode_length={episode_length} need "
                f"{minimum} bars, but the default prices have {len(self._prices)}; pass prices="
            )
        self._returns = _returns_of(self._prices)
        self._set_market_terms(borrow_rate, cash_rate, opens, execution)
        self.observation_space = Box(-np.inf, np.inf, shape=(self._lookback + 1,))
        self.action_space = Discrete(3, start=-1) if self._allow_short else Discrete(2)
        super().__init__(render_mode)

    def _make_model(self, num_envs: int) -> MarketModel:
        return TradingModel(self, num_envs)

    def _make_one_model(self) -> TradingModelOne:
        return TradingModelOne(self)

    def step(self, action: Any) -> StepResult:
        """The scalar fast path of ``TradingModelOne``."""
        result: StepResult = self._model.step_one(action)  # type: ignore[attr-defined]
        self._last = result
        if self._trace is not None:
            self._trace.record(self._state)
            self._show_frame()
        return result


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
