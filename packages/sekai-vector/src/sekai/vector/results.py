"""What a VecEnv's reset() and step() return, and stack_infos() for array-minded callers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np


class VecResetResult(NamedTuple):
    """What ``VecEnv.reset`` returns; unpacks as ``observations, infos = vec.reset()``."""

    observations: Any
    infos: Sequence[dict[str, Any]]

    @property
    def dones(self) -> np.ndarray:
        """All False: a reset starts an episode in every sub-env."""
        return np.zeros(len(self.infos), dtype=bool)


class VecStepResult(NamedTuple):
    """What ``VecEnv.step`` returns: one entry per sub-env in every field."""

    observations: Any
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    infos: Sequence[dict[str, Any]]

    @property
    def dones(self) -> np.ndarray:
        """``terminated | truncated``: which sub-envs finished an episode in this step."""
        return self.terminated | self.truncated


def stack_infos(infos: Sequence[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Stack the keys present in every sub-env's info into arrays with a leading sub-env axis."""
    if not infos:
        return {}
    common = [key for key in infos[0] if all(key in info for info in infos)]
    return {key: _stack([info[key] for info in infos]) for key in common}


def _stack(values: list[Any]) -> np.ndarray:
    try:
        return np.asarray(values)
    except ValueError:  # ragged values: keep them as objects rather than fail
        stacked = np.empty(len(values), dtype=object)
        for index, value in enumerate(values):
            stacked[index] = value
        return stacked
