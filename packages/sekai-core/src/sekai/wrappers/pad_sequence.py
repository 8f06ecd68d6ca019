"""PadSequenceObservation: variable-length Sequence observations as fixed-shape MaskedBoxes."""

from __future__ import annotations

from typing import Any

from sekai.core import ActType, Env
from sekai.spaces import Box, MaskedBox, Sequence
from sekai.wrappers._parts import Path, find_parts, map_part_spaces, map_parts
from sekai.wrappers.base import ObservationWrapper


class PadSequenceObservation(ObservationWrapper[Any, ActType]):
    """Replace every Sequence part of the observation (of Box elements) by a MaskedBox.

    The elements fill the first slots in order; the rest are empty. There are ``max_size`` slots,
    by default the Sequence's ``max_length``. A sequence longer than ``max_size`` raises
    ValueError: dropping elements silently would hide data from the policy.
    """

    def __init__(self, env: Env[Any, ActType], max_size: int | None = None) -> None:
        super().__init__(env)
        space = env.observation_space
        sequences = find_parts(space, (Sequence,))
        if not sequences:
            raise TypeError(
                f"PadSequenceObservation needs a Sequence in the observation space, got {space}"
            )
        if max_size is not None and max_size < 1:
            raise ValueError(f"max_size must be at least 1, got {max_size}")
        self.max_size = max_size
        self._inner_space = space
        self.observation_space = map_part_spaces(space, self._padded_space, (Sequence,))
        self._padded: dict[Path, MaskedBox] = dict(find_parts(self.observation_space))

    def _padded_space(self, sequence: Sequence) -> MaskedBox:
        feature = sequence.feature_space
        if not isinstance(feature, Box):
            raise TypeError(
                f"PadSequenceObservation pads Sequences of Box elements, got {sequence}"
            )
        size = sequence.max_length if self.max_size is None else self.max_size
        if size is None:
            raise ValueError(f"{sequence} has no max_length: pass max_size")
        return MaskedBox(feature.low, feature.high, max_size=size, dtype=feature.dtype)

    def observation(self, observation: Any) -> Any:
        return map_parts(self._inner_space, observation, self._pad, (Sequence,))

    def _pad(self, path: Path, sequence: Sequence, value: Any) -> dict[str, Any]:
        padded = self._padded[path]
        elements = sequence.elements(value)
        if len(elements) > padded.max_size:
            raise ValueError(
                f"a sequence of {len(elements)} elements at {_where(path)} does not fit "
                f"max_size={padded.max_size}"
            )
        return padded.pack(elements)


def _where(path: Path) -> str:
    return "the top level" if not path else "observation" + "".join(f"[{k!r}]" for k in path)
