"""Wrappers: change an env's observations, actions, rewards or episode rules one layer at a time.

Write a wrapper by subclassing ``Wrapper`` (or ``ObservationWrapper``,
``RewardWrapper``, ``ActionWrapper``) and overriding its hooks; see ``base``.
"""

from sekai.wrappers.action import ClipAction, RescaleAction
from sekai.wrappers.action_mask import ActionMaskObservation, get_action_mask
from sekai.wrappers.action_repeat import RepeatAction, StickyAction
from sekai.wrappers.autoreset import AutoReset, autoreset_result
from sekai.wrappers.base import (
    ActionWrapper,
    EnvCall,
    ObservationWrapper,
    Plan,
    RewardWrapper,
    Wrapper,
    async_run_plan,
    route_async_to_sync_overrides,
    run_plan,
)
from sekai.wrappers.episode_statistics import (
    EpisodeStats,
    EpisodeTracker,
    RecordEpisodeStatistics,
    make_tracker,
)
from sekai.wrappers.history import DelayObservation, FrameStackObservation
from sekai.wrappers.normalize import NormalizeObservation, NormalizeReward, ObservationNormalizer
from sekai.wrappers.observation import (
    DtypeObservation,
    FilterObservation,
    FlattenObservation,
    RescaleObservation,
    ReshapeObservation,
)
from sekai.wrappers.order_enforcing import OrderEnforcing, ResetNeeded
from sekai.wrappers.pad_sequence import PadSequenceObservation
from sekai.wrappers.reward import ClipReward
from sekai.wrappers.running_stats import EWMMeanStd, MeanStd, RunningMeanStd
from sekai.wrappers.time_aware import TimeAwareObservation
from sekai.wrappers.time_limit import TimeLimit
from sekai.wrappers.transform import TransformAction, TransformObservation, TransformReward

__all__ = [
    "ActionMaskObservation",
    "ActionWrapper",
    "AutoReset",
    "ClipAction",
    "ClipReward",
    "DelayObservation",
    "DtypeObservation",
    "EWMMeanStd",
    "EnvCall",
    "EpisodeStats",
    "EpisodeTracker",
    "FilterObservation",
    "FlattenObservation",
    "FrameStackObservation",
    "MeanStd",
    "NormalizeObservation",
    "NormalizeReward",
    "ObservationNormalizer",
    "ObservationWrapper",
    "OrderEnforcing",
    "PadSequenceObservation",
    "Plan",
    "RecordEpisodeStatistics",
    "RepeatAction",
    "RescaleAction",
    "RescaleObservation",
    "ReshapeObservation",
    "ResetNeeded",
    "RewardWrapper",
    "RunningMeanStd",
    "StickyAction",
    "TimeAwareObservation",
    "TimeLimit",
    "TransformAction",
    "TransformObservation",
    "TransformReward",
    "Wrapper",
    "async_run_plan",
    "autoreset_result",
    "get_action_mask",
    "make_tracker",
    "route_async_to_sync_overrides",
    "run_plan",
]
