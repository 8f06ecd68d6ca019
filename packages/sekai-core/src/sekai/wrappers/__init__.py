"""Wrappers: change an env's observations, actions, rewards or episode rules one layer at a time.

Write a wrapper by subclassing :class:`Wrapper` (or :class:`ObservationWrapper`,
:class:`RewardWrapper`, :class:`ActionWrapper`) and overriding its hooks; see ``base``.
"""

from sekai.wrappers.autoreset import AutoReset, autoreset_result
from sekai.wrappers.base import (
    ActionWrapper,
    EnvCall,
    ObservationWrapper,
    RewardWrapper,
    Wrapper,
    async_run_plan,
    run_plan,
)
from sekai.wrappers.order_enforcing import OrderEnforcing, ResetNeeded
from sekai.wrappers.time_limit import TimeLimit

__all__ = [
    "ActionWrapper",
    "AutoReset",
    "EnvCall",
    "ObservationWrapper",
    "OrderEnforcing",
    "ResetNeeded",
    "RewardWrapper",
    "TimeLimit",
    "Wrapper",
    "async_run_plan",
    "autoreset_result",
    "run_plan",
]
