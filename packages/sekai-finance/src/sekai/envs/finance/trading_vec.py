"""TradingVecEnv: Trading-v0's native vector version (needs sekai-vector)."""

from __future__ import annotations

from sekai.envs.finance._native import FinanceVecEnv
from sekai.envs.finance.trading import TradingEnv


class TradingVecEnv(FinanceVecEnv):
    """``num_envs`` Trading-v0 envs stepped together on one shared price history. Takes
    ``TradingEnv``'s keyword arguments plus
    ``max_episode_steps`` and ``autoreset``; the parameters live on ``vec.template``."""

    env_class = TradingEnv
