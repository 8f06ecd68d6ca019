"""The compiled replay over level arrays gives ``lobster.replay``'s book after every message of
the generated LOBSTER days (messages alone, from the opening book), the days read as order
events (``lobster.to_events``), as every reader yields them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from lobster_days import N_TICKS, generate_day, ship
from numpy.typing import NDArray

from sekai.finance import BUY, SELL, OrderBook
from sekai.finance.lob._replay_kernel import replay_levels, replay_record
from sekai.finance.lob.events import ADD, empty
from sekai.finance.lob.lobster import EXECUTE, SUBMIT, initial_book, replay, to_events


@pytest.mark.parametrize(("seed", "levels"), [(0, 5), (0, 10), (1, 5), (2, 10)])
def test_the_compiled_replay_is_the_order_book_replay_after_every_message(
    seed: int, levels: int
) -> None:
    file, book, opening = _opening(seed, levels)
    top, volume, unmatched = replay_levels(
        to_events(file.messages), opening, n_ticks=N_TICKS, levels=levels
    )
    assert top.shape == (len(file.messages), 2, levels, 2)
    result = None
    for k in range(len(file.messages)):
        step = replay(book, file.messages[k : k + 1])
        result = step if result is None else [a + b for a, b in zip(result, step, strict=True)]
        for side in (BUY, SELL):
            levels_k = [(int(t), int(v)) for t, v in top[k, side] if v]
            assert levels_k == book.depth(side, levels), (k, side)
    assert result is not None and unmatched == result[1] > 0
    for side in (BUY, SELL):
        assert [(int(t), int(volume[side, t])) for t in np.flatnonzero(volume[side])] == sorted(
            book.depth(side, N_TICKS)
        )


@pytest.mark.parametrize(("seed", "levels"), [(0, 5), (1, 10), (2, 5)])
def test_the_compiled_reconciliation_is_the_order_book_replays(seed: int, levels: int) -> None:
    """With the orderbook rows, the compiled replay reconciles as ``lobster.replay`` does:
    the same full book after every message (so the same legacy and orders cancelled), the
    file's top levels, and the same count of reconciliations."""
    file, book, opening = _opening(seed, levels)
    record = replay_record(
        to_events(file.messages), opening, n_ticks=N_TICKS, levels=levels, orderbook=file.orderbook
    )
    volume = opening.copy()
    reconciliations = 0
    for k in range(len(file.messages)):
        step = replay(book, file.messages[k : k + 1], orderbook=file.orderbook[k : k + 1])
        reconciliations += step.reconciliations
        for fix in record.fixes[record.fixes[:, 0] == k]:
            volume[fix[1], fix[2]] += fix[3]
        if record.kinds[k] <= EXECUTE:
            sign = 1 if record.kinds[k] == SUBMIT else -1
            volume[record.sides[k], record.ticks[k]] += sign * record.lots[k]
        for side, name in ((BUY, "bid"), (SELL, "ask")):
            shown = [
                (int(p) // 100, int(s))
                for p, s in zip(
                    file.orderbook[f"{name}_price"][k],
                    file.orderbook[f"{name}_size"][k],
                    strict=True,
                )
                if s
            ]
            top = [(int(t), int(v)) for t, v in record.top[k + 1, side] if v]
            assert top == book.depth(side, levels) == shown, (k, side)
        if k % 97 == 0 or k == len(file.messages) - 1:
            for side in (BUY, SELL):
                held = [(int(t), int(volume[side, t])) for t in np.flatnonzero(volume[side])]
                assert held == sorted(book.depth(side, N_TICKS)), (k, side)
    assert record.reconciliations == reconciliations > 0
    assert (record.fixes[:, 3] > 0).any() and (record.fixes[:, 3] < 0).any()


def _opening(seed: int, levels: int) -> tuple[Any, OrderBook, NDArray[np.int64]]:
    """A generated level-N file, its opening book, and that book as lots per (side, tick)."""
    file = ship(generate_day(seed), levels)
    book = initial_book(file.messages, file.orderbook, n_ticks=N_TICKS)
    opening = np.zeros((2, N_TICKS), np.int64)
    for side in (BUY, SELL):
        for tick, volume in book.depth(side, N_TICKS):
            opening[side, tick] = volume
    return file, book, opening


@pytest.mark.parametrize("lots", [1_000, 2**30])
def test_the_record_is_int32_only_where_every_level_fits(lots: int) -> None:
    """The record keeps the top levels as int32 (half the memory) only where no level can
    reach 2**31 lots: three bids of 2**30 lots at one tick (over int32's range) read right;
    ``replay_levels`` gives the same levels as int64 either way."""
    events = empty(4)
    events["time"] = np.arange(1, 5)
    events["kind"] = ADD
    events["order_id"] = np.arange(1, 5)
    events["side"] = [BUY, BUY, BUY, SELL]
    events["price"] = [5_000, 5_000, 5_000, 5_100]  # ticks 50 and 51 of 100 units
    events["size"] = [lots, lots, lots, 7]
    opening = np.zeros((2, 100), np.int64)
    record = replay_record(events, opening, n_ticks=100, levels=2)
    wide, _, _ = replay_levels(events, opening, n_ticks=100, levels=2)
    assert wide.dtype == np.int64
    assert record.top.dtype == (np.int32 if 3 * lots < 2**31 else np.int64)
    assert record.top[4, BUY, 0].tolist() == [50, 3 * lots]
    assert record.top[4, SELL, 0].tolist() == [51, 7]
    assert np.array_equal(record.top[1:], wide)
