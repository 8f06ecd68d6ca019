"""OptimalExecutionVecEnv: OptimalExecution-v0's native vector version (needs sekai-vector)."""

from __future__ import annotations

from sekai.envs.finance._native import FinanceVecEnv
from sekai.envs.finance.execution import OptimalExecutionEnv


class OptimalExecutionVecEnv(FinanceVecEnv):
    """``num_envs`` OptimalExecution-v0 traders stepped together. Takes
    ``OptimalExecutionEnv``'s keyword arguments plus
    ``max_episode_steps`` and ``autoreset``; the parameters live on ``vec.template``."""

    env_class = OptimalExecutionEnv
