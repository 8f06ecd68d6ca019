"""ClipReward: bound every reward."""

from __future__ import annotations

import math

from sekai.core import ActType, Env, ObsType
from sekai.wrappers.base import RewardWrapper


class ClipReward(RewardWrapper[ObsType, ActType]):
    """Clip every reward into ``[min_reward, max_reward]`` (either bound may be None)."""

    def __init__(
        self,
        env: Env[ObsType, ActType],
        min_reward: float | None = None,
        max_reward: float | None = None,
    ) -> None:
        if min_reward is None and max_reward is None:
            raise ValueError("ClipReward needs min_reward, max_reward or both")
        if any(bound is not None and math.isnan(bound) for bound in (min_reward, max_reward)):
            raise ValueError("ClipReward bounds must not be NaN (they would clip nothing)")
        if min_reward is not None and max_reward is not None and min_reward > max_reward:
            raise ValueError(
                f"min_reward must not exceed max_reward, got {min_reward} and {max_reward}"
            )
        super().__init__(env)
        self.min_reward = min_reward
        self.max_reward = max_reward

    def reward(self, reward: float) -> float:
        if self.min_reward is not None:
            reward = max(reward, self.min_reward)
        if self.max_reward is not None:
            reward = min(reward, self.max_reward)
        return float(reward)
