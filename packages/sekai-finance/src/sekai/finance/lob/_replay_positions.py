"""Where in its queue each order a replayed message names stood: what the impact windows
(``_impact_windows``) need to tell the lots a window has lost from the lots it still holds.

Built only for ``impact=True``, from the tape alone (the orders' FIFO queues rebuilt from the
submissions' and the other messages' lots and arrivals), so a replayed day keeps its size and
the replay without impact its speed. Per message that cancels, deletes or executes a known
order: the lots of the orders ahead of it at its level, and its own lots, before the message.
A day without level rows has no legacy volume, so the orders are all there is at a level.
numba is imported here and there only.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob._replay_levels import narrow
from sekai.finance.lob.events import ADD as SUBMIT
from sekai.finance.lob.events import EXECUTE


def queue_positions(days: Any) -> tuple[NDArray[Any], NDArray[Any]]:
    """Per message of the joined tape of ``days`` (``ReplayDays``): the lots ahead of the
    order it names in that order's queue, and that order's lots, before the message (0 and 0
    for a message that names none). Each day's queues start empty. A ValueError if a day's
    book needed legacy volume (a reconciliation, or a submission crossing the book), which
    names no order: those days cannot be replayed with impact."""
    for d in days.resident:
        if days[d].reconciliations or days[d].crossings:
            raise ValueError(
                f"day {d} crosses its own book or is reconciled with level rows: impact needs "
                "a day whose messages alone explain its book"
            )
    n = len(days.kinds)
    ahead, size = np.zeros(n, np.int64), np.zeros(n, np.int64)
    for d in days.resident:
        _positions(
            days.kinds,
            days.sides,
            days.ticks,
            days.lots,
            days.arrival,
            int(days.firsts[d]),
            int(days.ends[d]),
            days.n_ticks,
            ahead,
            size,
        )
    return narrow(ahead), narrow(size)


@numba.njit(cache=True)  # type: ignore[misc]
def _positions(kinds, sides, ticks, lots, arrival, first, end, n_ticks, ahead, size):  # type: ignore[no-untyped-def]
    """Rebuild messages ``first:end``'s FIFO queues (orders keyed by the index of their
    submission) and write each known order's lots ahead and own lots before a message that
    takes lots off it into ``ahead`` and ``size``."""
    n = end - first
    resting = np.zeros(n, np.int64)
    nxt = np.full(n, -1, np.int64)
    prv = np.full(n, -1, np.int64)
    head = np.full((2, n_ticks), -1, np.int64)
    tail = np.full((2, n_ticks), -1, np.int64)
    for k in range(first, end):
        kind, moved = kinds[k], lots[k]
        if moved == 0 or kind > EXECUTE:
            continue
        side, tick = sides[k], ticks[k]
        if kind == SUBMIT:
            o = k - first
            resting[o] = moved
            prv[o] = tail[side, tick]
            if tail[side, tick] >= 0:
                nxt[tail[side, tick]] = o
            else:
                head[side, tick] = o
            tail[side, tick] = o
            continue
        o = arrival[k] - first
        before = 0
        j = head[side, tick]
        while j != o and j >= 0:
            before += resting[j]
            j = nxt[j]
        ahead[k], size[k] = before, resting[o]
        resting[o] -= moved
        if resting[o] == 0:
            if prv[o] >= 0:
                nxt[prv[o]] = nxt[o]
            else:
                head[side, tick] = nxt[o]
            if nxt[o] >= 0:
                prv[nxt[o]] = prv[o]
            else:
                tail[side, tick] = prv[o]
