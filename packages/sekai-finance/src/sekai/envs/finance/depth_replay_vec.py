"""DepthReplayVecEnv: DepthReplay-v0's native vector version (needs sekai-vector): many
windows of the replayed day stepped in one compiled call."""

from __future__ import annotations

from sekai.envs.finance._native import FinanceVecEnv
from sekai.envs.finance.depth_replay import DepthReplayEnv


class DepthReplayVecEnv(FinanceVecEnv):
    """``num_envs`` DepthReplay-v0 windows stepped together over the shared replayed day.
    Takes ``DepthReplayEnv``'s keyword arguments plus ``max_episode_steps`` and
    ``autoreset``; the parameters live on ``vec.template``."""

    env_class = DepthReplayEnv
