"""MarketMaking-v0: quote a bid and an ask around a random mid-price (Avellaneda-Stoikov)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from sekai.core import Env, ResetResult, StepResult
from sekai.envs.finance import _params
from sekai.envs.finance._episode import EpisodeTracker
from sekai.finance.market_making import MarketMakingState, MarketMakingStep, step_market_making
from sekai.spaces import Box


class MarketMakingEnv(Env[np.ndarray, np.ndarray]):
    """A dealer quotes one unit on each side of a mid-price for ``episode_length`` steps.

    The model is Avellaneda and Stoikov (2008), :mod:`sekai.finance.market_making`. Parameters
    (price units are the asset's currency, time units are those of ``dt`` and ``sigma``):

    - ``start_price`` (100.0): the mid-price at the start of each episode;
    - ``sigma`` (2.0): volatility of the mid, price units per sqrt(time unit);
    - ``dt`` (0.005): time units per step; ``episode_length`` (200) steps, so the horizon is 1;
    - ``arrival_rate`` (140.0): ``A``, market orders per time unit that reach a quote at the mid;
    - ``depth_decay`` (1.5): ``k``, per price unit: a quote ``d`` away is reached ``exp(-k d)``
      as often;
    - ``max_inventory`` (20): units; at the limit the side that would exceed it is not filled;
    - ``inventory_penalty`` (0.0): ``phi``, price units per unit squared per time unit; 0 gives
      the pure PnL reward, > 0 the Cartea-Jaimungal running penalty ``phi * inventory**2 * dt``;
    - ``max_depth`` (5.0): price units, the upper bound of the action space.

    Action: ``[bid_depth, ask_depth]`` in ``[0, max_depth]`` (float32), distances from the mid.
    Observation: ``[inventory, time_remaining]`` (float32). Reward: the step's PnL (change in
    ``cash + inventory * mid``) minus the inventory penalty. The episode terminates when time runs
    out; the inventory left is valued at the mid.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"]}

    def __init__(
        self,
        *,
        start_price: float = 100.0,
        sigma: float = 2.0,
        dt: float = 0.005,
        episode_length: int = 200,
        arrival_rate: float = 140.0,
        depth_decay: float = 1.5,
        max_inventory: int = 20,
        inventory_penalty: float = 0.0,
        max_depth: float = 5.0,
        render_mode: str | None = None,
    ) -> None:
        self.start_price = _params.positive("start_price", start_price)
        self.sigma = _params.non_negative("sigma", sigma)
        self.dt = _params.positive("dt", dt)
        self.episode_length = _params.steps("episode_length", episode_length)
        self.arrival_rate = _params.non_negative("arrival_rate", arrival_rate)
        self.depth_decay = _params.non_negative("depth_decay", depth_decay)
        self.max_inventory = _params.steps("max_inventory", max_inventory)
        self.inventory_penalty = _params.non_negative("inventory_penalty", inventory_penalty)
        self.max_depth = _params.positive("max_depth", max_depth)
        self.render_mode = _params.render_mode(render_mode, self.metadata["render_modes"])
        self.observation_space = observation_space(self)
        self.action_space = action_space(self)
        self._state = MarketMakingState(1)
        self._episode = EpisodeTracker(1)
        self._last: dict[str, Any] = {}

    # -- state, one value each ----------------------------------------------------------------
    @property
    def price(self) -> float:
        """The mid-price."""
        return float(self._state.mid[0])

    @property
    def position(self) -> float:
        """The inventory, in units (negative when short)."""
        return float(self._state.inventory[0])

    @property
    def cash(self) -> float:
        return float(self._state.cash[0])

    @property
    def equity(self) -> float:
        """Cash plus inventory at the mid: the PnL so far this episode."""
        return float(self._state.value()[0])

    @property
    def elapsed_steps(self) -> int:
        return int(self._state.steps[0])

    @property
    def time_remaining(self) -> float:
        """Time units left in the episode."""
        return (self.episode_length - self.elapsed_steps) * self.dt

    # -- Env API ------------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        self._set_rng(seed)
        if options:
            raise ValueError(f"MarketMaking-v0 takes no reset options, got {options!r}")
        self._state.reset(slice(None), self.start_price)
        self._episode.reset(slice(None), 0.0)
        self._last = {}
        return ResetResult(observe(self, self._state)[0], {"price": self.price})

    def step(self, action: np.ndarray) -> StepResult:
        depths = _params.box_actions(action, 0.0, self.max_depth, (2,), "MarketMaking-v0")[None]
        result = advance(self, self._state, depths, self.rng)
        info = {
            key: value[0].item() for key, value in step_infos(self, self._state, result).items()
        }
        equity = self._state.value()
        self._episode.update(equity, result.pnl, result.bid_filled + result.ask_filled)
        terminated = self.elapsed_steps >= self.episode_length
        if terminated:
            info.update(
                (key, value[0].item()) for key, value in self._episode.summary(slice(0, 1)).items()
            )
        self._last = info
        observation = observe(self, self._state)[0]
        return StepResult(observation, float(result.reward[0]), terminated, False, info)

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        if not self._last:
            return f"step 0 mid {self.price:.2f} inventory 0 equity 0.00"
        last = self._last
        return (
            f"step {self.elapsed_steps} mid {last['price']:.2f} "
            f"bid {last['bid']:.2f}{'*' if last['bid_filled'] else ' '} "
            f"ask {last['ask']:.2f}{'*' if last['ask_filled'] else ' '} "
            f"inventory {last['position']:+.0f} equity {last['equity']:.2f}"
        )


# -- the driver both the single and the native env use ----------------------------------------
def observation_space(params: Any) -> Box:
    horizon = params.episode_length * params.dt
    return Box(
        np.array([-params.max_inventory, 0.0], np.float32),
        np.array([params.max_inventory, horizon], np.float32),
        dtype=np.float32,
    )


def action_space(params: Any) -> Box:
    return Box(0.0, params.max_depth, shape=(2,), dtype=np.float32)


def advance(
    params: Any, state: MarketMakingState, depths: np.ndarray, rng: np.random.Generator
) -> MarketMakingStep:
    """One step of every row of ``state`` with ``params``' current values and ``rng``'s draws
    (the same draws in the same order for a single env and a native env of one)."""
    n = len(depths)
    uniforms, shocks = rng.random((n, 2)), rng.standard_normal(n)
    return step_market_making(
        state,
        depths[:, 0],
        depths[:, 1],
        uniforms,
        shocks,
        sigma=params.sigma,
        dt=params.dt,
        arrival_rate=params.arrival_rate,
        depth_decay=params.depth_decay,
        max_inventory=params.max_inventory,
        inventory_penalty=params.inventory_penalty,
    )


def observe(params: Any, state: MarketMakingState) -> np.ndarray:
    """``[inventory, time_remaining]`` of every row, as a new float32 array."""
    time_remaining = (params.episode_length - state.steps) * params.dt
    return np.stack([state.inventory, time_remaining], axis=1).astype(np.float32)


def step_infos(params: Any, state: MarketMakingState, result: MarketMakingStep) -> dict[str, Any]:
    """The info arrays of a step: the quotes and fills, then the state after the step."""
    return {
        "bid": result.bid,
        "ask": result.ask,
        "bid_filled": result.bid_filled,
        "ask_filled": result.ask_filled,
        "pnl": result.pnl,
        "penalty": result.penalty,
        "price": state.mid.copy(),
        "position": state.inventory.copy(),
        "cash": state.cash.copy(),
        "equity": state.value(),
        "time_remaining": (params.episode_length - state.steps) * params.dt,
    }
