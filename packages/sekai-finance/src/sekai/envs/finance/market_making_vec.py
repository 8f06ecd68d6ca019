"""MarketMakingVecEnv: MarketMaking-v0's native vector version (needs sekai-vector)."""

from __future__ import annotations

from sekai.envs.finance._native import FinanceVecEnv
from sekai.envs.finance.market_making import MarketMakingEnv


class MarketMakingVecEnv(FinanceVecEnv):
    """``num_envs`` MarketMaking-v0 dealers stepped together. Takes
    ``MarketMakingEnv``'s keyword arguments plus
    ``max_episode_steps`` and ``autoreset``; the parameters live on ``vec.template``."""

    env_class = MarketMakingEnv
