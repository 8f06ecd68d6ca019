"""Vector wrappers: wrap a whole VecEnv, on every backend."""

from sekai.vector.wrappers.base import (
    VecActionWrapper,
    VecObservationWrapper,
    VecRewardWrapper,
    VecWrapper,
)
from sekai.vector.wrappers.episode_statistics import VecRecordEpisodeStatistics
from sekai.vector.wrappers.normalize import VecNormalizeObservation, VecNormalizeReward
from sekai.vector.wrappers.transform import VecTransformObservation, VecTransformReward

__all__ = [
    "VecActionWrapper",
    "VecNormalizeObservation",
    "VecNormalizeReward",
    "VecObservationWrapper",
    "VecRecordEpisodeStatistics",
    "VecRewardWrapper",
    "VecTransformObservation",
    "VecTransformReward",
    "VecWrapper",
]
