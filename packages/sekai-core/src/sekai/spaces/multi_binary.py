"""MultiBinary: arrays of 0/1."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.spaces.space import _ArraySpace, check_mask_array, check_shape, register_space_type


class MultiBinary(_ArraySpace[NDArray[np.int8]]):
    """Arrays of 0/1 (int8); ``n`` is an int or a shape."""

    def __init__(self, n: int | tuple[int, ...] | list[int], seed: Any = None) -> None:
        shape = check_shape(n, "MultiBinary n")
        self.n: int | tuple[int, ...] = shape[0] if isinstance(n, int | np.integer) else shape
        super().__init__(shape, np.int8, seed)

    def sample(self, mask: Any = None) -> NDArray[np.int8]:
        """Independent fair bits; ``mask`` entries 1 and 0 force that value, -1 samples."""
        if mask is None:
            return self.rng.integers(0, 2, size=self.shape, dtype=np.int8)
        mask = check_mask_array(mask, self.shape, "MultiBinary", values="-101")
        sample = mask.astype(np.int8)
        free = mask == -1
        sample[free] = self.rng.integers(0, 2, size=int(free.sum()), dtype=np.int8)
        return sample

    def contains(self, x: Any) -> bool:
        """Arrays (or lists) of the exact shape with integer or bool entries that are 0 or 1."""
        if not isinstance(x, np.ndarray):
            try:
                x = np.asarray(x)
            except (ValueError, TypeError):
                return False
        return (
            x.shape == self._shape and x.dtype.kind in "biu" and bool(((x == 0) | (x == 1)).all())
        )

    def to_jsonable(self) -> dict[str, Any]:
        return {"type": "MultiBinary", "n": self.n if isinstance(self.n, int) else list(self.n)}

    @classmethod
    def from_jsonable(cls, data: dict[str, Any]) -> MultiBinary:
        n = data["n"]
        return cls(n if isinstance(n, int) else tuple(n))

    def __repr__(self) -> str:
        return f"MultiBinary({self.n})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MultiBinary) and self.shape == other.shape


register_space_type("MultiBinary", MultiBinary)
