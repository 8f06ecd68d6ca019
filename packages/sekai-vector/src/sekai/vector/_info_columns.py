"""A slice's infos packed by key for the trip from a worker to the parent.

Pickling a list of info dicts costs a few microseconds per dict, more per NumPy value in it
(Portfolio-v0: 128 infos with a weights array each, about 0.25 ms of a worker's 3-4 ms step).
When every dict has the same keys in the same order, the values of a key travel together: as
the raw bytes of one array when they are NumPy arrays of one shape and dtype, or NumPy scalars
of one dtype; as one list otherwise (Python numbers pickle fast in a list). Unpickling gives
back the list of dicts with values equal to the originals and of the same types (an array comes
back as a row of one writable array). Any other list travels as it is.
"""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter
from typing import Any

import numpy as np

__all__ = ["packed"]

_DTYPE = attrgetter("dtype")

# A key's values as one array: (dtype.str, shape, bytes); pickling the dtype object itself
# would cost more than the rest of the column
_RawArray = tuple[str, tuple[int, ...], bytes]


class _Packed:
    """Pickles as a call that rebuilds the list of dicts (see ``__reduce__``)."""

    __slots__ = ("columns", "keys")

    def __init__(self, keys: tuple[Any, ...], columns: list[list[Any] | _RawArray]) -> None:
        self.keys, self.columns = keys, columns

    def __reduce__(self) -> tuple[Any, ...]:
        return _unpacked, (self.keys, self.columns)


def packed(infos: list[dict[str, Any]]) -> Any:
    """What to pickle for ``infos``: the packed form when every info has the same keys in the
    same order, else the list itself."""
    # C-level passes over the infos: their types, then their keys in order
    if len(infos) < 2 or set(map(type, infos)) != {dict} or not infos[0]:
        return infos
    keys = tuple(infos[0])
    if list(map(tuple, infos)).count(keys) != len(infos):
        return infos
    # the same keys in the same order: the values of each dict, transposed, are the columns
    columns = zip(*map(dict.values, infos), strict=True)
    return _Packed(keys, [_column(list(column)) for column in columns])


def _column(values: list[Any]) -> list[Any] | _RawArray:
    """One key's values: as one array's raw bytes when that gives them back exactly, else the
    list itself."""
    first = values[0]
    kind = type(first)
    if kind is not np.ndarray and not issubclass(kind, np.generic):
        return values
    if len(set(map(type, values))) != 1 or len(set(map(_DTYPE, values))) != 1:
        return values
    dtype = first.dtype
    # the dtype must come back from its string (not a structured one) in this machine's byte
    # order (other orders would come back native from a stack), with no objects in it
    if dtype.hasobject or not dtype.isnative or np.dtype(dtype.str) != dtype:
        return values
    if kind is not np.ndarray:  # NumPy scalars
        return dtype.str, (len(values),), np.array(values, dtype).tobytes()
    if first.ndim == 0:  # 0-d arrays would come back NumPy scalars
        return values
    # one shape: concatenate checks every axis but the first (and the number of axes), the
    # lengths check the first (a 0-d array has none: TypeError)
    try:
        if len(set(map(len, values))) != 1:
            return values
        rows = np.concatenate(values)
    except (TypeError, ValueError):
        return values
    return dtype.str, (len(values), *first.shape), rows.tobytes()


def _unpacked(keys: tuple[Any, ...], columns: list[list[Any] | _RawArray]) -> list[dict[str, Any]]:
    """The list of dicts that ``packed`` packed."""
    values = [column if type(column) is list else _rows(*column) for column in columns]
    # one dict per row, made in C (a row has one value per key: packed made a column per key)
    return list(map(dict, map(zip, repeat(keys), zip(*values, strict=True))))


def _rows(dtype: str, shape: tuple[int, ...], raw: bytes) -> list[Any]:
    """The values of one array's bytes: its rows, or its NumPy scalars."""
    return list(np.frombuffer(bytearray(raw), dtype).reshape(shape))
