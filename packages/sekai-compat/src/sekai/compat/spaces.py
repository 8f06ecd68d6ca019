"""sekai spaces as gymnasium spaces and back, one ``singledispatch`` implementation per type.

Samples keep their representation (arrays, dicts, tuples), so observations and actions pass
through the env bridges unchanged. A space that has been seeded hands a copy of its generator's
state to the converted space, so both go on to draw the same samples. A space with no exact
counterpart is a TypeError, never an approximation.
"""

from __future__ import annotations

import copy
from functools import singledispatch
from typing import Any

import gymnasium
import gymnasium.spaces as gs
import numpy as np

import sekai.spaces as ss
from sekai.spaces.space import check_mask_array

__all__ = ["from_gymnasium_space", "to_gymnasium_space"]

_SEKAI_SUPPORTED = "Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple, Sequence, MaskedBox"
_GYMNASIUM_SUPPORTED = "Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple, Sequence"


def to_gymnasium_space(space: ss.Space[Any]) -> gymnasium.Space[Any]:
    """The gymnasium space with the same elements as the sekai ``space``.

    A MaskedBox becomes a Dict of ``values`` and ``mask`` (its sample format), a Sequence with
    ``max_length`` a gymnasium Sequence that keeps that bound; both convert back exactly.
    """
    converted = _to_gymnasium(space)
    if space._rng is not None:
        converted._np_random = copy.deepcopy(space._rng)
    return converted


def from_gymnasium_space(space: gymnasium.Space[Any]) -> ss.Space[Any]:
    """The sekai space with the same elements as the gymnasium ``space``."""
    converted = _from_gymnasium(space)
    if space._np_random is not None:
        converted._rng = copy.deepcopy(space._np_random)
    return converted


# -- sekai -> gymnasium ------------------------------------------------------------------------
@singledispatch
def _to_gymnasium(space: Any) -> gymnasium.Space[Any]:
    raise TypeError(
        f"cannot convert {space!r} ({type(space).__name__}) to a gymnasium space; "
        f"supported sekai spaces: {_SEKAI_SUPPORTED}"
    )


@_to_gymnasium.register
def _(space: ss.Box) -> gymnasium.Space[Any]:
    return gs.Box(space.low, space.high, space.shape, space.dtype)


@_to_gymnasium.register
def _(space: ss.Discrete) -> gymnasium.Space[Any]:
    return gs.Discrete(space.n, start=space.start)


@_to_gymnasium.register
def _(space: ss.MultiDiscrete) -> gymnasium.Space[Any]:
    return gs.MultiDiscrete(space.nvec, dtype=space.dtype, start=space.start)


@_to_gymnasium.register
def _(space: ss.MultiBinary) -> gymnasium.Space[Any]:
    if 0 in space.shape:
        raise ValueError(f"gymnasium has no empty MultiBinary; {space!r} cannot be converted")
    return gs.MultiBinary(space.n if isinstance(space.n, int) else list(space.n))


@_to_gymnasium.register
def _(space: ss.Dict) -> gymnasium.Space[Any]:
    return gs.Dict({key: to_gymnasium_space(sub) for key, sub in space.items()}, sort_keys=False)


@_to_gymnasium.register
def _(space: ss.MaskedBox) -> gymnasium.Space[Any]:
    return _MaskedBoxDict(space)


@_to_gymnasium.register
def _(space: ss.Tuple) -> gymnasium.Space[Any]:
    return gs.Tuple([to_gymnasium_space(sub) for sub in space])


@_to_gymnasium.register
def _(space: ss.Sequence) -> gymnasium.Space[Any]:
    feature_space = to_gymnasium_space(space.feature_space)
    if space.max_length is None:
        return gs.Sequence(feature_space, stack=space.stack)
    return _BoundedSequence(feature_space, space.max_length, stack=space.stack)


class _MaskedBoxDict(gs.Dict):
    """A sekai MaskedBox in gymnasium: the Dict of its sample format, with its own checks."""

    def __init__(self, masked_box: ss.MaskedBox) -> None:
        super().__init__(
            {key: to_gymnasium_space(sub) for key, sub in masked_box.items()}, sort_keys=False
        )
        self.masked_box = ss.MaskedBox.from_jsonable(masked_box.to_jsonable())

    def sample(self, mask: Any = None, probability: Any = None) -> dict[str, Any]:
        """Each slot occupied with probability 1/2, or as ``mask`` (max_size,) of 0/1 says."""
        if probability is not None:
            raise ValueError("a MaskedBox samples with a mask of occupied slots, not probability")
        if mask is None:
            occupied = self["mask"].sample()
        else:
            shape = (self.masked_box.max_size,)
            occupied = check_mask_array(mask, shape, "MaskedBox").astype(np.int8)
        values = self["values"].sample()
        values[occupied == 0] = self.masked_box.fill_value
        return {"values": values, "mask": occupied}

    def contains(self, x: Any) -> bool:
        return self.masked_box.contains(x)

    def __repr__(self) -> str:
        return f"Dict({self.masked_box!r} values and mask)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _MaskedBoxDict) and self.masked_box == other.masked_box


class _BoundedSequence(gs.Sequence):
    """A gymnasium Sequence of at most ``max_length`` elements (sekai's ``max_length``)."""

    def __init__(self, space: gymnasium.Space[Any], max_length: int, stack: bool) -> None:
        super().__init__(space, stack=stack)
        self.max_length = max_length

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        if probability is not None:
            return super().sample(probability=probability)
        length, feature_mask = (None, None) if mask is None else mask
        if length is None:  # uniform on 0..max_length, as sekai's Sequence samples
            length = int(self.np_random.integers(self.max_length + 1))
        if self.stack and length == 0:  # gymnasium cannot stack zero samples
            return gymnasium.vector.utils.create_empty_array(self.feature_space, 0)
        return super().sample(mask=(length, feature_mask))

    def contains(self, x: Any) -> bool:
        if not super().contains(x):
            return False
        if self.stack:
            x = list(gymnasium.vector.utils.iterate(self.stacked_feature_space, x))
        return len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"Sequence({self.feature_space}, max_length={self.max_length}, stack={self.stack})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _BoundedSequence)
            and super().__eq__(other)
            and self.max_length == other.max_length
        )


# -- gymnasium -> sekai ------------------------------------------------------------------------
@singledispatch
def _from_gymnasium(space: Any) -> ss.Space[Any]:
    raise TypeError(
        f"cannot convert {space!r} ({type(space).__name__}) to a sekai space; "
        f"supported gymnasium spaces: {_GYMNASIUM_SUPPORTED}"
    )


@_from_gymnasium.register
def _(space: gs.Box) -> ss.Space[Any]:
    return ss.Box(space.low, space.high, space.shape, space.dtype)


@_from_gymnasium.register
def _(space: gs.Discrete) -> ss.Space[Any]:
    return ss.Discrete(int(space.n), start=int(space.start))


@_from_gymnasium.register
def _(space: gs.MultiDiscrete) -> ss.Space[Any]:
    return ss.MultiDiscrete(space.nvec, dtype=space.dtype, start=space.start)


@_from_gymnasium.register
def _(space: gs.MultiBinary) -> ss.Space[Any]:
    return ss.MultiBinary(space.n if isinstance(space.n, int) else tuple(space.n))


@_from_gymnasium.register
def _(space: gs.Dict) -> ss.Space[Any]:
    if isinstance(space, _MaskedBoxDict):
        return ss.MaskedBox.from_jsonable(space.masked_box.to_jsonable())
    return ss.Dict({key: from_gymnasium_space(sub) for key, sub in space.items()})


@_from_gymnasium.register
def _(space: gs.Tuple) -> ss.Space[Any]:
    return ss.Tuple([from_gymnasium_space(sub) for sub in space])


@_from_gymnasium.register
def _(space: gs.Sequence) -> ss.Space[Any]:
    return ss.Sequence(
        from_gymnasium_space(space.feature_space),
        max_length=getattr(space, "max_length", None),
        stack=space.stack,
    )
