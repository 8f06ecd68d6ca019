"""The private numba option the LOB kernels rely on (``_nrt=False``) still exists and still does
what ``level_books`` says: no reference counting around the arrays a kernel passes on."""

from __future__ import annotations

import numba
import numpy as np


def _compiled_ir(**options: object) -> str:
    """The LLVM IR of a kernel that passes an array to an inlined helper, as level_books does."""

    @numba.njit(inline="always", **options)
    def first(values):  # type: ignore[no-untyped-def]
        return values[0]

    @numba.njit(**options)
    def twice_first(values):  # type: ignore[no-untyped-def]
        return first(values) + first(values)

    assert twice_first(np.arange(3.0) + 1) == 2.0
    return "".join(twice_first.inspect_llvm().values())


def test_the_option_is_still_a_target_option_of_numba() -> None:
    from numba.core.cpu import CPUTargetOptions

    assert hasattr(CPUTargetOptions, "_nrt"), f"numba {numba.__version__} dropped _nrt"


def test_without_it_numba_counts_references_and_with_it_not() -> None:
    assert "NRT_decref" in _compiled_ir()  # so the check below can see the counting
    assert "NRT_" not in _compiled_ir(_nrt=False)


def test_every_level_books_kernel_is_compiled_with_it() -> None:
    from sekai.finance.lob import level_books

    kernels = [
        value
        for value in vars(level_books).values()
        if isinstance(value, numba.core.registry.CPUDispatcher)
    ]
    assert len(kernels) >= 10
    assert all(kernel.targetoptions.get("_nrt") is False for kernel in kernels)


def test_the_replay_windows_count_no_references_per_window_or_message() -> None:
    """The replay windows' kernels allocate at most once per call (in ``_serial`` or
    ``_parallel``), and everything they run per window and per message is compiled without
    the counting, which cost a batch of 1,024 windows nine tenths of its kernel time; so
    are the passes over the windows' views (the traders' rules, the observation and the
    mark)."""
    from sekai.finance.lob import (
        _depth_windows,
        _impact_windows,
        _order_replay,
        _replay_levels,
        _replay_view,
        _replay_windows,
        _trader_rows,
    )

    modules = (
        _replay_windows,
        _impact_windows,
        _depth_windows,
        _replay_levels,
        _order_replay,
        _trader_rows,
        _replay_view,
    )
    for module in modules:
        kernels = {
            name: value
            for name, value in vars(module).items()
            if isinstance(value, numba.core.registry.CPUDispatcher)
            and value.py_func.__module__ == module.__name__
            and name not in ("_serial", "_parallel")
        }
        assert len(kernels) >= 2, module.__name__
        counting = [name for name, k in kernels.items() if k.targetoptions.get("_nrt") is not False]
        assert not counting, f"{module.__name__}: {counting} count references"
