"""OptimalExecutionVecEnv: OptimalExecution-v0's native vector env, every trader in one set of
arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.envs.finance import _params
from sekai.envs.finance._episode import EpisodeTracker
from sekai.envs.finance.execution import (
    _SIDES,
    OptimalExecutionEnv,
    advance,
    observe,
    step_infos,
)
from sekai.finance.execution import ExecutionState
from sekai.vector.base import AutoresetMode
from sekai.vector.native import InfoArrays, NativeVecEnv


class OptimalExecutionVecEnv(NativeVecEnv):
    """``num_envs`` OptimalExecution-v0 traders stepped together; the parameters live on
    ``self.template``, an OptimalExecutionEnv built from the same keyword arguments."""

    def __init__(
        self,
        num_envs: int,
        *,
        max_episode_steps: int | None = None,
        autoreset: AutoresetMode = True,
        **kwargs: Any,
    ) -> None:
        self.template = OptimalExecutionEnv(**kwargs)
        super().__init__(
            num_envs,
            self.template.observation_space,
            self.template.action_space,
            autoreset=autoreset,
            max_episode_steps=max_episode_steps,
        )
        self._state = ExecutionState(self.num_envs)
        self._episode = EpisodeTracker(self.num_envs)

    @property
    def price(self) -> np.ndarray:
        return self._state.price.copy()

    @property
    def remaining(self) -> np.ndarray:
        return self._state.remaining.copy()

    @property
    def position(self) -> np.ndarray:
        return _SIDES[self.template.side] * self._state.remaining

    @property
    def cash(self) -> np.ndarray:
        return self._state.cash.copy()

    @property
    def equity(self) -> np.ndarray:
        return self._state.value(_SIDES[self.template.side])

    @property
    def time_remaining(self) -> np.ndarray:
        return (self.template.episode_length - self._state.steps) * self.template.dt

    def _reset_envs(self, indices: np.ndarray, options: list[dict[str, Any] | None]) -> None:
        if any(options):
            raise ValueError(f"OptimalExecution-v0 takes no reset options, got {options!r}")
        template = self.template
        self._state.reset(indices, template.start_price, template.shares)
        self._episode.reset(indices, self._state.value(_SIDES[template.side])[indices])

    def _reset_infos(self, indices: np.ndarray) -> InfoArrays:
        return {"price": self._state.price[indices]}

    def _observe(self) -> np.ndarray:
        return observe(self.template, self._state)

    def _step(self, actions: Any) -> tuple[Any, Any, Any, InfoArrays]:
        template = self.template
        shape = (self.num_envs, 1)
        fraction = _params.box_actions(actions, 0.0, 1.0, shape, "OptimalExecution-v0")
        result = advance(template, self._state, fraction, self.rng)
        infos = step_infos(template, self._state, result)
        self._episode.update(infos["equity"], result.pnl, result.traded)
        terminated = self._state.steps >= template.episode_length
        infos.update(self._episode.final_infos(terminated))
        return result.reward, terminated, np.zeros(self.num_envs, bool), infos
