"""Searches of a sorted array for where a value falls, compiled: a galloping search out from a
guess (``gallop``), for the replay's lookups whose answers lie near the last ones (the messages a
window's step spans, after its cursor; a level's lots at a window's view, after its last view),
and the per-window search of a tape's messages by time (``search_after``). numba is imported
here and in the other kernels only.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob._engine import PARALLEL_FROM, inline


@inline
def gallop(values, first, end, start, t):  # type: ignore[no-untyped-def]
    """The first index in ``first:end`` (``values`` ascending there) whose value is past
    ``t``, ``end`` if none: searched out from ``start`` (clamped into the range), the step
    doubling, so that an answer near a good guess costs a few reads where a binary search
    of the whole range costs a cache miss a halving; ``start`` < 0: no guess."""
    if start < 0:
        lo, hi = first, end
    else:
        start = min(max(start, first), end)
        if start < end and values[start] <= t:  # past start
            lo = hi = start + 1
            step = 1
            while hi < end and values[hi] <= t:
                lo = hi + 1
                hi = lo + step
                step *= 2
            hi = min(hi, end)
        else:  # at or before start
            lo = hi = start
            step = 1
            while lo > first and values[lo - 1] > t:
                hi = lo - 1
                lo = hi - step
                step *= 2
            lo = max(lo, first)
    while lo < hi:
        mid = (lo + hi) >> 1
        if values[mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    return lo


def search_after(
    time: NDArray[np.float64],
    firsts: NDArray[np.int64],
    ends: NDArray[np.int64],
    day: NDArray[np.int64],
    times: Any,
    near: NDArray[np.int64] | None,
) -> NDArray[np.int64]:
    """Per window w, the first index in ``firsts[day[w]]:ends[day[w]]`` whose ``time`` is
    past ``times[w]`` (each of its entries), searched out from ``near[w]`` if given."""
    times = np.asarray(times, np.float64)
    found = np.empty(times.shape, np.int64)
    flat = (len(day), times.size // max(len(day), 1))
    if near is None:
        near = np.full(len(day), -1)  # no guess: a binary search
    search = _after_parallel if len(day) >= PARALLEL_FROM else _after
    search(time, firsts, ends, day, times.reshape(flat), near, found.reshape(flat))
    return found


@numba.njit(cache=True, _nrt=False)  # type: ignore[call-overload,misc]
def _after(time, firsts, ends, day, times, near, found):  # type: ignore[no-untyped-def]
    for w in range(times.shape[0]):
        _after_window(time, firsts, ends, day, times, near, found, w)


@numba.njit(cache=True, parallel=True, _nrt=False)  # type: ignore[call-overload,misc]
def _after_parallel(time, firsts, ends, day, times, near, found):  # type: ignore[no-untyped-def]
    """``_after`` with the windows spread over every core."""
    for w in numba.prange(times.shape[0]):
        _after_window(time, firsts, ends, day, times, near, found, w)


@numba.njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload,misc]
def _after_window(time, firsts, ends, day, times, near, found, w):  # type: ignore[no-untyped-def]
    first, end = firsts[day[w]], ends[day[w]]
    for j in range(times.shape[1]):
        found[w, j] = gallop(time, first, end, near[w], times[w, j])
