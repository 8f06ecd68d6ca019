"""OptimalExecution-v0: sell (or buy) a block of shares over a horizon (Almgren-Chriss)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from sekai.core import Env, ResetResult, StepResult
from sekai.envs.finance import _params
from sekai.envs.finance._episode import EpisodeTracker
from sekai.finance.execution import ExecutionState, ExecutionStep, step_execution
from sekai.spaces import Box

_SIDES = {"sell": 1, "buy": -1}


class OptimalExecutionEnv(Env[np.ndarray, np.ndarray]):
    """Liquidate (``side="sell"``) or acquire (``side="buy"``) ``shares`` in ``episode_length``
    steps, paying temporary and permanent price impact.

    The model is Almgren and Chriss (2000), :mod:`sekai.finance.execution`; the defaults are
    their paper's example. Money is in dollars, time in days:

    - ``shares`` (1,000,000): the block; ``side`` ("sell"): "sell" or "buy";
    - ``start_price`` (50.0): $ per share at the start; ``sigma`` (0.95): $ per share per sqrt(day);
    - ``dt`` (0.1): days per step; ``episode_length`` (50) steps, so the horizon is 5 days;
    - ``temporary_impact`` (2.5e-6): ``eta``, $ per share per (share per day) of trading rate;
    - ``permanent_impact`` (2.5e-7): ``gamma``, $ per share per share traded;
    - ``half_spread`` (0.0625): ``epsilon``, $ per share of a step that trades at all;
    - ``risk_aversion`` (0.0): ``lambda``, per $; > 0 subtracts
      ``lambda * sigma**2 * dt * remaining**2`` from each step's reward.

    Action: the fraction of the remaining shares to trade this step, ``[0, 1]`` (float32); the
    last step trades whatever remains, with its impact cost, whatever the action.
    Observation: ``[remaining / shares, time_remaining, price / start price - 1]`` (float32).
    Reward: the step's PnL, the change in cash plus the remaining position marked at the price,
    less the risk term; over an episode the PnL sums to minus the implementation shortfall.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"]}

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
        if side not in _SIDES:
            raise ValueError(f"side must be 'sell' or 'buy', got {side!r}")
        self.shares = _params.positive("shares", shares)
        self.side = side
        self.start_price = _params.positive("start_price", start_price)
        self.sigma = _params.non_negative("sigma", sigma)
        self.dt = _params.positive("dt", dt)
        self.episode_length = _params.steps("episode_length", episode_length)
        self.temporary_impact = _params.non_negative("temporary_impact", temporary_impact)
        self.permanent_impact = _params.non_negative("permanent_impact", permanent_impact)
        self.half_spread = _params.non_negative("half_spread", half_spread)
        self.risk_aversion = _params.non_negative("risk_aversion", risk_aversion)
        self.render_mode = _params.render_mode(render_mode, self.metadata["render_modes"])
        self.observation_space = observation_space(self)
        self.action_space = action_space(self)
        self._state = ExecutionState(1)
        self._episode = EpisodeTracker(1)
        self._last: dict[str, Any] = {}

    # -- state, one value each ----------------------------------------------------------------
    @property
    def price(self) -> float:
        """The price, with the permanent impact of the trades so far."""
        return float(self._state.price[0])

    @property
    def remaining(self) -> float:
        """Shares still to sell (or buy)."""
        return float(self._state.remaining[0])

    @property
    def position(self) -> float:
        """Shares held: ``remaining`` when selling, ``-remaining`` (still owed) when buying."""
        return _SIDES[self.side] * self.remaining

    @property
    def cash(self) -> float:
        return float(self._state.cash[0])

    @property
    def equity(self) -> float:
        """Cash plus the position at the price."""
        return float(self._state.value(_SIDES[self.side])[0])

    @property
    def elapsed_steps(self) -> int:
        return int(self._state.steps[0])

    @property
    def time_remaining(self) -> float:
        """Days left in the episode."""
        return (self.episode_length - self.elapsed_steps) * self.dt

    # -- Env API ------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        self._set_rng(seed)
        if options:
            raise ValueError(f"OptimalExecution-v0 takes no reset options, got {options!r}")
        self._state.reset(slice(None), self.start_price, self.shares)
        self._episode.reset(slice(None), self.equity)
        self._last = {}
        return ResetResult(observe(self, self._state)[0], {"price": self.price})

    def step(self, action: np.ndarray) -> StepResult:
        fraction = _params.box_actions(action, 0.0, 1.0, (1,), "OptimalExecution-v0")[None]
        result = advance(self, self._state, fraction, self.rng)
        info = {
            key: value[0].item() for key, value in step_infos(self, self._state, result).items()
        }
        self._episode.update(self._state.value(_SIDES[self.side]), result.pnl, result.traded)
        terminated = self.elapsed_steps >= self.episode_length
        if terminated:
            summary = self._episode.summary(slice(0, 1))
            info.update((key, value[0].item()) for key, value in summary.items())
        self._last = info
        observation = observe(self, self._state)[0]
        return StepResult(observation, float(result.reward[0]), terminated, False, info)

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        if not self._last:
            return f"step 0 price {self.price:.4f} remaining {self.remaining:.0f}"
        last = self._last
        return (
            f"step {self.elapsed_steps} {self.side} {last['traded']:.0f} "
            f"@ {last['fill_price']:.4f} price {last['price']:.4f} "
            f"remaining {last['remaining']:.0f} cost {last['cost']:.2f}"
        )


# -- the driver both the single and the native env use ----------------------------------------
def observation_space(params: Any) -> Box:
    horizon = params.episode_length * params.dt
    return Box(
        np.array([0.0, 0.0, -np.inf], np.float32),
        np.array([1.0, horizon, np.inf], np.float32),
        dtype=np.float32,
    )


def action_space(params: Any) -> Box:
    return Box(0.0, 1.0, shape=(1,), dtype=np.float32)


def advance(
    params: Any, state: ExecutionState, fraction: np.ndarray, rng: np.random.Generator
) -> ExecutionStep:
    """One step of every row of ``state`` with ``params``' current values and ``rng``'s draws
    (the same draws in the same order for a single env and a native env of one)."""
    return step_execution(
        state,
        fraction[:, 0],
        rng.standard_normal(len(fraction)),
        side=_SIDES[params.side],
        episode_length=params.episode_length,
        tau=params.dt,
        sigma=params.sigma,
        temporary_impact=params.temporary_impact,
        permanent_impact=params.permanent_impact,
        half_spread=params.half_spread,
        risk_aversion=params.risk_aversion,
    )


def observe(params: Any, state: ExecutionState) -> np.ndarray:
    """``[remaining / shares, time_remaining, price / start price - 1]``, new float32 array."""
    time_remaining = (params.episode_length - state.steps) * params.dt
    return np.stack(
        [state.remaining / params.shares, time_remaining, state.price / params.start_price - 1.0],
        axis=1,
    ).astype(np.float32)


def step_infos(params: Any, state: ExecutionState, result: ExecutionStep) -> dict[str, Any]:
    """The info arrays of a step: the trade, then the state after it."""
    side = _SIDES[params.side]
    return {
        "traded": result.traded,
        "fill_price": result.fill_price,
        "cost": result.cost,
        "pnl": result.pnl,
        "risk": result.risk,
        "price": state.price.copy(),
        "remaining": state.remaining.copy(),
        "position": side * state.remaining,
        "cash": state.cash.copy(),
        "equity": state.value(side),
        "time_remaining": (params.episode_length - state.steps) * params.dt,
    }
