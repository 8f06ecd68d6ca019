"""ReplayExecutionVecEnv: ReplayExecution-v0's native vector version (needs sekai-vector):
many windows of the replayed days, each selling its block, stepped in one compiled call."""

from __future__ import annotations

from sekai.envs.finance._native import FinanceVecEnv
from sekai.envs.finance.replay_execution import ReplayExecutionEnv


class ReplayExecutionVecEnv(FinanceVecEnv):
    """``num_envs`` ReplayExecution-v0 windows stepped together over the shared replayed days.
    Takes ``ReplayExecutionEnv``'s keyword arguments plus ``max_episode_steps`` and
    ``autoreset``; the parameters live on ``vec.template``."""

    env_class = ReplayExecutionEnv
