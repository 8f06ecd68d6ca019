"""The ``Space`` base class and the registry that rebuilds spaces from JSON."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

import numpy as np

from sekai.checks import check_seed, is_whole_number

T_cov = TypeVar("T_cov", covariant=True)

SeedType = Any  # an int or None; composite spaces also take a dict (Dict) or list (Tuple)


class Space(Generic[T_cov]):
    """The set of valid observations or actions, with its own random generator.

    Subclasses implement ``sample``, ``contains``, ``is_flattenable``,
    ``to_jsonable`` / ``from_jsonable``, ``__eq__`` and ``__repr__``; the utilities of
    ``sekai.spaces.utils`` (flattening, batching, zero samples) are registered per type.
    """

    def __init__(
        self,
        shape: tuple[int, ...] | None = None,
        dtype: Any = None,
        seed: SeedType = None,
    ) -> None:
        self._shape = None if shape is None else tuple(int(dim) for dim in shape)
        self.dtype = None if dtype is None else np.dtype(dtype)
        self._rng: np.random.Generator | None = None
        if seed is not None:
            self.seed(seed)

    @property
    def shape(self) -> tuple[int, ...] | None:
        """The shape of a sample for array spaces, None for composite ones."""
        return self._shape

    @property
    def rng(self) -> np.random.Generator:
        """The space's generator, created from OS entropy on first use if never seeded."""
        if self._rng is None:
            self._rng = np.random.default_rng()
        return self._rng

    def seed(self, seed: SeedType = None) -> Any:
        """Re-seed the generator (None: fresh OS entropy) and return the seed used."""
        seed = _check_seed(seed)
        self._rng = np.random.default_rng(seed)
        return seed

    def sample(self, mask: Any = None) -> T_cov:
        """A random element, restricted by ``mask`` when given (format depends on the space)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement sample()")

    def contains(self, x: Any) -> bool:
        """Whether ``x`` is an element of the space."""
        raise NotImplementedError(f"{type(self).__name__} does not implement contains()")

    def __contains__(self, x: Any) -> bool:
        return self.contains(x)

    @property
    def is_flattenable(self) -> bool:
        """Whether ``sekai.spaces.flatten`` maps samples into a fixed-size vector."""
        raise NotImplementedError(f"{type(self).__name__} does not implement is_flattenable")

    def to_jsonable(self) -> dict[str, Any]:
        """A plain dict with a ``"type"`` key that ``space_from_jsonable`` rebuilds."""
        raise NotImplementedError(f"{type(self).__name__} does not implement to_jsonable()")

    @classmethod
    def from_jsonable(cls, data: dict[str, Any]) -> Space[Any]:
        """Rebuild a space of this type from ``to_jsonable`` output."""
        raise NotImplementedError(f"{cls.__name__} does not implement from_jsonable()")

    def sample_to_jsonable(self, x: Any) -> Any:
        """A sample as JSON-compatible Python data (lists, numbers, dicts)."""
        return np.asarray(x).tolist()

    def sample_from_jsonable(self, data: Any) -> Any:
        """The sample that ``sample_to_jsonable`` turned into ``data``."""
        sample = np.asarray(data, dtype=self.dtype)
        return sample if self._shape is None else sample.reshape(self._shape)


class _ArraySpace(Space[T_cov]):
    """A space whose elements are arrays of one fixed shape (Box, MultiBinary, MultiDiscrete):
    ``shape`` is never None and every element flattens to a fixed-size vector."""

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of every element."""
        assert self._shape is not None
        return self._shape

    @property
    def is_flattenable(self) -> bool:
        return True


def _check_seed(seed: SeedType) -> int:
    """A non-negative int seed; None becomes fresh OS entropy so the seed used can be returned."""
    if seed is None:
        return cast(int, np.random.SeedSequence().entropy)
    return cast(int, check_seed(seed))


def check_sub_space(space: object, where: str) -> None:
    """TypeError unless ``space`` is a sekai Space; a gymnasium space is pointed at sekai.compat."""
    if isinstance(space, Space):
        return
    message = f"{where} must be a sekai space (sekai.spaces.Space), got {space!r}"
    if type(space).__module__.startswith("gymnasium."):
        message += (
            ", a gymnasium space: build the sekai space of the same name, or convert it with "
            "sekai.compat (pip install 'sekai-compat[gymnasium]')"
        )
    raise TypeError(message)


def check_shape(shape: Any, name: str) -> tuple[int, ...]:
    """``shape`` (an int or a sequence of ints) as a tuple of non-negative Python ints.

    ``name`` says what is checked in messages, e.g. ``"Box shape"``. Floats are refused rather
    than truncated, so a shape of (2.5,) cannot silently become (2,).
    """
    dims = (shape,) if isinstance(shape, int | np.integer) else shape
    try:
        dims = tuple(dims)
    except TypeError:
        dims = None
    if dims is None or isinstance(shape, str) or any(not is_whole_number(dim) for dim in dims):
        raise TypeError(f"{name} must be an int or a tuple of ints, got {shape!r}")
    if any(dim < 0 for dim in dims):
        raise ValueError(f"{name} must have non-negative dimensions, got {shape}")
    return tuple(int(dim) for dim in dims)


def sub_seeds(seed: SeedType, count: int) -> tuple[int, list[int]]:
    """The seed used for a composite space and the ``count`` seeds derived from it.

    Derived through ``SeedSequence`` rather than drawn from the composite's generator, so
    seeding never consumes that generator's stream.
    """
    seed = _check_seed(seed)
    return seed, [int(s) for s in np.random.SeedSequence(seed).generate_state(count)]


_SPACE_TYPES: dict[str, Callable[[dict[str, Any]], Space[Any]]] = {}


def register_space_type(name: str, space_type: type[Space[Any]]) -> None:
    """Let ``space_from_jsonable`` rebuild ``{"type": name, ...}`` with ``space_type``."""
    if not (isinstance(space_type, type) and issubclass(space_type, Space)):
        raise TypeError(f"register_space_type needs a Space subclass, got {space_type!r}")
    _SPACE_TYPES[name] = space_type.from_jsonable


def space_from_jsonable(data: dict[str, Any]) -> Space[Any]:
    """Rebuild any registered space from the dict its ``to_jsonable()`` returned."""
    if not isinstance(data, dict) or "type" not in data:
        raise ValueError(f"a space in JSON is a dict with a 'type' key, got {data!r}")
    try:
        from_jsonable = _SPACE_TYPES[data["type"]]
    except (KeyError, TypeError):
        known = ", ".join(sorted(_SPACE_TYPES))
        raise ValueError(
            f"unknown space type {data['type']!r}; registered types: {known}"
        ) from None
    try:
        return from_jsonable(data)
    except KeyError as error:
        raise ValueError(f"{data['type']} JSON is missing the field {error}: {data!r}") from None


def check_mask_array(mask: Any, shape: tuple[int, ...], space: str, values: str = "01") -> Any:
    """``mask`` as an integer array of ``shape`` with entries among ``values`` ("01" or "-101")."""
    try:
        array = np.asarray(mask)
    except ValueError:  # ragged nested lists
        raise ValueError(f"{space} mask must be an array of shape {shape}, got {mask!r}") from None
    if array.dtype.kind not in "biu":
        raise TypeError(f"{space} mask must be an int8 or bool array, got dtype {array.dtype}")
    if array.shape != shape:
        raise ValueError(f"{space} mask must have shape {shape}, got {array.shape}")
    allowed = (0, 1) if values == "01" else (-1, 0, 1)
    if not np.isin(array, allowed).all():
        raise ValueError(f"{space} mask entries must be in {allowed}, got {np.unique(array)}")
    return array
