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

import sekai.spaces as ss

__all__ = ["from_gymnasium_space", "to_gymnasium_space"]

_SEKAI_SUPPORTED = "Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple, Sequence, MaskedBox"
_GYMNASIUM_SUPPORTED = "Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple, Sequence"


def to_gymnasium_space(space: ss.Space[Any]) -> gymnasium.Space[Any]:
    """The gymnasium space with the same elements as the sekai ``space``.

    A subclass of a sekai space with rules of its own (a MaskedBox's empty slots, a finance env's
    portfolio weights) becomes its base type's gymnasium twin that samples and checks members by
    those rules: a MaskedBox a Dict of ``values`` and ``mask``, its sample format. A Sequence
    with ``max_length`` keeps that bound. Each converts back to an equal sekai space.
    """
    converted = _to_gymnasium(space)
    if type(space) not in _TWINS:
        converted = mix_into(converted, _SekaiRules)
        converted.sekai_space = copy.deepcopy(space)
    if space._rng is not None:
        converted._np_random = copy.deepcopy(space._rng)
    return converted


def from_gymnasium_space(space: gymnasium.Space[Any]) -> ss.Space[Any]:
    """The sekai space with the same elements as the gymnasium ``space``."""
    if isinstance(space, _SekaiRules):
        return copy.deepcopy(space.sekai_space)
    converted = _from_gymnasium(space)
    if space._np_random is not None:
        converted._rng = copy.deepcopy(space._np_random)
    return converted


# -- sekai -> gymnasium ------------------------------------------------------------------------
_TWINS = {ss.Box, ss.Discrete, ss.MultiDiscrete, ss.MultiBinary, ss.Dict, ss.Tuple, ss.Sequence}
"""The sekai types whose gymnasium twin has exactly their members."""


class _SekaiRules:
    """Mixed into a gymnasium space: ``sekai_space`` (a subclass of a sekai space with rules of
    its own) decides what a member is and draws the samples."""

    sekai_space: ss.Space[Any]

    def sample(self, mask: Any = None, probability: Any = None) -> Any:
        if probability is not None:
            raise ValueError(f"{self.sekai_space!r} samples with a mask, not probability")
        return self.sekai_space.sample(mask)

    def seed(self, seed: Any = None) -> Any:
        super().seed(seed)  # type: ignore[misc]
        return self.sekai_space.seed(seed)

    def contains(self, x: Any) -> bool:
        return self.sekai_space.contains(x)

    def __repr__(self) -> str:
        return f"{super().__repr__()} with the rules of {self.sekai_space!r}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _SekaiRules) and self.sekai_space == other.sekai_space


_MIXED: dict[tuple[type, type], type] = {}


def mix_into(space: gymnasium.Space[Any], mixin: type) -> Any:
    """A copy of ``space`` whose class also has ``mixin`` (first, so it overrides).

    The subclass is made once per (mixin, space type) and keeps the gymnasium type, so
    ``isinstance`` checks and gymnasium's utilities treat the copy as the space it was.
    """
    key = (mixin, type(space))
    if key not in _MIXED:
        name = f"{type(space).__name__}With{mixin.__name__.strip('_')}"
        _MIXED[key] = type(name, (mixin, type(space)), {"__hash__": None})
    mixed: Any = object.__new__(_MIXED[key])
    mixed.__dict__.update(vars(space))
    return mixed


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
    if 0 in space.shape or space.shape == ():  # gymnasium refuses the one, mis-stacks the other
        raise ValueError(
            f"gymnasium has no empty or 0-d MultiBinary; {space!r} cannot be converted"
        )
    return gs.MultiBinary(space.n if isinstance(space.n, int) else list(space.n))


@_to_gymnasium.register
def _(space: ss.Dict) -> gymnasium.Space[Any]:
    return gs.Dict({key: to_gymnasium_space(sub) for key, sub in space.items()}, sort_keys=False)


@_to_gymnasium.register
def _(space: ss.Tuple) -> gymnasium.Space[Any]:
    return gs.Tuple([to_gymnasium_space(sub) for sub in space])


@_to_gymnasium.register
def _(space: ss.Sequence) -> gymnasium.Space[Any]:
    feature_space = to_gymnasium_space(space.feature_space)
    if space.max_length is None:
        return gs.Sequence(feature_space, stack=space.stack)
    return _BoundedSequence(feature_space, space.max_length, stack=space.stack)


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
