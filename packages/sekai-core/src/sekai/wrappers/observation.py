"""Stateless observation wrappers that change an observation's form: select, flatten, reshape,
rescale or cast it. Each returns new arrays, never the env's own."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from sekai.core import ActType, Env
from sekai.spaces import Box, Dict, MaskedBox, Space, Tuple, flatten, flatten_space
from sekai.wrappers._parts import (
    Part,
    Path,
    map_part_spaces,
    map_parts,
    require_box,
    require_box_parts,
)
from sekai.wrappers.base import ObservationWrapper


class FilterObservation(ObservationWrapper[Any, ActType]):
    """Keep only some parts of a Dict observation (by key) or a Tuple observation (by index).

    A MaskedBox is a Dict, so its "values" or "mask" can be selected too; the result is then a
    plain Dict.
    """

    def __init__(self, env: Env[Any, ActType], keys: Iterable[str | int]) -> None:
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, Dict | Tuple):
            raise TypeError(
                f"FilterObservation needs a Dict or Tuple observation space, got {space}"
            )
        kept: list[Any] = list(keys)
        if not kept:
            raise ValueError("FilterObservation needs at least one key to keep")
        if len(set(kept)) != len(kept):
            raise ValueError(f"FilterObservation keys must be unique, got {kept}")
        available = list(space.keys()) if isinstance(space, Dict) else list(range(len(space)))
        missing = [key for key in kept if key not in available]
        if missing:
            raise ValueError(f"keys {missing} are not in the observation space; it has {available}")
        self.keys = kept
        if isinstance(space, Dict):
            self.observation_space = Dict({key: space[key] for key in kept})
        else:
            self.observation_space = Tuple([space[key] for key in kept])

    def observation(self, observation: Any) -> Any:
        if isinstance(self.observation_space, Dict):
            return {key: copy.deepcopy(observation[key]) for key in self.keys}
        return tuple(copy.deepcopy(observation[key]) for key in self.keys)


class FlattenObservation(ObservationWrapper[np.ndarray, ActType]):
    """Flatten every observation to a 1-D float32 array with ``sekai.spaces.flatten``."""

    def __init__(self, env: Env[Any, ActType]) -> None:
        super().__init__(env)
        space = env.observation_space
        if not space.is_flattenable:
            raise TypeError(
                f"FlattenObservation needs a flattenable observation space, got {space}; "
                "a Sequence can be padded into a MaskedBox with PadSequenceObservation first"
            )
        self._inner_space = space
        self.observation_space = flatten_space(space)

    def observation(self, observation: Any) -> np.ndarray:
        return flatten(self._inner_space, observation)


class ReshapeObservation(ObservationWrapper[np.ndarray, ActType]):
    """Reshape every Box observation to ``shape`` (same number of elements; as in numpy, one
    entry may be -1 and is then inferred)."""

    def __init__(self, env: Env[Any, ActType], shape: int | Sequence[int]) -> None:
        super().__init__(env)
        box = require_box(env.observation_space, "ReshapeObservation")
        requested = (shape,) if isinstance(shape, int) else tuple(shape)
        try:
            self.shape: tuple[int, ...] = box.low.reshape(requested).shape
        except (ValueError, TypeError):
            raise ValueError(
                f"cannot reshape observations of shape {box.shape} to {requested}"
            ) from None
        self.observation_space = Box(
            box.low.reshape(self.shape), box.high.reshape(self.shape), dtype=box.dtype
        )

    def observation(self, observation: Any) -> np.ndarray:
        return np.array(observation).reshape(self.shape)


class RescaleObservation(ObservationWrapper[np.ndarray, ActType]):
    """Map a bounded Box observation affinely from its bounds onto ``[min_obs, max_obs]``."""

    def __init__(self, env: Env[Any, ActType], min_obs: Any, max_obs: Any) -> None:
        super().__init__(env)
        box = require_box(env.observation_space, "RescaleObservation")
        if not np.all(np.isfinite(box.low)) or not np.all(np.isfinite(box.high)):
            raise ValueError(f"RescaleObservation needs finite observation bounds, got {box}")
        dtype = box.dtype if np.issubdtype(box.dtype, np.floating) else np.dtype(np.float32)
        self.min_obs = np.broadcast_to(np.asarray(min_obs, dtype), box.shape)
        self.max_obs = np.broadcast_to(np.asarray(max_obs, dtype), box.shape)
        if not np.all(self.min_obs < self.max_obs):
            raise ValueError(f"min_obs must be below max_obs, got {min_obs} and {max_obs}")
        self._low = box.low.astype(np.float64)
        self._span = box.high.astype(np.float64) - self._low
        self.observation_space = Box(self.min_obs, self.max_obs, dtype=dtype)

    def observation(self, observation: Any) -> np.ndarray:
        fraction = (np.asarray(observation, np.float64) - self._low) / self._span
        scaled = self.min_obs + fraction * (self.max_obs - self.min_obs)
        return np.clip(scaled, self.min_obs, self.max_obs).astype(self.observation_space.dtype)


class DtypeObservation(ObservationWrapper[Any, ActType]):
    """Cast every Box part of the observation (and a MaskedBox's values) to ``dtype``."""

    def __init__(self, env: Env[Any, ActType], dtype: Any) -> None:
        super().__init__(env)
        require_box_parts(env.observation_space, "DtypeObservation")
        self.dtype = np.dtype(dtype)
        self._inner_space = env.observation_space
        self.observation_space = map_part_spaces(env.observation_space, self._cast_space)

    def observation(self, observation: Any) -> Any:
        return map_parts(self._inner_space, observation, self._cast)

    def _cast(self, path: Path, space: Part, part: Any) -> Any:
        if isinstance(space, MaskedBox):
            return {
                "values": np.array(part["values"], self.dtype),
                "mask": np.array(part["mask"]),
            }
        return np.array(part, self.dtype)

    def _cast_space(self, part: Part) -> Space[Any]:
        box = part.element_space if isinstance(part, MaskedBox) else part
        low, high = box.low, box.high
        if np.issubdtype(self.dtype, np.integer):  # keep only the integers inside the bounds
            low, high = np.ceil(low), np.floor(high)
        if isinstance(part, MaskedBox):
            return MaskedBox(
                low,
                high,
                max_size=part.max_size,
                dtype=self.dtype,
                fill_value=part.fill_value,
            )
        return Box(low, high, dtype=self.dtype)
