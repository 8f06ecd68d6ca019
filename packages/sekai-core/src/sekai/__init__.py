"""sekai: reinforcement-learning environments for markets.

``import sekai`` is cheap: it imports no numpy and no plugin machinery. Every public name is
resolved on first access: sekai-core's own from a fixed table, the names of other
distributions (``sekai.SyncVecEnv``, ``sekai.make_vec``, ...) from what their plugins register
(``sekai_register_names``), asked only when a name is not core's. A name of a sekai
distribution that is not installed raises an error naming it (``sekai.registration``'s table).
"""

from __future__ import annotations

import os
import sys

from sekai._version import __version__ as __version__

TYPE_CHECKING = False  # typing costs milliseconds at import; the type checker sets this
if TYPE_CHECKING:
    from sekai.registration import PublicName
del TYPE_CHECKING


def _extend_path(path: list[str], *parts: str) -> None:
    """Add every ``sekai/...`` folder on sys.path, so each distribution's editable src/ joins."""
    for entry in sys.path:
        candidate = os.path.join(entry or os.getcwd(), *parts)
        if candidate not in path and os.path.isdir(candidate):
            path.append(candidate)


_extend_path(__path__, "sekai")

# sekai-core's public names -> module that defines it (a module name mapped to itself is a
# submodule)
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
    **dict.fromkeys(["register", "spec", "registry", "EnvSpec"], "sekai.registration"),
    "make": "sekai.making",
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
}


def __getattr__(name: str) -> object:
    if name == "__all__":  # `from sekai import *`: core's names and the installed plugins'
        value: object = sorted(
            {n for n, m in _LAZY.items() if m != f"sekai.{n}"}
            | {n for n, entry in _plugin_names().items() if entry.module != f"sekai.{n}"}
        )
    elif name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name])
        value = module if _LAZY[name] == f"sekai.{name}" else getattr(module, name)
    elif name.startswith("_"):  # probes for dunders and private names load no plugin
        raise AttributeError(f"module 'sekai' has no attribute {name!r}")
    elif _is_submodule(name):  # also what `from sekai import x` asks before importing sekai.x
        import importlib

        value = importlib.import_module(f"sekai.{name}")
    elif name in (names := _plugin_names()):
        value = names[name].load()
    else:
        from sekai.registration import _missing_name_message

        raise AttributeError(_missing_name_message("sekai", name))
    globals()[name] = value
    return value


def _is_submodule(name: str) -> bool:
    """Whether some distribution ships ``sekai/<name>.py`` or ``sekai/<name>/``."""
    return any(
        os.path.isfile(os.path.join(folder, f"{name}.py"))
        or os.path.isdir(os.path.join(folder, name))
        for folder in __path__
    )


def _plugin_names() -> dict[str, PublicName]:
    """The names installed plugins add to ``sekai`` (this loads the plugins)."""
    from sekai.registration import registry

    return registry.names("sekai")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_plugin_names()})
