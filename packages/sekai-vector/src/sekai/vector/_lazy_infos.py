"""A list of per-env info dicts whose entries are built only when read."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple, overload


class InfoColumns(NamedTuple):
    """Per-env infos as arrays: ``infos[i]`` is row i of ``arrays`` unless i is in ``irregular``.

    A value with a leading axis as long as the rows it describes gives one entry per row; any
    other value is shared by every row. Row j of ``irregular_arrays`` (nested dicts included) is
    the info of sub-env ``irregular[j]``; None when those infos are only available as dicts.
    """

    arrays: dict[str, Any]
    irregular: Any
    irregular_arrays: dict[str, Any] | None


class _LazyInfos(Sequence[dict[str, Any]]):
    """A list of per-env info dicts whose entries are built when first read.

    Native vector envs produce infos as arrays; splitting them into ``num_envs`` dicts every
    step would cost more than the step itself, so a caller who never reads infos pays nothing.
    """

    __slots__ = ("_all", "_build", "_build_all", "_built", "_columns", "_num_envs")

    def __init__(
        self,
        num_envs: int,
        build: Callable[[int], dict[str, Any]],
        columns: InfoColumns | Callable[[], InfoColumns] | None = None,
        build_all: Callable[[], list[dict[str, Any]]] | None = None,
    ) -> None:
        """``build(i)`` makes info i; ``build_all()``, if given, makes them all at once, cheaper
        than one by one, for a caller that iterates over every info. ``columns`` are the
        arrays the infos are built from, or a function making them when first asked for."""
        self._num_envs = num_envs
        self._build = build
        self._build_all = build_all
        self._built: dict[int, dict[str, Any]] = {}
        self._all: list[dict[str, Any]] | None = None  # every info, once built all at once
        self._columns = columns

    def columns(self) -> InfoColumns | None:
        """The arrays these infos are built from, or None when they were not built that way.

        Lets a caller that wants infos as arrays (gymnasium's vector API) skip building one dict
        per sub-env.
        """
        columns = self._columns
        if columns is None or isinstance(columns, InfoColumns):
            return columns
        self._columns = columns = columns()
        return columns

    def __len__(self) -> int:
        return self._num_envs

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...
    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._num_envs))]
        i = int(index)
        if i < 0:
            i += self._num_envs
        if not 0 <= i < self._num_envs:
            raise IndexError(f"sub-env index {index} out of range for {self._num_envs} sub-envs")
        if self._all is not None:
            return self._all[i]
        info = self._built.get(i)
        if info is None:
            info = self._built[i] = self._build(i)
        return info

    def __iter__(self) -> Iterator[dict[str, Any]]:
        if self._build_all is None:
            return (self[i] for i in range(self._num_envs))
        if self._all is None:
            infos = self._build_all()
            for i, info in self._built.items():  # the dicts handed out already stay the ones
                infos[i] = info
            self._all = infos
        return iter(self._all)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __reduce__(self) -> tuple[type[list[dict[str, Any]]], tuple[list[dict[str, Any]]]]:
        # pickles (and deep-copies) as the plain list it stands for; the builder is a closure
        return (list, (list(self),))

    def __repr__(self) -> str:
        return repr(list(self))
