"""Box: n-dimensional arrays within [low, high]."""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai._warnings import warn
from sekai.spaces.space import _ArraySpace, check_shape, register_space_type

# Bounds with more elements than this print summarised, numpy-style (first and last three).
_REPR_MAX_ELEMENTS = 10


class Box(_ArraySpace[NDArray[Any]]):
    """A continuous (or integer) box; bounds are scalars broadcast to ``shape`` or arrays.

    Unbounded dimensions sample from a normal distribution (both sides unbounded) or a shifted
    exponential (one side). For an integer dtype, infinite bounds become the dtype's limits and
    finite bounds outside its range are clipped to them with a warning.
    """

    dtype: np.dtype[Any]

    def __init__(
        self,
        low: Any,
        high: Any,
        shape: tuple[int, ...] | None = None,
        dtype: Any = np.float32,
        seed: Any = None,
    ) -> None:
        if dtype is None:
            raise TypeError("Box dtype must be a numeric dtype, got None")
        dtype = np.dtype(dtype)
        if dtype.kind not in "iuf":
            raise TypeError(f"Box dtype must be an integer or floating dtype, got {dtype}")
        low_array, high_array = _raw_bound(low, "low"), _raw_bound(high, "high")
        shape = _box_shape(low_array, high_array, shape)
        self.low = _cast_bound(low_array, "low", dtype, shape)
        self.high = _cast_bound(high_array, "high", dtype, shape)
        if (self.low > self.high).any():
            raise ValueError("Box low must be <= high in every dimension")
        self.bounded_below: NDArray[np.bool_] = np.isfinite(self.low)
        self.bounded_above: NDArray[np.bool_] = np.isfinite(self.high)
        for array in (self.bounded_below, self.bounded_above):
            array.setflags(write=False)
        self._fully_bounded = bool(self.bounded_below.all() and self.bounded_above.all())
        self._fully_unbounded = not (self.bounded_below.any() or self.bounded_above.any())
        self._zero = np.clip(np.zeros(shape, dtype), self.low, self.high)
        super().__init__(shape, dtype, seed)

    @property
    def is_bounded(self) -> tuple[bool, bool]:
        """(every dimension bounded below, every dimension bounded above)."""
        return bool(self.bounded_below.all()), bool(self.bounded_above.all())

    def zero(self) -> NDArray[Any]:
        """An element of zeros clipped into the bounds."""
        return self._zero.copy()

    def sample(self, mask: Any = None) -> NDArray[Any]:
        """Uniform within finite bounds, normal/exponential where unbounded.

        ``mask`` (broadcastable to the shape) keeps entries where it is 1 and sets the others to
        ``zero``.
        """
        rng = self.rng
        if self.dtype.kind in "iu":
            sample = rng.integers(
                self.low, self.high, size=self.shape, endpoint=True, dtype=self.dtype
            )
        elif self._fully_bounded:
            sample = rng.uniform(self.low, self.high, size=self.shape).astype(self.dtype)
        elif self._fully_unbounded:
            sample = rng.normal(size=self.shape).astype(self.dtype)
        else:
            sample = self._sample_unbounded(rng)
        if mask is not None:
            sample = np.where(self._check_mask(mask) == 0, self._zero, sample)
        return sample

    def _sample_unbounded(self, rng: np.random.Generator) -> NDArray[Any]:
        below, above = self.bounded_below, self.bounded_above
        sample = np.empty(self.shape, np.float64)
        unbounded = ~below & ~above
        only_below, only_above, both = below & ~above, ~below & above, below & above
        sample[unbounded] = rng.normal(size=int(unbounded.sum()))
        sample[only_below] = self.low[only_below] + rng.exponential(size=int(only_below.sum()))
        sample[only_above] = self.high[only_above] - rng.exponential(size=int(only_above.sum()))
        sample[both] = rng.uniform(self.low[both], self.high[both])
        return sample.astype(self.dtype)

    def _check_mask(self, mask: Any) -> NDArray[Any]:
        array = np.asarray(mask)
        if array.dtype.kind not in "biu":
            raise TypeError(f"Box mask must be an int8 or bool array, got dtype {array.dtype}")
        try:
            broadcast = np.broadcast_shapes(array.shape, self.shape)
        except ValueError:
            broadcast = None
        if broadcast != self.shape:
            raise ValueError(
                f"Box mask must be broadcastable to the shape {self.shape}, got {array.shape}"
            )
        if not np.isin(array, (0, 1)).all():
            raise ValueError("Box mask entries must be 0 or 1")
        return array

    def contains(self, x: Any) -> bool:
        """Exact shape, a dtype castable to the space's (same_kind) and within bounds.

        Python ints and lists of them are judged by value, whatever the box's integer dtype.
        """
        if not isinstance(x, np.ndarray):
            python_data = not isinstance(x, np.generic)
            try:
                x = np.asarray(x)
            except (ValueError, TypeError):
                return False
            if python_data and x.dtype.kind in "iu" and self.dtype.kind in "iu":
                return x.shape == self._shape and self._within_bounds(x)
        if x.shape != self._shape or not np.can_cast(x.dtype, self.dtype, "same_kind"):
            return False
        return self._within_bounds(x)

    def _within_bounds(self, x: NDArray[Any]) -> bool:
        return bool((x >= self.low).all() and (x <= self.high).all())

    def to_jsonable(self) -> dict[str, Any]:
        return {
            "type": "Box",
            "low": _compact(self.low),
            "high": _compact(self.high),
            "shape": list(self.shape),
            "dtype": str(self.dtype),
        }

    @classmethod
    def from_jsonable(cls, data: dict[str, Any]) -> Box:
        return cls(data["low"], data["high"], tuple(data["shape"]), data["dtype"])

    def __repr__(self) -> str:
        return f"Box({bound_repr(self.low)}, {bound_repr(self.high)}, {self.shape}, {self.dtype})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Box)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and np.array_equal(self.low, other.low)
            and np.array_equal(self.high, other.high)
        )


def bound_repr(bound: NDArray[Any]) -> str:
    """One number when every entry is equal, else a flat list summarised when long."""
    flat = bound.ravel()
    if flat.size and (flat == flat[0]).all():
        return str(flat[0])
    items = [str(value) for value in flat]
    if len(items) > _REPR_MAX_ELEMENTS:
        items = [*items[:3], "...", *items[-3:]]
    return f"[{', '.join(items)}]"


def _compact(bound: NDArray[Any]) -> Any:
    """A bound as JSON data: one number when every entry is equal, else nested lists."""
    flat = bound.ravel()
    if flat.size and (flat == flat[0]).all():
        return flat[0].item()
    return bound.tolist()


def _raw_bound(value: Any, name: str) -> NDArray[Any]:
    array = np.asarray(value)
    if array.dtype.kind == "O":  # Python ints beyond 64 bits: compare them as floats
        with contextlib.suppress(TypeError, ValueError):
            array = np.asarray(value, dtype=np.float64)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"Box {name} must be numeric, got {value!r}")
    if array.dtype.kind == "f" and np.isnan(array).any():
        raise ValueError(f"Box {name} must not contain NaN, got {value!r}")
    return array


def _box_shape(
    low: NDArray[Any], high: NDArray[Any], shape: tuple[int, ...] | None
) -> tuple[int, ...]:
    """The explicit shape, or the shape of the array bounds (which must agree)."""
    if shape is not None:
        shape = check_shape(shape, "Box shape")
    for name, bound in (("low", low), ("high", high)):
        if bound.ndim == 0:
            continue
        if shape is None:
            shape = bound.shape
        elif bound.shape != shape:
            raise ValueError(f"Box {name} has shape {bound.shape}, but the shape is {shape}")
    return () if shape is None else shape


def _cast_bound(
    bound: NDArray[Any], name: str, dtype: np.dtype[Any], shape: tuple[int, ...]
) -> NDArray[Any]:
    """The bound in ``dtype`` broadcast to ``shape`` (read-only)."""
    if dtype.kind in "iu":
        bound = _integer_bound(bound, name, dtype)
    result = np.broadcast_to(bound.astype(dtype), shape).copy()
    result.setflags(write=False)
    return result


def _integer_bound(bound: NDArray[Any], name: str, dtype: np.dtype[Any]) -> NDArray[Any]:
    """Infinities become the dtype's limits; finite values outside its range are clipped."""
    info = np.iinfo(dtype)
    if bound.dtype.kind == "f":
        finite = np.isfinite(bound)
        rounded = np.ceil(bound) if name == "low" else np.floor(bound)
        # float(info.max) rounds up to 2**63 (2**64) for int64 (uint64), which is out of range
        too_high = rounded > float(info.max)
        if float(info.max) > info.max:
            too_high |= rounded == float(info.max)
        too_low = rounded < float(info.min)
        in_range = ~too_low & ~too_high
        out_of_range = finite & ~in_range
        values = np.where(in_range, rounded, 0).astype(dtype)
    else:
        too_low, too_high = bound < info.min, bound > info.max
        out_of_range = too_low | too_high
        values = np.where(out_of_range, 0, bound).astype(dtype)
    if out_of_range.any():
        warn(
            f"Box {name} {bound.tolist()} is outside the range of {dtype}; clipped to "
            f"[{info.min}, {info.max}]"
        )
    return np.where(too_low, info.min, np.where(too_high, info.max, values)).astype(dtype)


register_space_type("Box", Box)
