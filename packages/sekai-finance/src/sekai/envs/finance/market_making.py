"""MarketMaking-v0: quote a bid and an ask around a random mid-price (Avellaneda-Stoikov)."""

from __future__ import annotations

from typing import Any, ClassVar, cast

import numpy as np

from sekai.core import StepResult
from sekai.envs.finance._parameters import Parameter, ReadOnly
from sekai.envs.finance._pictures import Picture
from sekai.envs.finance._single import FinanceEnv, MarketModel
from sekai.finance.arguments import check_float, check_int, check_positive
from sekai.finance.market_making import FILL_MODELS, MarketMakingModel, MarketMakingModelOne
from sekai.spaces import Box


class MarketMakingEnv(FinanceEnv):
    """A dealer quotes one unit on each side of a mid-price for ``episode_length`` steps; see
    ``sekai.finance.market_making`` for the model (Avellaneda and Stoikov, 2008).

    Parameters (money in the asset's price units; time in the units of ``dt`` and ``sigma``):

    - ``start_price`` (100.0): the mid-price at the start of each episode;
    - ``sigma`` (2.0): volatility of the mid, price units per sqrt(time unit);
    - ``dt`` (0.005): time units per step; ``episode_length`` (200 steps): a horizon of 1;
    - ``arrival_rate`` (140.0): ``A``, market orders per time unit reaching a quote at the mid;
    - ``depth_decay`` (1.5): ``k``, per price unit: a quote ``d`` away is reached
      ``exp(-k d)`` as often;
    - ``max_inventory`` (20 units): a fill that would take the inventory past it (long or
      short) does not happen, so ``|inventory| <= max_inventory``; the env's addition, the
      paper's inventory is unbounded;
    - ``inventory_penalty`` (0.0): ``phi``, per unit squared per time unit; 0 makes the reward
      the PnL, > 0 subtracts the Cartea-Jaimungal running penalty ``phi * inventory**2 * dt``;
    - ``terminal_penalty`` (0.0): ``alpha``, per unit squared; > 0 subtracts
      ``alpha * inventory**2`` on an episode's last step, the cost of liquidating what is left;
    - ``max_depth`` (5.0 price units): the upper bound of the action space;
    - ``fill_model`` (``"bernoulli"``): a quote fills with probability ``A exp(-k d) dt`` (the
      paper's simulations), or with ``"poisson"`` ``1 - exp(-A exp(-k d) dt)``, ``d`` being its
      depth from the mid after the step's move (the quotes are set before it);
    - ``render_mode``: None, ``"ansi"`` or ``"rgb_array"``.

    Action: float32 ``[bid_depth, ask_depth]`` in ``[0, max_depth]``, distances from the mid.
    Observation: float32 ``[inventory, time_remaining]``. Reward: the step's PnL (change in
    ``cash + inventory * mid``) less the inventory penalties. Info: ``bid``, ``ask``,
    ``bid_filled``, ``ask_filled``, ``pnl``, ``penalty`` (running plus terminal), then
    ``price`` (the mid after the step), ``position`` (inventory), ``cash``, ``equity``,
    ``time_remaining``; at the episode's
    end also ``episode_return`` (PnL over ``start_price * max_inventory``), ``sharpe`` (of the
    step returns, scaled to one time unit), ``max_drawdown`` and ``turnover``.
    """

    parameters: ClassVar[tuple[str, ...]] = (
        "metadata",
        "start_price",
        "sigma",
        "dt",
        "episode_length",
        "arrival_rate",
        "depth_decay",
        "max_inventory",
        "inventory_penalty",
        "terminal_penalty",
        "max_depth",
        "fill_model",
    )
    picture = Picture(price="price", equity="equity", holding="position")
    state_attributes: ClassVar[tuple[str, ...]] = (
        "price",
        "position",
        "cash",
        "equity",
        "time_remaining",
    )

    dt = ReadOnly("it fixes the observation space's bound on time_remaining")
    episode_length = ReadOnly("it fixes the observation space's bound on time_remaining")
    max_inventory = ReadOnly("it fixes the observation space")
    max_depth = ReadOnly("it fixes the action space")
    start_price = Parameter(lambda value: check_positive("start_price", value))
    sigma = Parameter(lambda value: check_float("sigma", value, 0.0))
    arrival_rate = Parameter(lambda value: check_float("arrival_rate", value, 0.0))
    depth_decay = Parameter(lambda value: check_float("depth_decay", value, 0.0))
    inventory_penalty = Parameter(lambda value: check_float("inventory_penalty", value, 0.0))
    terminal_penalty = Parameter(lambda value: check_float("terminal_penalty", value, 0.0))
    fill_model = Parameter(lambda value: _check_fill_model(value))

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
        terminal_penalty: float = 0.0,
        max_depth: float = 5.0,
        fill_model: str = "bernoulli",
        render_mode: str | None = None,
    ) -> None:
        self._dt = check_positive("dt", dt)
        self._episode_length = check_int("episode_length", episode_length, 1)
        self._max_inventory = check_int("max_inventory", max_inventory, 1)
        self._max_depth = check_positive("max_depth", max_depth)
        self.start_price = start_price
        self.sigma = sigma
        self.arrival_rate = arrival_rate
        self.depth_decay = depth_decay
        self.inventory_penalty = inventory_penalty
        self.terminal_penalty = terminal_penalty
        self.fill_model = fill_model
        horizon = self._episode_length * self._dt
        self.observation_space = Box(
            np.array([-self._max_inventory, 0.0], np.float32),
            np.array([self._max_inventory, horizon], np.float32),
            dtype=np.float32,
        )
        self.action_space = Box(0.0, self._max_depth, shape=(2,), dtype=np.float32)
        super().__init__(render_mode)

    def _make_model(self, num_envs: int) -> MarketModel:
        return MarketMakingModel(self, num_envs)

    def _make_one_model(self) -> MarketMakingModelOne:
        return MarketMakingModelOne(self)

    def step(self, action: Any) -> StepResult:
        """The scalar fast path of ``MarketMakingModelOne``."""
        depths = self._box_values(action, 0.0, self._max_depth, "[bid_depth, ask_depth] quotes")
        model = cast(MarketMakingModelOne, self._model)
        return self._finish_step(model.step_one(depths, self.rng))


def _check_fill_model(value: object) -> str:
    if value not in FILL_MODELS:
        raise ValueError(f"fill_model must be one of {FILL_MODELS}, got {value!r}")
    return value  # type: ignore[return-value]
