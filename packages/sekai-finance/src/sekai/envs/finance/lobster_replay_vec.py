"""LobsterReplayVecEnv: LobsterReplay-v0's native vector version (needs sekai-vector): many
windows of the replayed days stepped in one compiled call."""

from __future__ import annotations

from sekai.envs.finance._native import FinanceVecEnv
from sekai.envs.finance.lobster_replay import LobsterReplayEnv


class LobsterReplayVecEnv(FinanceVecEnv):
    """``num_envs`` LobsterReplay-v0 windows, of any of its days, stepped together over the
    shared replayed days.
    Takes ``LobsterReplayEnv``'s keyword arguments plus ``max_episode_steps`` and
    ``autoreset``; the parameters live on ``vec.template``."""

    env_class = LobsterReplayEnv
