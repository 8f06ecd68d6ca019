"""A slice's infos packed key by key for the trip from a worker to the parent.

Pickling a list of info dicts costs a few microseconds per dict, more per NumPy array in it
(Portfolio-v0: 128 infos with a weights array each, about 0.25 ms of a worker's 3-4 ms step).
When every dict has the same keys, in the same order, and each key holds values of one kind
(Python ints, floats or bools; NumPy scalars of one type; or arrays of one shape and dtype),
the values of a key travel as one array instead, and unpickling gives back the list of dicts
with values equal to the originals and of the same types (an array comes back as a row of one
stacked array). Any other list travels as it is.
"""

from __future__ import annotations

from operator import attrgetter, itemgetter
from typing import Any

import numpy as np

__all__ = ["packed"]

# how a key's values are rebuilt from its column
_PYTHON, _NUMPY, _ARRAY = range(3)
_PYTHON_TYPES = {bool: np.bool_, int: np.int64, float: np.float64}
_SHAPE, _DTYPE = attrgetter("shape"), attrgetter("dtype")


class _Packed:
    """Pickles as a call that rebuilds the list of dicts (see ``__reduce__``)."""

    __slots__ = ("columns", "keys", "kinds")

    def __init__(self, keys: tuple[Any, ...], kinds: list[int], columns: list[Any]) -> None:
        self.keys, self.kinds, self.columns = keys, kinds, columns

    def __reduce__(self) -> tuple[Any, ...]:
        return _unpacked, (self.keys, self.kinds, self.columns)


def packed(infos: list[dict[str, Any]]) -> Any:
    """What to pickle for ``infos``: the packed form when every info allows it, else the
    list itself."""
    # C-level passes over the infos: their types, then their keys in order
    if len(infos) < 2 or set(map(type, infos)) != {dict} or not infos[0]:
        return infos
    keys = tuple(infos[0])
    if list(map(tuple, infos)).count(keys) != len(infos):
        return infos
    kinds, columns = [], []
    for key in keys:
        column = _column(list(map(itemgetter(key), infos)))
        if column is None:
            return infos
        kinds.append(column[0])
        columns.append(column[1])
    return _Packed(keys, kinds, columns)


def _column(values: list[Any]) -> tuple[int, np.ndarray] | None:
    """One key's values as (kind, array), or None if they cannot travel as one array."""
    types = set(map(type, values))
    if len(types) != 1:
        return None
    first = types.pop()
    if first in _PYTHON_TYPES:
        try:
            return _PYTHON, np.array(values, _PYTHON_TYPES[first])
        except OverflowError:  # an int beyond int64
            return None
    if issubclass(first, np.generic):
        if len(set(map(_DTYPE, values))) != 1:
            return None
        return _NUMPY, np.array(values, values[0].dtype)
    if first is np.ndarray:
        if len(set(map(_SHAPE, values))) != 1 or len(set(map(_DTYPE, values))) != 1:
            return None
        first_value = values[0]
        # 0-d arrays would come back as scalars, other byte orders as the native one
        if first_value.ndim == 0 or first_value.dtype.hasobject or not first_value.dtype.isnative:
            return None
        return _ARRAY, np.concatenate(values).reshape(len(values), *first_value.shape)
    return None


def _unpacked(
    keys: tuple[Any, ...], kinds: list[int], columns: list[np.ndarray]
) -> list[dict[str, Any]]:
    """The list of dicts that ``packed`` packed."""
    values = [
        column.tolist() if kind == _PYTHON else list(column)
        for kind, column in zip(kinds, columns, strict=True)
    ]
    return [dict(zip(keys, row, strict=True)) for row in zip(*values, strict=True)]
