"""Discrete: the integers {start, ..., start + n - 1}."""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.checks import is_whole_number
from sekai.spaces.space import Space, check_mask_array, register_space_type


def check_integer(value: Any, name: str) -> int:
    """``value`` as a Python int; Python and NumPy integers are accepted, bools are not."""
    if not is_whole_number(value):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    return int(value)


class Discrete(Space[np.int64]):
    """One choice among ``n`` consecutive integers starting at ``start``; samples are np.intp."""

    def __init__(self, n: int, seed: Any = None, start: int = 0) -> None:
        self.n = check_integer(n, "Discrete n")
        if self.n <= 0:
            raise ValueError(f"Discrete n must be positive, got {self.n}")
        self.start = check_integer(start, "Discrete start")
        super().__init__((), np.int64, seed)

    @property
    def is_flattenable(self) -> bool:
        return True

    def sample(self, mask: Any = None) -> np.int64:
        """A uniform choice; ``mask`` (n,) of 0/1 restricts it to the values marked 1."""
        if mask is None:
            return np.int64(self.start + self.rng.integers(self.n))
        allowed = np.flatnonzero(check_mask_array(mask, (self.n,), "Discrete"))
        if allowed.size == 0:
            raise ValueError("Discrete mask allows no value: at least one entry must be 1")
        return np.int64(self.start + self.rng.choice(allowed))

    def contains(self, x: Any) -> bool:
        """Python ints, NumPy integers and 0-d integer arrays in range; bools are not members."""
        if isinstance(x, int):
            if isinstance(x, bool):
                return False
        elif isinstance(x, np.integer | np.ndarray):
            if x.dtype.kind not in "iu" or x.shape != ():
                return False
        else:
            return False
        return bool(self.start <= x < self.start + self.n)

    def sample_to_jsonable(self, x: Any) -> int:
        return int(x)

    def sample_from_jsonable(self, data: Any) -> np.int64:
        return np.int64(data)

    def to_jsonable(self) -> dict[str, Any]:
        return {"type": "Discrete", "n": self.n, "start": self.start}

    @classmethod
    def from_jsonable(cls, data: dict[str, Any]) -> Discrete:
        return cls(data["n"], start=data["start"])

    def __repr__(self) -> str:
        return (
            f"Discrete({self.n})" if self.start == 0 else f"Discrete({self.n}, start={self.start})"
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Discrete) and (self.n, self.start) == (other.n, other.start)


register_space_type("Discrete", Discrete)
