"""PortfolioVecEnv: Portfolio-v0's native vector version (needs sekai-vector)."""

from __future__ import annotations

from sekai.envs.finance._native import FinanceVecEnv
from sekai.envs.finance.portfolio import PortfolioEnv


class PortfolioVecEnv(FinanceVecEnv):
    """``num_envs`` Portfolio-v0 envs stepped together. Takes
    ``PortfolioEnv``'s keyword arguments plus
    ``max_episode_steps`` and ``autoreset``; the parameters live on ``vec.template``."""

    env_class = PortfolioEnv
