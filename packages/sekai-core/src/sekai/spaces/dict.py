"""Dict: dicts of sub-space elements, keyed by str in insertion order."""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any

from sekai.spaces.space import (
    Space,
    check_sub_space,
    register_space_type,
    space_from_jsonable,
    sub_seeds,
)


class Dict(Space[dict[str, Any]]):
    """A dict of named sub-spaces, e.g. ``Dict(prices=Box(...), regime=Discrete(3))``."""

    def __init__(
        self,
        spaces: Mapping[str, Space[Any]] | None = None,
        seed: Any = None,
        **spaces_kwargs: Space[Any],
    ) -> None:
        if spaces is not None and spaces_kwargs:
            raise TypeError("Dict takes its sub-spaces as a mapping or as keywords, not both")
        items = spaces_kwargs if spaces is None else spaces
        if not isinstance(items, Mapping):
            raise TypeError(f"Dict spaces must be a mapping of str to Space, got {items!r}")
        for key, space in items.items():
            if not isinstance(key, str):
                raise TypeError(f"Dict keys must be str, got {key!r}")
            check_sub_space(space, f"Dict value for {key!r}")
        self.spaces: dict[str, Space[Any]] = dict(items)
        super().__init__(None, None, seed)

    def seed(self, seed: Any = None) -> Any:
        """Seed every sub-space: an int (or None) derives one seed per key, a dict gives them.

        Returns the int seed used, or the dict of the seeds the sub-spaces used.
        """
        if isinstance(seed, dict):
            if seed.keys() != self.spaces.keys():
                raise ValueError(
                    f"Dict seed keys {list(seed)} must be the space's keys {list(self.spaces)}"
                )
            return {key: space.seed(seed[key]) for key, space in self.spaces.items()}
        seed, derived = sub_seeds(seed, len(self.spaces))
        super().seed(seed)
        for space, space_seed in zip(self.spaces.values(), derived, strict=True):
            space.seed(space_seed)
        return seed

    @property
    def is_flattenable(self) -> bool:
        return all(space.is_flattenable for space in self.spaces.values())

    def sample(self, mask: Any = None) -> dict[str, Any]:
        """A sample of every sub-space; ``mask`` is a dict of sub-masks (missing: unmasked)."""
        if mask is None:
            return {key: space.sample() for key, space in self.spaces.items()}
        if not isinstance(mask, Mapping):
            raise TypeError(f"Dict mask must be a dict of sub-masks, got {type(mask).__name__}")
        unknown = [key for key in mask if key not in self.spaces]
        if unknown:
            raise ValueError(f"Dict mask has keys {unknown} that are not in the space")
        return {key: space.sample(mask.get(key)) for key, space in self.spaces.items()}

    def contains(self, x: Any) -> bool:
        """A mapping with exactly the space's keys whose values are in their sub-spaces."""
        return (
            isinstance(x, Mapping)
            and x.keys() == self.spaces.keys()
            and all(space.contains(x[key]) for key, space in self.spaces.items())
        )

    def __getitem__(self, key: str) -> Space[Any]:
        return self.spaces[key]

    def keys(self) -> KeysView[str]:
        return self.spaces.keys()

    def values(self) -> ValuesView[Space[Any]]:
        return self.spaces.values()

    def items(self) -> ItemsView[str, Space[Any]]:
        return self.spaces.items()

    def __iter__(self) -> Iterator[str]:
        return iter(self.spaces)

    def __len__(self) -> int:
        return len(self.spaces)

    def sample_to_jsonable(self, x: Any) -> dict[str, Any]:
        return {key: space.sample_to_jsonable(x[key]) for key, space in self.spaces.items()}

    def sample_from_jsonable(self, data: Any) -> dict[str, Any]:
        return {key: space.sample_from_jsonable(data[key]) for key, space in self.spaces.items()}

    def to_jsonable(self) -> dict[str, Any]:
        return {
            "type": "Dict",
            "spaces": {key: space.to_jsonable() for key, space in self.spaces.items()},
        }

    @classmethod
    def from_jsonable(cls, data: dict[str, Any]) -> Dict:
        return cls({key: space_from_jsonable(space) for key, space in data["spaces"].items()})

    def __repr__(self) -> str:
        parts = ", ".join(f"{key}: {space!r}" for key, space in self.spaces.items())
        return f"Dict({{{parts}}})"

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is type(self)
            and isinstance(other, Dict)
            and list(self.spaces.items()) == list(other.spaces.items())
        )


register_space_type("Dict", Dict)
