"""The limit order book's rules as compiled primitives over level arrays, written once for every
user: the simulated books of LimitOrderBookMarket and LimitOrderBookVecEnv
(``sekai.finance.lob.level_books``), the compiled LOBSTER replay (``_replay_kernel``) and the
replay env's windows of virtual agent orders (``_replay_windows``).

A set of books is lots per (side, tick, book), the book axis last (one book is the N = 1 case);
its anonymous lots, the same shape, are the lots at the head of a level that carry no order of
their own (the simulated public flow's one-lot orders, a replay's legacy volume); ``best``
(books, 2) holds each side's best tick, -1 / ticks when the side is empty. These functions keep
the levels, the best prices, the top-level read-out, the accounts and the matching rule, the
walk of one level in time priority (:func:`match_level`). The orders in a level's queue stay
with the caller (traders' orders with their lots ahead, a replay's order-id FIFO), which hands
the walk its queue and the compiled functions that read and change it.

Every function here is inlined into the kernel that calls it, so it is compiled with that
kernel's options: reference counting off (``_nrt=False``) in ``level_books`` and in what the
replay windows run per window and per message (their outer loop, which allocates, keeps it);
the numba option test checks both. The replay windows inline only what runs per message:
inlined everywhere, their per-instruction functions took a fresh install minutes to compile.
numba's cache does not see a change to an inlined function: delete the callers' cache files
after editing this one.
numba is imported here only, and by those kernels.
"""

from __future__ import annotations

from typing import Any

import numba

from sekai.finance.lob.book import BUY, SELL

# Reference counting off (``_nrt=False``, an option of numba's CPU target that its typing stubs
# leave out): the kernels only index arrays the caller owns and allocate nothing, and the
# counting numba adds around every array passed to a helper otherwise doubles the time per
# event. numba has no public spelling of this option (checked on 0.61-0.68);
# tests/finance/lob/test_numba_option.py fails if the installed numba drops it or it stops
# removing the counting.
jit = numba.njit(cache=True, _nrt=False)  # type: ignore[call-overload]
inline = numba.njit(cache=True, _nrt=False, inline="always")  # type: ignore[call-overload]
# rows (windows, books) from which a pass over them runs on every core: fewer run on one
# thread, with no thread pool to wake (a single env, and each worker process of a vector env)
PARALLEL_FROM = 64


@inline
def outward(volume: Any, b: int, side: int, price: int, limit: int) -> int:
    """The first tick from ``price`` away from the spread (down for bids, up for asks) that
    holds lots in book ``b``, stopping at ``limit``, which it never reads (a tick past the
    last one to look at); a tick not strictly inside ``limit`` means none."""
    if side == BUY:
        while price > limit and volume[BUY, price, b] == 0:
            price -= 1
    else:
        while price < limit and volume[side, price, b] == 0:
            price += 1
    return price


@inline
def improve_best(best: Any, b: int, side: int, price: int) -> None:
    """Make ``price`` the best of its side in book ``b`` if it is better (lots came there)."""
    if (price > best[b, side]) if side == BUY else (price < best[b, side]):
        best[b, side] = price


@inline
def after_removal(volume: Any, best: Any, b: int, side: int, price: int) -> None:
    """Move the best of a side whose best level just emptied to the next filled tick (-1 /
    ticks: the side is empty)."""
    if volume[side, price, b] != 0 or best[b, side] != price:
        return
    if side == BUY:
        best[b, side] = outward(volume, b, side, price - 1, -1)
    else:
        best[b, side] = outward(volume, b, side, price + 1, volume.shape[1])


@inline
def top_levels(volume: Any, best: Any, b: int, bid_limit: int, ask_limit: int, out: Any) -> None:
    """Book ``b``'s filled levels of each side from its best out to the side's limit (see
    :func:`outward`), best first, into ``out`` (side, level, then tick and lots; as many
    levels as it holds); tick -1 and 0 lots past the last level."""
    for side in (BUY, SELL):
        price = best[b, side]
        limit = bid_limit if side == BUY else ask_limit
        step = -1 if side == BUY else 1
        k = 0
        while k < out.shape[1]:
            price = outward(volume, b, side, price, limit)
            if (price <= limit) if side == BUY else (price >= limit):
                break
            out[side, k, 0] = price
            out[side, k, 1] = volume[side, price, b]
            k += 1
            price += step
        while k < out.shape[1]:
            out[side, k, 0] = -1
            out[side, k, 1] = 0
            k += 1


@inline
def add_anonymous(volume: Any, anonymous: Any, b: int, side: int, price: int, lots: int) -> None:
    """``lots`` anonymous lots more at a level (the caller keeps the best and the positions of
    the orders they went ahead of, if any)."""
    volume[side, price, b] += lots
    anonymous[side, price, b] += lots


@inline
def take_anonymous(volume: Any, anonymous: Any, b: int, side: int, price: int, lots: int) -> int:
    """Up to ``lots`` of a level's anonymous lots taken off it (traded or cancelled); returns
    how many there were."""
    taken = min(lots, anonymous[side, price, b])
    anonymous[side, price, b] -= taken
    volume[side, price, b] -= taken
    return taken


@inline
def room(inventory: int, side: int, cap: int) -> int:
    """Lots a participant holding ``inventory`` may still buy (``side`` BUY) or sell within
    the inventory cap ``cap``."""
    return cap - inventory if side == BUY else cap + inventory


@inline
def settle(
    cash: Any, inventory: Any, row: int, party: int, side: int, lots: int, value: float, fee: float
) -> None:
    """One party's account after a fill: ``lots`` bought (``side`` BUY) or sold at ``value``
    each, and ``fee`` per lot paid (a negative fee is a rebate)."""
    if side == BUY:
        inventory[row, party] += lots
        cash[row, party] -= value * lots
    else:
        inventory[row, party] -= lots
        cash[row, party] += value * lots
    cash[row, party] -= fee * lots


@inline
def match_level(
    volume: Any,
    anonymous: Any,
    b: int,
    side: int,
    price: int,
    lots: int,
    queue: Any,
    first: Any,
    fill: Any,
    leave: Any,
) -> int:
    """Up to ``lots`` traded at one level of book ``b`` in time priority: the anonymous lots
    ahead of the level's first order trade first, then that order, whole or in part (emptied,
    it leaves the queue), and so on; returns the lots left (the level is then empty).

    The queue is the caller's: ``queue`` and three compiled functions of it, each a type of its
    own to numba, so each caller gets this walk compiled with its own queue inlined.
    ``first(queue, b, side, price, anonymous lots)``: the level's first order (-1: none), the
    anonymous lots ahead of it (all of them if none) and its lots; ``fill(queue, b, side,
    price, order, lots)``: ``lots`` of ``order`` traded (-1: anonymous lots from the head);
    ``leave(queue, b, side, price, order)``: the emptied order out of the queue."""
    while lots > 0:
        order, ahead, resting = first(queue, b, side, price, anonymous[side, price, b])
        if ahead > 0:
            traded = take_anonymous(volume, anonymous, b, side, price, min(lots, ahead))
            fill(queue, b, side, price, -1, traded)
        elif order >= 0:
            traded = min(lots, resting)
            volume[side, price, b] -= traded
            fill(queue, b, side, price, order, traded)
            if traded == resting:
                leave(queue, b, side, price, order)
        else:
            break
        lots -= traded
    return lots
