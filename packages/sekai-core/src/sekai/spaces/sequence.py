"""Sequence: a variable number of elements of one feature space."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sekai.checks import is_whole_number
from sekai.spaces.space import (
    Space,
    check_sub_space,
    register_space_type,
    space_from_jsonable,
    sub_seeds,
)

# Without max_length, lengths are geometric on {0, 1, 2, ...} with this success probability
# (mean (1 - p) / p = 3).
_LENGTH_P = 0.25


class Sequence(Space[Any]):
    """Variable-length sequences of ``feature_space`` elements.

    A sample is a tuple of elements, or with ``stack=True`` one stacked batch of them (what
    ``sekai.spaces.concatenate`` builds: an array (length, *shape) for a Box feature space).
    """

    def __init__(
        self,
        feature_space: Space[Any],
        *,
        max_length: int | None = None,
        stack: bool = False,
        seed: Any = None,
    ) -> None:
        check_sub_space(feature_space, "Sequence feature_space")
        if max_length is not None:
            if not is_whole_number(max_length):
                raise TypeError(f"Sequence max_length must be an int or None, got {max_length!r}")
            if max_length < 0:
                raise ValueError(f"Sequence max_length must be >= 0, got {max_length}")
            max_length = int(max_length)
        self.feature_space = feature_space
        self.max_length = max_length
        self.stack = bool(stack)
        super().__init__(None, None, seed)

    def seed(self, seed: Any = None) -> Any:
        """Seed the length generator and, with a derived seed, the feature space."""
        seed, (feature_seed,) = sub_seeds(seed, 1)
        super().seed(seed)
        self.feature_space.seed(feature_seed)
        return seed

    @property
    def is_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None) -> Any:
        """A random-length sample; ``mask`` is ``(length, feature_mask)``, either may be None.

        Lengths are uniform on 0..max_length, or geometric with mean 3 without max_length.
        """
        length, feature_mask = None, None
        if mask is not None:
            if not isinstance(mask, tuple) or len(mask) != 2:
                raise TypeError(
                    f"Sequence mask must be a tuple (length, feature_mask), got {mask!r}"
                )
            length, feature_mask = mask
        if length is None:
            if self.max_length is None:
                length = int(self.rng.geometric(_LENGTH_P)) - 1
            else:
                length = int(self.rng.integers(0, self.max_length + 1))
        else:
            if not is_whole_number(length):
                raise TypeError(f"Sequence mask length must be an int or None, got {length!r}")
            if length < 0 or (self.max_length is not None and length > self.max_length):
                raise ValueError(
                    f"Sequence mask length must be in [0, {self.max_length}], got {length}"
                )
        return self.pack([self.feature_space.sample(feature_mask) for _ in range(int(length))])

    def pack(self, items: Iterable[Any]) -> Any:
        """A sample holding ``items``, in the space's representation (tuple or stacked)."""
        items = list(items)
        if not self.stack:
            return tuple(items)
        from sekai.spaces.utils import concatenate  # utils imports this module

        return concatenate(self.feature_space, items)

    def elements(self, x: Any) -> list[Any]:
        """The list of elements of a sample, whichever representation the space uses."""
        if not self.stack:
            return list(x)
        from sekai.spaces.utils import iterate  # utils imports this module

        return list(iterate(self.feature_space, x))

    def contains(self, x: Any) -> bool:
        """At most max_length elements of the feature space, in the space's representation."""
        if not self.stack:
            return (
                isinstance(x, tuple | list)
                and (self.max_length is None or len(x) <= self.max_length)
                and all(self.feature_space.contains(e) for e in x)
            )
        from sekai.spaces.utils import batch_space  # utils imports this module

        try:
            elements = self.elements(x)
        except (TypeError, ValueError, KeyError, IndexError):
            return False
        if self.max_length is not None and len(elements) > self.max_length:
            return False
        # the batch space checks the stacked structure (also when empty), the feature space
        # each element (e.g. a MaskedBox's empty slots, which its batch space does not check)
        return batch_space(self.feature_space, len(elements)).contains(x) and all(
            self.feature_space.contains(e) for e in elements
        )

    def sample_to_jsonable(self, x: Any) -> list[Any]:
        return [self.feature_space.sample_to_jsonable(e) for e in self.elements(x)]

    def sample_from_jsonable(self, data: Any) -> Any:
        return self.pack(self.feature_space.sample_from_jsonable(e) for e in data)

    def to_jsonable(self) -> dict[str, Any]:
        return {
            "type": "Sequence",
            "feature_space": self.feature_space.to_jsonable(),
            "max_length": self.max_length,
            "stack": self.stack,
        }

    @classmethod
    def from_jsonable(cls, data: dict[str, Any]) -> Sequence:
        return cls(
            space_from_jsonable(data["feature_space"]),
            max_length=data["max_length"],
            stack=data["stack"],
        )

    def __repr__(self) -> str:
        options = "" if self.max_length is None else f", max_length={self.max_length}"
        if self.stack:
            options += ", stack=True"
        return f"Sequence({self.feature_space!r}{options})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Sequence)
            and self.feature_space == other.feature_space
            and (self.max_length, self.stack) == (other.max_length, other.stack)
        )


register_space_type("Sequence", Sequence)
