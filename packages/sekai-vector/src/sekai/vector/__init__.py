"""Vector environments: every backend, make_vec and the vector wrappers.

All of them are also reachable from ``sekai`` itself (``sekai.SyncVecEnv``, ``sekai.make_vec``,
...), resolved lazily.
"""

from sekai.vector.async_ import AsyncVecEnv
from sekai.vector.base import VecEnv
from sekai.vector.errors import VecEnvClosed, VecEnvWorkerError
from sekai.vector.making import make_vec
from sekai.vector.native import NativeVecEnv
from sekai.vector.proc import ProcVecEnv
from sekai.vector.results import VecResetResult, VecStepResult, stack_infos
from sekai.vector.sync import SyncVecEnv
from sekai.vector.wrappers import (
    VecActionWrapper,
    VecNormalizeObservation,
    VecNormalizeReward,
    VecObservationWrapper,
    VecRecordEpisodeStatistics,
    VecRewardWrapper,
    VecTransformObservation,
    VecTransformReward,
    VecWrapper,
)

__all__ = [
    "AsyncVecEnv",
    "NativeVecEnv",
    "ProcVecEnv",
    "SyncVecEnv",
    "VecActionWrapper",
    "VecEnv",
    "VecEnvClosed",
    "VecEnvWorkerError",
    "VecNormalizeObservation",
    "VecNormalizeReward",
    "VecObservationWrapper",
    "VecRecordEpisodeStatistics",
    "VecResetResult",
    "VecRewardWrapper",
    "VecStepResult",
    "VecTransformObservation",
    "VecTransformReward",
    "VecWrapper",
    "make_vec",
    "stack_infos",
]
