"""sekai: reinforcement-learning environments for markets.

``import sekai`` is cheap: it imports no numpy and no plugin machinery. Every public name is
resolved on first access from a fixed table, so names that live in other distributions
(``sekai.SyncVecEnv``, ``sekai.make_vec``, ...) are reachable here once those are installed.
"""

from __future__ import annotations

import os
import sys

from sekai._version import __version__ as __version__


def _extend_path(path: list[str], *parts: str) -> None:
    """Add every ``sekai/...`` folder on sys.path, so each distribution's editable src/ joins."""
    for entry in sys.path:
        candidate = os.path.join(entry or os.getcwd(), *parts)
        if candidate not in path and os.path.isdir(candidate):
            path.append(candidate)


_extend_path(__path__, "sekai")

# public name -> module that defines it (a module name mapped to itself is a submodule).
_CORE = "sekai-core"
_LAZY: dict[str, str] = {
    # spaces
    "spaces": "sekai.spaces",
    **dict.fromkeys(
        [
            "Space",
            "Box",
            "Discrete",
            "MultiDiscrete",
            "MultiBinary",
            "Dict",
            "Tuple",
            "Sequence",
            "MaskedBox",
        ],
        "sekai.spaces",
    ),
    # env API
    **dict.fromkeys(["Env", "ResetResult", "StepResult", "EnvClosed"], "sekai.core"),
    **dict.fromkeys(["MultiAgentEnv", "MAResetResult", "MAStepResult"], "sekai.multi_agent"),
    # registry
    **dict.fromkeys(["register", "make", "spec", "registry", "EnvSpec"], "sekai.registration"),
    # wrappers
    "wrappers": "sekai.wrappers",
    **dict.fromkeys(
        [
            "Wrapper",
            "ObservationWrapper",
            "RewardWrapper",
            "ActionWrapper",
            "TimeLimit",
            "AutoReset",
            "OrderEnforcing",
            "ResetNeeded",
            "RecordEpisodeStatistics",
            "EpisodeStats",
            "EpisodeTracker",
            "TransformObservation",
            "TransformAction",
            "TransformReward",
            "FilterObservation",
            "FlattenObservation",
            "ReshapeObservation",
            "RescaleObservation",
            "DtypeObservation",
            "ClipAction",
            "RescaleAction",
            "ClipReward",
            "NormalizeObservation",
            "NormalizeReward",
            "TimeAwareObservation",
            "FrameStackObservation",
            "DelayObservation",
            "StickyAction",
            "RepeatAction",
            "PadSequenceObservation",
            "ActionMaskObservation",
            "get_action_mask",
        ],
        "sekai.wrappers",
    ),
    "check_env": "sekai.env_checker",
    "testing": "sekai.testing",
    "envs": "sekai.envs",
    # sekai-vector
    "vector": "sekai.vector",
    **dict.fromkeys(
        [
            "VecEnv",
            "SyncVecEnv",
            "AsyncVecEnv",
            "ProcVecEnv",
            "NativeVecEnv",
            "VecEnvWorkerError",
            "VecEnvClosed",
            "VecResetResult",
            "VecStepResult",
            "make_vec",
            "stack_infos",
            "VecWrapper",
            "VecObservationWrapper",
            "VecRewardWrapper",
            "VecActionWrapper",
            "VecRecordEpisodeStatistics",
            "VecNormalizeObservation",
            "VecNormalizeReward",
            "VecTransformObservation",
            "VecTransformReward",
        ],
        "sekai.vector",
    ),
    # sekai-finance and sekai-compat
    "finance": "sekai.finance",
    "compat": "sekai.compat",
}

# first module component below sekai -> the distribution that ships it
_DISTRIBUTIONS = {"vector": "sekai-vector", "finance": "sekai-finance", "compat": "sekai-compat"}


def __getattr__(name: str) -> object:
    try:
        module_name = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'sekai' has no attribute {name!r}") from None
    import importlib

    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        distribution = _DISTRIBUTIONS.get(module_name.split(".")[1], _CORE)
        if distribution != _CORE and error.name is not None and module_name.startswith(error.name):
            raise ModuleNotFoundError(
                f"sekai.{name} is part of the {distribution} distribution, which is not "
                f"installed; install it with: pip install {distribution}",
                name=error.name,
            ) from error
        raise
    value = module if module_name == f"sekai.{name}" else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


def _installed(module_name: str) -> bool:
    """Whether the distribution shipping ``module_name`` is installed (a folder on __path__)."""
    part = module_name.split(".")[1]
    return part not in _DISTRIBUTIONS or any(os.path.isdir(os.path.join(p, part)) for p in __path__)


# `from sekai import *` takes the public names of the installed distributions only.
__all__ = sorted(
    name
    for name, module_name in _LAZY.items()
    if not module_name.endswith(f".{name}") and _installed(module_name)
)
