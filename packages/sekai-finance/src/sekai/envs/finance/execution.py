"""OptimalExecution-v0: sell (or buy) a block of shares over a horizon (Almgren-Chriss)."""

from __future__ import annotations

from typing import Any, ClassVar, cast

import numpy as np

from sekai.core import StepResult
from sekai.envs.finance._parameters import Parameter, ReadOnly
from sekai.envs.finance._pictures import Picture
from sekai.envs.finance._single import FinanceEnv, MarketModel
from sekai.finance.arguments import check_float, check_int, check_positive
from sekai.finance.execution import SIDES, ExecutionModel, ExecutionModelOne
from sekai.spaces import Box


class OptimalExecutionEnv(FinanceEnv):
    """Liquidate (``side="sell"``) or acquire (``side="buy"``) a block of ``shares`` in
    ``episode_length`` steps, paying temporary and permanent price impact; see
    ``sekai.finance.execution`` for the model (Almgren and Chriss, 2000).

    Parameters (the defaults are the paper's example; money in dollars, time in days):

    - ``shares`` (1,000,000): the block; ``side`` ("sell"): "sell" or "buy";
    - ``start_price`` (50.0): $ per share at the start of each episode;
    - ``sigma`` (0.95): $ per share per sqrt(day) (30% a year at $50);
    - ``dt`` (0.1): days per step; ``episode_length`` (50 steps): a horizon of 5 days;
    - ``temporary_impact`` (2.5e-6): ``eta``, $ per share per (share per day) traded;
    - ``permanent_impact`` (2.5e-7): ``gamma``, $ per share per share traded;
    - ``half_spread`` (0.0625): ``epsilon``, $ per share of any step that trades;
    - ``risk_aversion`` (0.0): ``lambda``, per $; > 0 subtracts
      ``lambda * sigma**2 * dt * remaining**2`` from each step's reward;
    - ``render_mode``: None, ``"ansi"`` or ``"rgb_array"``.

    Action: float32 ``[fraction]`` in ``[0, 1]``, the fraction of the remaining shares to trade
    this step; the last step trades whatever remains. Observation: float32
    ``[remaining / shares, time_remaining, price / start price - 1]``. Reward: the step's PnL
    (change in cash plus the position at the price) less the risk term; an episode's PnL is
    minus its implementation shortfall. Info: ``traded``, ``fill_price``, ``cost`` (impact
    paid, never negative), ``pnl``, ``risk``, then ``price``, ``remaining``, ``position``,
    ``cash``, ``equity``, ``time_remaining``; at the episode's end also ``episode_return``
    (minus the shortfall over ``shares * start_price``), ``sharpe`` (annualised with 252 days),
    ``max_drawdown`` and ``turnover``.
    """

    parameters: ClassVar[tuple[str, ...]] = (
        "metadata",
        "shares",
        "side",
        "start_price",
        "sigma",
        "dt",
        "episode_length",
        "temporary_impact",
        "permanent_impact",
        "half_spread",
        "risk_aversion",
    )
    picture = Picture(price="price", equity="equity", holding="remaining")
    state_attributes: ClassVar[tuple[str, ...]] = (
        "price",
        "remaining",
        "position",
        "cash",
        "equity",
        "time_remaining",
    )

    shares = ReadOnly("it scales the observation")
    side = ReadOnly("it fixes the sign of the accounting")
    dt = ReadOnly("it fixes the observation space's bound on time_remaining")
    episode_length = ReadOnly("it fixes the observation space's bound on time_remaining")
    start_price = Parameter(lambda value: check_positive("start_price", value))
    sigma = Parameter(lambda value: check_float("sigma", value, 0.0))
    temporary_impact = Parameter(lambda value: check_float("temporary_impact", value, 0.0))
    permanent_impact = Parameter(lambda value: check_float("permanent_impact", value, 0.0))
    half_spread = Parameter(lambda value: check_float("half_spread", value, 0.0))
    risk_aversion = Parameter(lambda value: check_float("risk_aversion", value, 0.0))

    def __init__(
        self,
        *,
        shares: float = 1_000_000.0,
        side: str = "sell",
        start_price: float = 50.0,
        sigma: float = 0.95,
        dt: float = 0.1,
        episode_length: int = 50,
        temporary_impact: float = 2.5e-6,
        permanent_impact: float = 2.5e-7,
        half_spread: float = 0.0625,
        risk_aversion: float = 0.0,
        render_mode: str | None = None,
    ) -> None:
        if side not in SIDES:
            raise ValueError(f"side must be 'sell' or 'buy', got {side!r}")
        self._side = side
        self._shares = check_positive("shares", shares)
        self._dt = check_positive("dt", dt)
        self._episode_length = check_int("episode_length", episode_length, 1)
        self.start_price = start_price
        self.sigma = sigma
        self.temporary_impact = temporary_impact
        self.permanent_impact = permanent_impact
        self.half_spread = half_spread
        self.risk_aversion = risk_aversion
        horizon = self._episode_length * self._dt
        self.observation_space = Box(
            np.array([0.0, 0.0, -np.inf], np.float32),
            np.array([1.0, horizon, np.inf], np.float32),
            dtype=np.float32,
        )
        self.action_space = Box(0.0, 1.0, shape=(1,), dtype=np.float32)
        super().__init__(render_mode)

    def _make_model(self, num_envs: int) -> MarketModel:
        return ExecutionModel(self, num_envs)

    def _make_one_model(self) -> ExecutionModelOne:
        return ExecutionModelOne(self)

    def step(self, action: Any) -> StepResult:
        """The scalar fast path of ``ExecutionModelOne``."""
        (fraction,) = self._box_values(action, 0.0, 1.0, "fractions of the remaining shares")
        model = cast(ExecutionModelOne, self._model)
        return self._finish_step(model.step_one(fraction, self.rng))
