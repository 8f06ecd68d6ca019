"""Tuple: tuples of sub-space elements."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from sekai.spaces.space import (
    Space,
    check_sub_space,
    register_space_type,
    space_from_jsonable,
    sub_seeds,
)


class Tuple(Space[tuple[Any, ...]]):
    """A fixed-length tuple of sub-spaces."""

    def __init__(self, spaces: Iterable[Space[Any]], seed: Any = None) -> None:
        self.spaces: tuple[Space[Any], ...] = tuple(spaces)
        for index, space in enumerate(self.spaces):
            check_sub_space(space, f"Tuple element {index}")
        super().__init__(None, None, seed)

    def seed(self, seed: Any = None) -> Any:
        """Seed every sub-space: an int (or None) derives one seed per entry, a list gives them.

        Returns the int seed used, or the list of the seeds the sub-spaces used.
        """
        if isinstance(seed, list | tuple):
            if len(seed) != len(self.spaces):
                raise ValueError(
                    f"Tuple seed list has {len(seed)} seeds for {len(self.spaces)} sub-spaces"
                )
            return [space.seed(s) for space, s in zip(self.spaces, seed, strict=True)]
        seed, derived = sub_seeds(seed, len(self.spaces))
        super().seed(seed)
        for space, space_seed in zip(self.spaces, derived, strict=True):
            space.seed(space_seed)
        return seed

    @property
    def is_flattenable(self) -> bool:
        return all(space.is_flattenable for space in self.spaces)

    def sample(self, mask: Any = None) -> tuple[Any, ...]:
        """A sample of every sub-space; ``mask`` has one sub-mask (or None) per sub-space."""
        if mask is None:
            return tuple(space.sample() for space in self.spaces)
        if not isinstance(mask, tuple | list):
            raise TypeError(f"Tuple mask must be a tuple of sub-masks, got {type(mask).__name__}")
        if len(mask) != len(self.spaces):
            raise ValueError(
                f"Tuple mask has {len(mask)} sub-masks for {len(self.spaces)} sub-spaces"
            )
        return tuple(space.sample(m) for space, m in zip(self.spaces, mask, strict=True))

    def contains(self, x: Any) -> bool:
        """A tuple (or list) of the same length whose entries are in their sub-spaces."""
        return (
            isinstance(x, tuple | list)
            and len(x) == len(self.spaces)
            and all(space.contains(e) for space, e in zip(self.spaces, x, strict=True))
        )

    def __getitem__(self, index: int) -> Space[Any]:
        return self.spaces[index]

    def __iter__(self) -> Iterator[Space[Any]]:
        return iter(self.spaces)

    def __len__(self) -> int:
        return len(self.spaces)

    def sample_to_jsonable(self, x: Any) -> list[Any]:
        return [space.sample_to_jsonable(e) for space, e in zip(self.spaces, x, strict=True)]

    def sample_from_jsonable(self, data: Any) -> tuple[Any, ...]:
        return tuple(
            space.sample_from_jsonable(e) for space, e in zip(self.spaces, data, strict=True)
        )

    def to_jsonable(self) -> dict[str, Any]:
        return {"type": "Tuple", "spaces": [space.to_jsonable() for space in self.spaces]}

    @classmethod
    def from_jsonable(cls, data: dict[str, Any]) -> Tuple:
        return cls([space_from_jsonable(space) for space in data["spaces"]])

    def __repr__(self) -> str:
        return f"Tuple({', '.join(repr(space) for space in self.spaces)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tuple) and self.spaces == other.spaces


register_space_type("Tuple", Tuple)
