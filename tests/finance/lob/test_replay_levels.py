"""A replayed day keeps the best ticks and the per-level history instead of the top levels
(``_replay_levels``): the levels looked up there are the compiled replay's own, at every
depth and after every message, with reconciliations and with submissions that cross; and
the day holds a bounded number of bytes a message."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from lobster_days import generate_day, ship

from sekai.finance import BUY, SELL, ContStoikovTalreja, simulate_flow
from sekai.finance.lob._replay_day import ReplayDay
from sekai.finance.lob._replay_days import ReplayDays
from sekai.finance.lob._replay_kernel import replay_record
from sekai.finance.lob.events import ADD, CANCEL, EXECUTE, empty, is_event_array
from sekai.finance.lob.lobster import record_flow, to_events

DEPTH = 64  # levels compared: deeper than any generated book, so every lot is checked


def _crossing_day() -> np.ndarray:
    """Submissions that trade through several levels (legacy volume a file hides: asks at
    ticks 51 to 53), then cancels and an execution of what rests after them."""
    rows = [  # kind, order id, side, tick, size
        (ADD, 1, SELL, 51, 5),
        (ADD, 2, SELL, 52, 3),
        (ADD, 3, SELL, 53, 4),
        (ADD, 4, BUY, 49, 6),
        (ADD, 5, BUY, 52, 10),  # takes 5 at 51 and 3 at 52; 2 rest at 52
        (ADD, 6, SELL, 48, 9),  # takes the 2 at 52 and 6 at 49; 1 rests at 48
        (CANCEL, 3, SELL, 53, 1),
        (ADD, 7, BUY, 47, 2),
        (EXECUTE, 6, SELL, 48, 1),
        (ADD, 8, BUY, 53, 4),  # takes the 3 left at 53; 1 rests
    ]
    events = empty(len(rows))
    events["time"] = np.arange(1, len(rows) + 1)
    columns = np.array(rows).T
    for name, column in zip(("kind", "order_id", "side", "price", "size"), columns, strict=True):
        events[name] = column
    events["price"] *= 100
    return events


def _days() -> list[tuple[str, Any, Any]]:
    """(name, messages, orderbook rows or None)."""
    shipped = [ship(generate_day(seed), levels) for seed, levels in ((0, 5), (1, 10))]
    return [
        ("crossing", _crossing_day(), None),
        *((f"generated {s}", file.messages, None) for s, file in enumerate(shipped)),
        *((f"reconciled {s}", file.messages, file.orderbook) for s, file in enumerate(shipped)),
    ]


@pytest.mark.parametrize(
    ("messages", "orderbook"), [d[1:] for d in _days()], ids=[d[0] for d in _days()]
)
def test_the_levels_looked_up_are_the_replays_own_at_every_depth(
    messages: Any, orderbook: Any
) -> None:
    day = ReplayDay(messages, orderbook, levels=DEPTH)
    events = messages if is_event_array(messages) else to_events(messages)
    record = replay_record(
        events, day.opening, n_ticks=day.n_ticks, levels=DEPTH, orderbook=orderbook
    )
    assert day.top.shape == record.top.shape
    assert np.array_equal(day.top[:], record.top)
    # any selection of rows, then NumPy's indexing of the rest
    rows = np.random.default_rng(0).integers(0, len(day) + 1, 50)
    assert np.array_equal(day.top[rows, SELL, 0], record.top[rows, SELL, 0])
    assert np.array_equal(day.top[-1], record.top[-1])
    # the first levels only (read without the deeper ones), for a batch spread over the cores
    many = np.random.default_rng(1).integers(0, len(day) + 1, 300)
    for n in (0, 1, 3, DEPTH + 5):
        assert np.array_equal(day.top[many, :, :n], record.top[many, :, :n])
    assert np.array_equal(day.top[many, :, :2, 1], record.top[many, :, :2, 1])
    assert np.array_equal(day.best, record.top[:, :, 0, 0])
    # read out from hints: windows walking forward (each read's hints kept for the next),
    # then hints of any tick and place, which cost time but never change an answer
    rng = np.random.default_rng(2)
    for n in (1, 3, DEPTH):
        rows = np.sort(rng.integers(0, len(day) + 1, 80))
        hints = np.full((len(rows), 2, n, 2), -1)
        for _ in range(12):
            assert np.array_equal(day.top.near(rows, n, hints), record.top[rows, :, :n])
            rows = np.minimum(rows + rng.integers(0, 40, len(rows)), len(day))
        hints[..., 0] = rng.integers(-1, day.n_ticks, hints.shape[:-1])
        hints[..., 1] = rng.integers(-1, 2 * len(day), hints.shape[:-1])
        rows = rng.integers(0, len(day) + 1, len(rows))
        assert np.array_equal(day.top.near(rows, n, hints), record.top[rows, :, :n])
    if len(record.crossings):
        assert (record.crossings[:, 3] < 0).all()
    with pytest.raises(IndexError):
        day.top[len(day) + 1]


def test_the_crossing_day_crosses_and_its_books_are_known() -> None:
    day = ReplayDay(_crossing_day(), levels=3)
    # before the last submission: the ask left at 53 (the one at 48 executed), a bid at 47
    assert day.top[9, SELL].tolist() == [[53, 3], [-1, 0], [-1, 0]]
    assert day.top[9, BUY].tolist() == [[47, 2], [-1, 0], [-1, 0]]
    assert day.top[10, BUY].tolist() == [[53, 1], [47, 2], [-1, 0]]
    assert day.top[10, SELL].tolist() == [[-1, 0]] * 3


def _held(*holders: object) -> int:
    """Bytes of the arrays the ``holders`` keep as attributes, each buffer counted once."""
    seen: dict[int, int] = {}
    for holder in holders:
        for value in vars(holder).values():
            if isinstance(value, np.ndarray):
                while isinstance(value.base, np.ndarray):
                    value = value.base
                seen[id(value)] = value.nbytes
    return sum(seen.values())


BYTES_PER_MESSAGE = 40  # 36.6 on this flow
BYTES_PER_TICK = 32  # the opening book and the level history's starts, per (side, tick)


def test_a_replayed_day_holds_at_most_40_bytes_a_message() -> None:
    """A day of the flow the store benchmark replays (``benchmarks/replay_store.py``), and
    the tape of one such day: the arrays they hold, per message, less the per-tick ones."""
    flow = simulate_flow(ContStoikovTalreja(), 600.0, n_ticks=4000, seed=1)
    events = to_events(record_flow(flow, n_ticks=4000))
    days = ReplayDays(events)
    (day,) = days
    fixed = BYTES_PER_TICK * day.n_ticks + 1024
    assert len(day) > 10_000
    assert _held(day) <= BYTES_PER_MESSAGE * len(day) + fixed
    assert _held(day, days) <= BYTES_PER_MESSAGE * len(day) + fixed
