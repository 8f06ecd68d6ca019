"""MaskedBox: up to max_size Box elements in fixed slots, plus a validity mask."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.checks import is_whole_number
from sekai.spaces.box import Box, bound_repr
from sekai.spaces.dict import Dict
from sekai.spaces.multi_binary import MultiBinary
from sekai.spaces.space import check_mask_array, register_space_type


class MaskedBox(Dict):
    """A variable-size set of Box elements padded to ``max_size`` slots.

    A sample is ``{"values": (max_size, *shape) array, "mask": int8 (max_size,)}``; empty slots
    hold ``fill_value`` (default: zero clipped into the bounds). As a Dict of ``values`` and
    ``mask``, every Dict utility (flattening, batching) applies unchanged.
    """

    def __init__(
        self,
        low: Any,
        high: Any,
        shape: tuple[int, ...] | None = None,
        *,
        max_size: int,
        dtype: Any = np.float32,
        fill_value: Any = None,
        seed: Any = None,
    ) -> None:
        if not is_whole_number(max_size):
            raise TypeError(f"MaskedBox max_size must be an int, got {max_size!r}")
        if max_size < 0:
            raise ValueError(f"MaskedBox max_size must be >= 0, got {max_size}")
        self.max_size = int(max_size)
        self.element_space = Box(low, high, shape, dtype)
        element = self.element_space
        if fill_value is None:
            self.fill_value = element.zero()
        else:
            self.fill_value = np.broadcast_to(
                np.asarray(fill_value, dtype=element.dtype), element.shape
            ).copy()
            if not element.contains(self.fill_value):
                raise ValueError(
                    f"MaskedBox fill_value {fill_value!r} must lie within the bounds of {element}"
                )
        self.fill_value.setflags(write=False)
        slots = (self.max_size, *element.shape)
        values = Box(
            np.broadcast_to(element.low, slots),
            np.broadcast_to(element.high, slots),
            dtype=element.dtype,
        )
        super().__init__({"values": values, "mask": MultiBinary(self.max_size)}, seed=seed)

    @property
    def element_shape(self) -> tuple[int, ...]:
        """The shape of one element."""
        return self.element_space.shape

    def pack(self, values: Any, slots: Iterable[int] | None = None) -> dict[str, NDArray[Any]]:
        """A sample holding ``values`` (k, *element_shape) in ``slots`` (default: the first k)."""
        shape = self.element_shape
        array = np.asarray(values, dtype=self.element_space.dtype)
        if array.size == 0 and array.shape[:1] == (0,):
            array = array.reshape((0, *shape))
        if array.shape[1:] != shape:
            raise ValueError(f"MaskedBox values must have shape (k, *{shape}), got {array.shape}")
        count = len(array)
        slot_array = np.arange(count) if slots is None else np.asarray(list(slots), dtype=np.intp)
        if slot_array.shape != (count,):
            raise ValueError(f"MaskedBox pack got {count} values but {len(slot_array)} slots")
        if count > self.max_size:
            raise ValueError(f"MaskedBox holds at most {self.max_size} elements, got {count}")
        if ((slot_array < 0) | (slot_array >= self.max_size)).any():
            raise ValueError(f"MaskedBox slots must be in [0, {self.max_size}), got {slot_array}")
        if len(np.unique(slot_array)) != count:
            raise ValueError(f"MaskedBox slots must be distinct, got {slot_array}")
        sample = self.empty()
        sample["values"][slot_array] = array
        sample["mask"][slot_array] = 1
        return sample

    def unpack(self, x: dict[str, Any]) -> tuple[NDArray[Any], NDArray[np.intp]]:
        """``(values of the occupied slots, their slot indices)``."""
        slots = np.flatnonzero(x["mask"])
        return np.asarray(x["values"])[slots], slots

    def empty(self) -> dict[str, NDArray[Any]]:
        """A sample with every slot empty."""
        values = np.broadcast_to(self.fill_value, (self.max_size, *self.element_shape)).copy()
        return {"values": values, "mask": np.zeros(self.max_size, np.int8)}

    def sample(self, mask: Any = None) -> dict[str, NDArray[Any]]:
        """Each slot occupied with probability 1/2, or as ``mask`` (max_size,) of 0/1 says."""
        if mask is None:
            occupied = self.spaces["mask"].sample()
        else:
            occupied = check_mask_array(mask, (self.max_size,), "MaskedBox").astype(np.int8)
        values = self.spaces["values"].sample()
        values[occupied == 0] = self.fill_value
        return {"values": values, "mask": occupied}

    def contains(self, x: Any) -> bool:
        """A Dict member whose empty slots hold exactly fill_value."""
        if not super().contains(x):
            return False
        empty = np.asarray(x["mask"]) == 0
        return bool((np.asarray(x["values"])[empty] == self.fill_value).all())

    def to_jsonable(self) -> dict[str, Any]:
        element = self.element_space.to_jsonable()
        return {
            "type": "MaskedBox",
            "low": element["low"],
            "high": element["high"],
            "shape": element["shape"],
            "max_size": self.max_size,
            "dtype": element["dtype"],
            "fill_value": self.fill_value.tolist(),
        }

    @classmethod
    def from_jsonable(cls, data: dict[str, Any]) -> MaskedBox:
        return cls(
            data["low"],
            data["high"],
            tuple(data["shape"]),
            max_size=data["max_size"],
            dtype=data["dtype"],
            fill_value=data["fill_value"],
        )

    def __repr__(self) -> str:
        element = self.element_space
        fill = ""
        if not np.array_equal(self.fill_value, element.zero()):
            fill = f", fill_value={bound_repr(self.fill_value)}"
        return (
            f"MaskedBox({bound_repr(element.low)}, {bound_repr(element.high)}, {element.shape}, "
            f"max_size={self.max_size}{fill}, {element.dtype})"
        )

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MaskedBox)
            and self.element_space == other.element_space
            and self.max_size == other.max_size
            and np.array_equal(self.fill_value, other.fill_value)
        )


register_space_type("MaskedBox", MaskedBox)
