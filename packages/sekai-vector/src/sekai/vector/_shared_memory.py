"""One shared-memory segment holding a whole batch of step results, for ProcVecEnv.

The parent lays the batch out once from the batched observation space: every array leaf of the
space gets a fixed slice of one segment, and so do the rewards, terminated and truncated flags.
Each worker attaches to the segment and writes the results of its sub-envs straight into their
rows, so a step moves no observation, reward or flag through a pipe, the parent reads each
field with one copy, and nothing allocates shared memory.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator, Sequence
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np

from sekai.spaces import Box, Dict, MultiBinary, MultiDiscrete, Space, Tuple

# A layout is a picklable tree: ("array", offset, shape, dtype str) leaves below
# ("dict", ((key, layout), ...)) and ("tuple", (layout, ...)) nodes.
Layout = tuple[Any, ...]

_ALIGNMENT = 64  # bytes; keeps every leaf on its own cache line


def batch_layout(batch_space: Space[Any], num_envs: int) -> tuple[Layout, int] | None:
    """Lay out a step's results in one buffer; None if the observations are not made of arrays.

    Returns the layout of ``(observations, rewards, terminated, truncated)`` (the last three of
    shape ``(num_envs,)``) and the buffer size in bytes. Box, MultiDiscrete and MultiBinary
    batches are arrays; Dict and Tuple batches (MaskedBox batches are Dicts) are laid out part by
    part. Anything else, such as the per-env samples of a Sequence batch, cannot live in shared
    memory.
    """
    size = 0

    def leaf(shape: tuple[int, ...], dtype: np.dtype[Any]) -> Layout:
        nonlocal size
        offset = -(-size // _ALIGNMENT) * _ALIGNMENT
        size = offset + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        return ("array", offset, shape, dtype.str)

    def lay_out(space: Space[Any]) -> Layout | None:
        if isinstance(space, Box | MultiDiscrete | MultiBinary):
            return leaf(tuple(space.shape), np.dtype(space.dtype))
        if isinstance(space, Dict):
            parts = [(key, lay_out(sub)) for key, sub in space.spaces.items()]
            if any(part is None for _, part in parts):
                return None
            return ("dict", tuple(parts))
        if isinstance(space, Tuple):
            items = [lay_out(sub) for sub in space.spaces]
            if any(item is None for item in items):
                return None
            return ("tuple", tuple(items))
        return None

    observations = lay_out(batch_space)
    if observations is None:
        return None
    flags = [leaf((num_envs,), np.dtype(dtype)) for dtype in (np.float64, np.bool_, np.bool_)]
    return ("tuple", (observations, *flags)), size


def create_segment(size: int) -> SharedMemory:
    """A new segment named ``sekai_<pid>_<random>``, so a leak is easy to attribute."""
    while True:
        name = f"sekai_{os.getpid()}_{secrets.token_hex(6)}"
        try:
            return SharedMemory(name=name, create=True, size=size)
        except FileExistsError:
            continue


def views(segment: SharedMemory, layout: Layout) -> Any:
    """The layout's tree with every leaf an ndarray over ``segment``."""
    kind, *rest = layout
    if kind == "array":
        offset, shape, dtype = rest
        return np.ndarray(shape, dtype=np.dtype(dtype), buffer=segment.buf, offset=offset)
    if kind == "dict":
        return {key: views(segment, part) for key, part in rest[0]}
    return tuple(views(segment, item) for item in rest[0])


def write(tree: Any, index: int, observation: Any) -> None:
    """Store one sub-env's observation in row ``index`` of the batch.

    ValueError for an observation (part) whose shape is not the row's: numpy would broadcast it.
    """
    for column, part in _leaves(tree, observation):
        if np.shape(part) != column.shape[1:]:
            raise ValueError(
                f"an observation of shape {np.shape(part)} does not fit the observation "
                f"space's shape {column.shape[1:]}"
            )
        column[index] = part


def write_batch(tree: Any, first: int, batch: Any) -> None:
    """Store a batch of consecutive sub-envs' observations (a native slice's) from row ``first``.

    ValueError for a batch (part) whose shape is not that of its rows.
    """
    for column, part in _leaves(tree, batch):
        rows = column[first : first + len(part)]
        if np.shape(part) != rows.shape:
            raise ValueError(
                f"a batch of observations of shape {np.shape(part)} does not fit rows of shape "
                f"{rows.shape}"
            )
        rows[...] = part


def _leaves(tree: Any, value: Any) -> Iterator[tuple[np.ndarray, Any]]:
    """Each array of a tree of views with the part of ``value`` (nested alike) that goes in it,
    so that ``write`` and ``write_batch`` walk dict and tuple observations the same way."""
    if isinstance(tree, np.ndarray):
        yield tree, value
    elif isinstance(tree, dict):
        for key, part in tree.items():
            yield from _leaves(part, value[key])
    else:
        for part, item in zip(tree, value, strict=True):
            yield from _leaves(part, item)


def write_rows(rows: np.ndarray, observations: Sequence[Any]) -> bool:
    """Store consecutive sub-envs' observations in ``rows`` (one row each) at once, if each one
    has the row shape; False, leaving the caller to write them one by one, for anything else.

    One C-level pass without a shape tuple per observation: for rows of arrays, ``len`` of each
    observation gives its first axis and ``np.concatenate`` checks the other axes.
    """
    try:
        if rows.ndim == 1:  # a scalar per sub-env
            batch = np.asarray(observations)
            if batch.shape != rows.shape:
                return False
            rows[...] = batch
            return True
        if set(map(len, observations)) != {rows.shape[1]}:
            return False
        flat = rows.view()
        flat.shape = (-1, *rows.shape[2:])  # a view, never a copy (that would raise here)
        np.concatenate(observations, out=flat, casting="unsafe")
    except (TypeError, ValueError):  # unsized, ragged, of other axes or not numbers
        return False
    return True


def read(tree: Any) -> Any:
    """A copy of the whole batch: the next command overwrites the segment."""
    if isinstance(tree, np.ndarray):
        return tree.copy()
    if isinstance(tree, dict):
        return {key: read(part) for key, part in tree.items()}
    return tuple(read(part) for part in tree)
