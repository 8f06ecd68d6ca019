"""MarketMakingVecEnv: MarketMaking-v0's native vector env, every dealer in one set of arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.envs.finance import _params
from sekai.envs.finance._episode import EpisodeTracker
from sekai.envs.finance.market_making import (
    MarketMakingEnv,
    advance,
    observe,
    step_infos,
)
from sekai.finance.market_making import MarketMakingState
from sekai.vector.base import AutoresetMode
from sekai.vector.native import InfoArrays, NativeVecEnv


class MarketMakingVecEnv(NativeVecEnv):
    """``num_envs`` MarketMaking-v0 dealers stepped together; the parameters live on
    ``self.template``, a MarketMakingEnv built from the same keyword arguments."""

    def __init__(
        self,
        num_envs: int,
        *,
        max_episode_steps: int | None = None,
        autoreset: AutoresetMode = True,
        **kwargs: Any,
    ) -> None:
        self.template = MarketMakingEnv(**kwargs)
        super().__init__(
            num_envs,
            self.template.observation_space,
            self.template.action_space,
            autoreset=autoreset,
            max_episode_steps=max_episode_steps,
        )
        self._state = MarketMakingState(self.num_envs)
        self._episode = EpisodeTracker(self.num_envs)

    @property
    def price(self) -> np.ndarray:
        return self._state.mid.copy()

    @property
    def position(self) -> np.ndarray:
        return self._state.inventory.copy()

    @property
    def cash(self) -> np.ndarray:
        return self._state.cash.copy()

    @property
    def equity(self) -> np.ndarray:
        return self._state.value()

    @property
    def time_remaining(self) -> np.ndarray:
        return (self.template.episode_length - self._state.steps) * self.template.dt

    def _reset_envs(self, indices: np.ndarray, options: list[dict[str, Any] | None]) -> None:
        if any(options):
            raise ValueError(f"MarketMaking-v0 takes no reset options, got {options!r}")
        self._state.reset(indices, self.template.start_price)
        self._episode.reset(indices, 0.0)

    def _reset_infos(self, indices: np.ndarray) -> InfoArrays:
        return {"price": self._state.mid[indices]}

    def _observe(self) -> np.ndarray:
        return observe(self.template, self._state)

    def _step(self, actions: Any) -> tuple[Any, Any, Any, InfoArrays]:
        template = self.template
        shape = (self.num_envs, 2)
        depths = _params.box_actions(actions, 0.0, template.max_depth, shape, "MarketMaking-v0")
        result = advance(template, self._state, depths, self.rng)
        infos = step_infos(template, self._state, result)
        self._episode.update(infos["equity"], result.pnl, result.bid_filled + result.ask_filled)
        terminated = self._state.steps >= template.episode_length
        infos.update(self._episode.final_infos(terminated))
        return result.reward, terminated, np.zeros(self.num_envs, bool), infos
