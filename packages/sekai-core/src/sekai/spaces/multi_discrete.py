"""MultiDiscrete: one discrete choice per entry of an integer array."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.spaces.space import _ArraySpace, check_mask_array, register_space_type


class MultiDiscrete(_ArraySpace[NDArray[np.integer[Any]]]):
    """Entry ``i`` takes values ``start[i] .. start[i] + nvec[i] - 1``; ``nvec`` may be n-d."""

    dtype: np.dtype[Any]

    def __init__(
        self,
        nvec: Any,
        dtype: Any = np.int64,
        seed: Any = None,
        start: Any = None,
    ) -> None:
        dtype = np.dtype(dtype)
        if dtype.kind not in "iu":
            raise TypeError(f"MultiDiscrete dtype must be an integer dtype, got {dtype}")
        self.nvec = _integer_array(nvec, "nvec", dtype)
        if (self.nvec <= 0).any():
            raise ValueError(f"MultiDiscrete nvec entries must be positive, got {nvec}")
        if start is None:
            self.start = np.zeros_like(self.nvec)
        else:
            self.start = _integer_array(start, "start", dtype)
            if self.start.shape != self.nvec.shape:
                raise ValueError(
                    f"MultiDiscrete start has shape {self.start.shape}, "
                    f"but nvec has shape {self.nvec.shape}"
                )
        self.start.setflags(write=False)
        self._end = self.start + self.nvec  # exclusive upper bounds, for contains()
        super().__init__(self.nvec.shape, dtype, seed)

    def sample(self, mask: Any = None) -> NDArray[np.integer[Any]]:
        """Uniform per entry; ``mask`` restricts each entry to the values marked 1.

        ``mask`` is a tuple of 0/1 arrays, one per entry (nested like ``nvec``), or one array of
        shape ``(*nvec.shape, max(nvec))`` whose padding beyond an entry's ``nvec`` is ignored.
        """
        if mask is None:
            choice = self.rng.integers(self.nvec)
        else:
            allowed = self._padded_mask(mask)
            counts = allowed.sum(axis=-1)
            if (counts == 0).any():
                entry = tuple(int(i) for i in np.argwhere(counts == 0)[0])
                raise ValueError(f"MultiDiscrete mask allows no value for entry {entry}")
            rank = self.rng.integers(counts)
            choice = (allowed.cumsum(axis=-1) > rank[..., None]).argmax(axis=-1)
        return (self.start + choice).astype(self.dtype)

    def _padded_mask(self, mask: Any) -> NDArray[np.bool_]:
        """Either mask format as a bool array (*nvec.shape, max(nvec)), padding cleared."""
        width = int(self.nvec.max()) if self.nvec.size else 0
        if isinstance(mask, tuple):
            padded = np.zeros((*self.shape, width), bool)
            for index in np.ndindex(self.shape):
                entry_mask: Any = mask
                try:
                    for i in index:
                        entry_mask = entry_mask[i]
                except (IndexError, TypeError):
                    raise ValueError(
                        f"MultiDiscrete mask tuple must be nested like nvec {self.nvec.tolist()}"
                    ) from None
                n = int(self.nvec[index])
                entry = check_mask_array(entry_mask, (n,), f"MultiDiscrete entry {index}")
                padded[index][:n] = entry.astype(bool)
            return padded
        array = check_mask_array(mask, (*self.shape, width), "MultiDiscrete")
        return array.astype(bool) & (np.arange(width) < self.nvec[..., None])

    def contains(self, x: Any) -> bool:
        """Arrays of the exact shape, same_kind-castable integers, each entry in its range.

        Python ints and lists of them are judged by value.
        """
        if not isinstance(x, np.ndarray):
            python_data = not isinstance(x, np.generic)
            try:
                x = np.asarray(x)
            except (ValueError, TypeError):
                return False
            if python_data and x.dtype.kind in "iu":
                return x.shape == self._shape and self._in_range(x)
        if x.shape != self._shape or x.dtype.kind not in "iu":
            return False
        return np.can_cast(x.dtype, self.dtype, "same_kind") and self._in_range(x)

    def _in_range(self, x: NDArray[Any]) -> bool:
        return bool((x >= self.start).all() and (x < self._end).all())

    def to_jsonable(self) -> dict[str, Any]:
        return {
            "type": "MultiDiscrete",
            "nvec": self.nvec.tolist(),
            "start": self.start.tolist(),
            "dtype": str(self.dtype),
        }

    @classmethod
    def from_jsonable(cls, data: dict[str, Any]) -> MultiDiscrete:
        return cls(data["nvec"], dtype=data["dtype"], start=data["start"])

    def __repr__(self) -> str:
        start = f", start={self.start.tolist()}" if self.start.any() else ""
        return f"MultiDiscrete({self.nvec.tolist()}{start})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MultiDiscrete)
            and self.dtype == other.dtype
            and self.shape == other.shape
            and np.array_equal(self.nvec, other.nvec)
            and np.array_equal(self.start, other.start)
        )


def _integer_array(value: Any, name: str, dtype: np.dtype[Any]) -> NDArray[Any]:
    array = np.asarray(value)
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(f"MultiDiscrete {name} must hold integers, got {value!r}")
    info = np.iinfo(dtype)
    if array.size and (array.min() < info.min or array.max() > info.max):  # astype would wrap
        raise ValueError(
            f"MultiDiscrete {name} {array.tolist()} does not fit its dtype {dtype} "
            f"([{info.min}, {info.max}])"
        )
    result = array.astype(dtype)
    result.setflags(write=False)
    return result


register_space_type("MultiDiscrete", MultiDiscrete)
