"""Operations across every space type, as ``functools.singledispatch`` functions.

A custom space opts in by registering its own implementation, e.g.
``flatdim.register(MySpace, lambda space: ...)``; nothing else needs to change.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from functools import singledispatch
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.checks import is_whole_number
from sekai.spaces.box import Box
from sekai.spaces.dict import Dict
from sekai.spaces.discrete import Discrete
from sekai.spaces.masked_box import MaskedBox
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.multi_discrete import MultiDiscrete
from sekai.spaces.sequence import Sequence
from sekai.spaces.space import Space, register_space_type, space_from_jsonable
from sekai.spaces.tuple import Tuple

__all__ = [
    "batch_space",
    "concatenate",
    "flatdim",
    "flatten",
    "flatten_space",
    "iterate",
    "register_space_type",
    "space_from_jsonable",
    "unflatten",
    "zero_sample",
]


def _unsupported(operation: str, space: Space[Any]) -> Exception:
    """ValueError for a Sequence (never flattenable), NotImplementedError for unknown types."""
    if isinstance(space, Sequence):
        return ValueError(
            f"{operation}: a Sequence is not flattenable; convert it to a MaskedBox first"
        )
    return NotImplementedError(
        f"{operation} is not registered for {type(space).__name__}; "
        f"register one with sekai.spaces.utils.{operation}.register({type(space).__name__}, ...)"
    )


# flatdim -------------------------------------------------------------------------------------


@singledispatch
def flatdim(space: Space[Any]) -> int:
    """The length of ``flatten``'s vector for ``space``."""
    raise _unsupported("flatdim", space)


@flatdim.register(Box)
@flatdim.register(MultiBinary)
def _flatdim_array(space: Box | MultiBinary) -> int:
    return int(np.prod(space.shape))


@flatdim.register(Discrete)
def _flatdim_discrete(space: Discrete) -> int:
    return space.n


@flatdim.register(MultiDiscrete)
def _flatdim_multi_discrete(space: MultiDiscrete) -> int:
    return int(space.nvec.sum())


@flatdim.register(Dict)
@flatdim.register(Tuple)
def _flatdim_composite(space: Dict | Tuple) -> int:
    parts = space.values() if isinstance(space, Dict) else space.spaces
    return sum(flatdim(part) for part in parts)


# flatten -------------------------------------------------------------------------------------


@singledispatch
def flatten(space: Space[Any], x: Any) -> NDArray[np.float32]:
    """``x`` as a 1-D float32 array: raveled arrays, one-hot discrete values, parts concatenated."""
    raise _unsupported("flatten", space)


@flatten.register(Box)
@flatten.register(MultiBinary)
def _flatten_array(space: Box | MultiBinary, x: Any) -> NDArray[np.float32]:
    array = np.asarray(x, dtype=np.float32)
    if array.shape != space.shape:  # raveled, it would silently shift every later part
        raise ValueError(f"cannot flatten a value of shape {array.shape} as an element of {space}")
    return array.ravel()


@flatten.register(Discrete)
def _flatten_discrete(space: Discrete, x: Any) -> NDArray[np.float32]:
    index = int(x) - space.start
    if not 0 <= index < space.n:  # a negative index would set a slot counted from the end
        raise ValueError(f"cannot flatten {x!r}: it is not an element of {space}")
    onehot = np.zeros(space.n, np.float32)
    onehot[index] = 1.0
    return onehot


@flatten.register(MultiDiscrete)
def _flatten_multi_discrete(space: MultiDiscrete, x: Any) -> NDArray[np.float32]:
    nvec = space.nvec.ravel()
    values = np.asarray(x)
    # an index out of its entry's range would set a slot of a neighbouring entry
    indices = values - space.start if values.shape == space.shape else None
    if indices is None or not ((indices >= 0) & (indices < space.nvec)).all():
        raise ValueError(f"cannot flatten {x!r}: it is not an element of {space}")
    onehot = np.zeros(flatdim(space), np.float32)
    onehot[np.cumsum(nvec) - nvec + indices.ravel()] = 1.0
    return onehot


@flatten.register(Dict)
def _flatten_dict(space: Dict, x: Any) -> NDArray[np.float32]:
    parts = [flatten(part, x[key]) for key, part in space.items()]
    return np.concatenate(parts) if parts else np.zeros(0, np.float32)


@flatten.register(Tuple)
def _flatten_tuple(space: Tuple, x: Any) -> NDArray[np.float32]:
    parts = [flatten(part, e) for part, e in zip(space.spaces, x, strict=True)]
    return np.concatenate(parts) if parts else np.zeros(0, np.float32)


# unflatten -----------------------------------------------------------------------------------


@singledispatch
def unflatten(space: Space[Any], x: NDArray[Any]) -> Any:
    """The sample of ``space`` that ``flatten`` turned into ``x``."""
    raise _unsupported("unflatten", space)


@unflatten.register(Box)
@unflatten.register(MultiBinary)
def _unflatten_array(space: Box | MultiBinary, x: NDArray[Any]) -> NDArray[Any]:
    return np.asarray(x).astype(space.dtype).reshape(space.shape)


@unflatten.register(Discrete)
def _unflatten_discrete(space: Discrete, x: NDArray[Any]) -> np.int64:
    hot = np.flatnonzero(x)
    if hot.shape != (1,):
        raise ValueError(f"a flattened Discrete is one-hot, got {x}")
    return np.int64(space.start + hot[0])


@unflatten.register(MultiDiscrete)
def _unflatten_multi_discrete(space: MultiDiscrete, x: NDArray[Any]) -> NDArray[Any]:
    nvec = space.nvec.ravel()
    offsets = np.cumsum(nvec) - nvec
    x = np.asarray(x)
    hot = np.flatnonzero(x)
    if nvec.size and (np.add.reduceat(x != 0, offsets) != 1).any():
        raise ValueError(f"a flattened MultiDiscrete is one-hot per entry, got {x}")
    return ((hot - offsets).reshape(space.shape) + space.start).astype(space.dtype)


def _split(x: NDArray[Any], parts: Iterable[Space[Any]]) -> list[NDArray[Any]]:
    sizes = [flatdim(part) for part in parts]
    return np.split(np.asarray(x), np.cumsum(sizes)[:-1]) if sizes else []


@unflatten.register(Dict)
def _unflatten_dict(space: Dict, x: NDArray[Any]) -> dict[str, Any]:
    chunks = _split(x, space.values())
    return {
        key: unflatten(part, chunk)
        for (key, part), chunk in zip(space.items(), chunks, strict=True)
    }


@unflatten.register(Tuple)
def _unflatten_tuple(space: Tuple, x: NDArray[Any]) -> tuple[Any, ...]:
    chunks = _split(x, space.spaces)
    return tuple(unflatten(part, chunk) for part, chunk in zip(space.spaces, chunks, strict=True))


# flatten_space -------------------------------------------------------------------------------


@singledispatch
def flatten_space(space: Space[Any]) -> Box:
    """The 1-D float32 Box that ``flatten`` maps ``space`` into."""
    raise _unsupported("flatten_space", space)


@flatten_space.register(Box)
def _flatten_space_box(space: Box) -> Box:
    return Box(space.low.ravel(), space.high.ravel(), dtype=np.float32)


@flatten_space.register(Discrete)
@flatten_space.register(MultiDiscrete)
@flatten_space.register(MultiBinary)
def _flatten_space_onehot(space: Discrete | MultiDiscrete | MultiBinary) -> Box:
    return Box(0.0, 1.0, shape=(flatdim(space),), dtype=np.float32)


@flatten_space.register(Dict)
@flatten_space.register(Tuple)
def _flatten_space_composite(space: Dict | Tuple) -> Box:
    boxes = [flatten_space(part) for part in (space.values() if isinstance(space, Dict) else space)]
    low = np.concatenate([box.low for box in boxes]) if boxes else np.zeros(0, np.float32)
    high = np.concatenate([box.high for box in boxes]) if boxes else np.zeros(0, np.float32)
    return Box(low, high, dtype=np.float32)


# batch_space ---------------------------------------------------------------------------------


@singledispatch
def batch_space(space: Space[Any], n: int) -> Space[Any]:
    """The space of ``n`` samples stacked along a new leading axis (for vector envs)."""
    raise _unsupported("batch_space", space)


def _check_n(n: int) -> int:
    if not is_whole_number(n) or n < 0:
        raise ValueError(f"batch size n must be a non-negative int, got {n!r}")
    return int(n)


@batch_space.register(Box)
def _batch_box(space: Box, n: int) -> Box:
    shape = (_check_n(n), *space.shape)
    return Box(
        np.broadcast_to(space.low, shape), np.broadcast_to(space.high, shape), dtype=space.dtype
    )


@batch_space.register(Discrete)
def _batch_discrete(space: Discrete, n: int) -> MultiDiscrete:
    n = _check_n(n)
    return MultiDiscrete(np.full(n, space.n), start=np.full(n, space.start))


@batch_space.register(MultiDiscrete)
def _batch_multi_discrete(space: MultiDiscrete, n: int) -> MultiDiscrete:
    shape = (_check_n(n), *space.shape)
    return MultiDiscrete(
        np.broadcast_to(space.nvec, shape),
        dtype=space.dtype,
        start=np.broadcast_to(space.start, shape),
    )


@batch_space.register(MultiBinary)
def _batch_multi_binary(space: MultiBinary, n: int) -> MultiBinary:
    return MultiBinary((_check_n(n), *space.shape))


@batch_space.register(Dict)
def _batch_dict(space: Dict, n: int) -> Dict:
    return Dict({key: batch_space(part, n) for key, part in space.items()})


@batch_space.register(Tuple)
def _batch_tuple(space: Tuple, n: int) -> Tuple:
    return Tuple([batch_space(part, n) for part in space.spaces])


@batch_space.register(Sequence)
def _batch_sequence(space: Sequence, n: int) -> Tuple:
    copies = [copy.deepcopy(space) for _ in range(_check_n(n))]
    for each in copies:
        each.seed()  # independent generators, not n copies of one stream
    return Tuple(copies)


# concatenate ---------------------------------------------------------------------------------


@singledispatch
def concatenate(space: Space[Any], items: Iterable[Any]) -> Any:
    """Stack per-env samples of ``space`` into one batch of ``batch_space``'s space."""
    raise _unsupported("concatenate", space)


@concatenate.register(Box)
@concatenate.register(Discrete)
@concatenate.register(MultiDiscrete)
@concatenate.register(MultiBinary)
def _concatenate_array(
    space: Box | Discrete | MultiDiscrete | MultiBinary, items: Iterable[Any]
) -> NDArray[Any]:
    items = items if isinstance(items, list | tuple) else list(items)
    batch = np.asarray(items, dtype=space.dtype)
    shape = (len(items), *(space.shape or ()))
    if batch.shape != shape:
        if not items:
            return np.empty(shape, space.dtype)
        raise ValueError(f"cannot stack samples of shape {batch.shape[1:]} into {space}")
    return batch


@concatenate.register(Dict)
def _concatenate_dict(space: Dict, items: Iterable[Any]) -> dict[str, Any]:
    items = items if isinstance(items, list | tuple) else list(items)
    return {key: concatenate(part, [item[key] for item in items]) for key, part in space.items()}


@concatenate.register(Tuple)
def _concatenate_tuple(space: Tuple, items: Iterable[Any]) -> tuple[Any, ...]:
    items = items if isinstance(items, list | tuple) else list(items)
    return tuple(
        concatenate(part, [item[index] for item in items])
        for index, part in enumerate(space.spaces)
    )


@concatenate.register(Sequence)
def _concatenate_sequence(space: Sequence, items: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(items)


# iterate -------------------------------------------------------------------------------------


@singledispatch
def iterate(space: Space[Any], batch: Any) -> Iterator[Any]:
    """The per-env samples of a batch (inverse of ``concatenate``).

    The default splits along the first axis, which suits every array-like batch.
    """
    return iter(batch)


@iterate.register(Box)
@iterate.register(MultiDiscrete)
@iterate.register(MultiBinary)
def _iterate_array(space: Box | MultiDiscrete | MultiBinary, batch: Any) -> Iterator[Any]:
    if space.shape == ():  # keep 0-d arrays: plain iteration would yield NumPy scalars
        return (batch[index, ...] for index in range(len(batch)))
    return iter(batch)


@iterate.register(Dict)
def _iterate_dict(space: Dict, batch: Any) -> Iterator[dict[str, Any]]:
    keys = list(space.keys())
    columns = [iterate(part, batch[key]) for key, part in space.items()]
    return (dict(zip(keys, values, strict=True)) for values in zip(*columns, strict=True))


@iterate.register(Tuple)
def _iterate_tuple(space: Tuple, batch: Any) -> Iterator[tuple[Any, ...]]:
    columns = [iterate(part, column) for part, column in zip(space.spaces, batch, strict=True)]
    return zip(*columns, strict=True)


# zero_sample ---------------------------------------------------------------------------------


@singledispatch
def zero_sample(space: Space[Any]) -> Any:
    """The neutral element of ``space``, used as padding (frame stacks, delays)."""
    raise _unsupported("zero_sample", space)


@zero_sample.register(Box)
def _zero_box(space: Box) -> NDArray[Any]:
    return space.zero()


@zero_sample.register(Discrete)
def _zero_discrete(space: Discrete) -> np.int64:
    return np.int64(space.start)


@zero_sample.register(MultiDiscrete)
def _zero_multi_discrete(space: MultiDiscrete) -> NDArray[Any]:
    return space.start.astype(space.dtype)


@zero_sample.register(MultiBinary)
def _zero_multi_binary(space: MultiBinary) -> NDArray[np.int8]:
    return np.zeros(space.shape, np.int8)


@zero_sample.register(Dict)
def _zero_dict(space: Dict) -> dict[str, Any]:
    return {key: zero_sample(part) for key, part in space.items()}


@zero_sample.register(Tuple)
def _zero_tuple(space: Tuple) -> tuple[Any, ...]:
    return tuple(zero_sample(part) for part in space.spaces)


@zero_sample.register(MaskedBox)
def _zero_masked_box(space: MaskedBox) -> dict[str, Any]:
    return space.empty()


@zero_sample.register(Sequence)
def _zero_sequence(space: Sequence) -> Any:
    return space.pack([])
