"""Order events of any reader go into the compiled replay: modifies and clears become the
messages the kernels know, with the priority rule every reader documents, and the book after
every event is the one ``OrderBook`` builds from the same events."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.lob import events as ev
from sekai.finance.lob._replay_kernel import replay_levels, replay_record
from sekai.finance.lob._replay_stream import replay_stream
from sekai.finance.lob.book import BUY, SELL, OrderBook

N_TICKS = 100
TICK = 100


def _events(rows: list[tuple[int, int, int, int, int, int]]) -> np.ndarray:
    """Events from (time ns, kind, order id, side, tick, size) rows."""
    out = ev.empty(len(rows))
    for k, (time, kind, order_id, side, tick, size) in enumerate(rows):
        out[k] = (time, kind, order_id, side, tick * TICK, size, 0)
    return out


def _random_day(seed: int, n: int = 3000) -> np.ndarray:
    """A random stream of every kind of event that moves a book, never crossing (bids below
    tick 50, asks from 50), with modifies of every sort and a few clears."""
    rng = np.random.default_rng(seed)
    resting: dict[int, tuple[int, int, int]] = {}  # id -> side, tick, size
    rows, next_id, time = [], 1, 0
    for _ in range(n):
        time += int(rng.integers(1, 1_000_000))
        roll = rng.random()
        if roll < 0.35 or not resting:
            side = int(rng.integers(2))
            tick = int(rng.integers(40, 50)) if side == BUY else int(rng.integers(50, 60))
            size = int(rng.integers(1, 20))
            rows.append((time, ev.ADD, next_id, side, tick, size))
            resting[next_id] = (side, tick, size)
            next_id += 1
            continue
        if roll > 0.995:
            rows.append((time, ev.CLEAR, 0, ev.NO_SIDE, 0, 0))
            resting.clear()
            continue
        order_id = int(rng.choice(list(resting)))
        side, tick, size = resting[order_id]
        kind = int(rng.choice([ev.CANCEL, ev.DELETE, ev.EXECUTE, ev.MODIFY]))
        if kind == ev.MODIFY:
            choice = rng.integers(5)
            new_tick = tick if choice < 3 else (tick - 1 if side == BUY else tick + 1)
            new_size = [max(size - 1, 1), size + 3, 0, size, size][choice]
            rows.append((time, ev.MODIFY, order_id, side, new_tick, new_size))
            if new_size:
                resting[order_id] = (side, new_tick, new_size)
            else:
                del resting[order_id]
            continue
        lots = size if kind == ev.DELETE else int(rng.integers(1, size + 1))
        rows.append((time, kind, order_id, side, tick, lots))
        if lots == size:
            del resting[order_id]
        else:
            resting[order_id] = (side, tick, size - lots)
    return _events(rows)


def _apply(book: OrderBook, event: np.void) -> None:
    """One event on ``OrderBook``, by its documented meaning."""
    kind, order_id = int(event["kind"]), int(event["order_id"])
    tick, size, side = int(event["price"]) // TICK, int(event["size"]), int(event["side"])
    if kind == ev.ADD:
        book.add(side, tick, size, order_id=order_id)
    elif kind == ev.CANCEL:
        book.cancel(order_id, size)
    elif kind == ev.DELETE:
        book.cancel(order_id)
    elif kind == ev.EXECUTE:
        book.execute(order_id, size)
    elif kind == ev.MODIFY:
        if size == 0:
            book.cancel(order_id)
        else:
            book.modify(order_id, price=tick, size=size)
    elif kind == ev.CLEAR:
        for side_ in (BUY, SELL):
            for price, _ in book.depth(side_, N_TICKS):
                for order in book.queue(side_, price):
                    book.cancel(order.order_id)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_compiled_replay_of_events_is_the_order_books_after_every_event(seed: int) -> None:
    events = _random_day(seed)
    kinds = set(events["kind"].tolist())
    assert {ev.ADD, ev.CANCEL, ev.DELETE, ev.EXECUTE, ev.MODIFY, ev.CLEAR} <= kinds
    stream = replay_stream(events)
    assert len(stream) > len(events) - np.count_nonzero(events["kind"] == ev.MODIFY)
    top, _, unmatched = replay_levels(
        stream, np.zeros((2, N_TICKS), np.int64), n_ticks=N_TICKS, levels=N_TICKS
    )
    assert unmatched == 0
    after_event = np.full(len(events), -1)
    after_event[stream.source[stream.closes]] = np.flatnonzero(stream.closes)
    book = OrderBook(N_TICKS)
    last = -1
    for e, event in enumerate(events):
        _apply(book, event)
        last = after_event[e] if after_event[e] >= 0 else last  # no message: unchanged
        for side in (BUY, SELL):
            shown = [(int(t), int(v)) for t, v in top[last, side] if v] if last >= 0 else []
            assert shown == book.depth(side, N_TICKS), (e, side)


def test_a_lower_size_keeps_the_queue_place_and_anything_else_loses_it() -> None:
    events = _events(
        [
            (1, ev.ADD, 7, BUY, 40, 10),
            (2, ev.ADD, 8, BUY, 40, 10),
            (3, ev.MODIFY, 7, BUY, 40, 6),  # lower size: keeps its place
            (4, ev.MODIFY, 8, BUY, 40, 12),  # larger size: to the back, a new arrival
            (5, ev.MODIFY, 7, BUY, 41, 6),  # new price: to the back of tick 41
            (6, ev.EXECUTE, 8, BUY, 40, 2),
            (7, ev.EXECUTE, 7, BUY, 41, 1),
            (8, ev.MODIFY, 9, SELL, 60, 5),  # not resting: an add
            (9, ev.MODIFY, 9, SELL, 60, 5),  # changes nothing: no message
        ]
    )
    stream = replay_stream(events)
    record = replay_record(stream, np.zeros((2, N_TICKS), np.int64), n_ticks=N_TICKS)
    kinds = stream.kinds.tolist()
    assert kinds == [
        ev.ADD, ev.ADD, ev.CANCEL, ev.DELETE, ev.ADD, ev.DELETE, ev.ADD, ev.EXECUTE,
        ev.EXECUTE, ev.ADD,
    ]  # fmt: skip
    assert stream.source.tolist() == [0, 1, 2, 3, 3, 4, 4, 5, 6, 7]
    assert stream.closes.tolist() == [1, 1, 1, 0, 1, 0, 1, 1, 1, 1]
    assert record.lots[2] == 4 and record.arrival[2] == 0  # the cancel names the first add
    assert record.arrival[7] == 4 and record.arrival[8] == 6  # executions: the re-adds
    assert stream.time.tolist() == [t / 1e9 for t in [1, 2, 3, 4, 4, 5, 5, 6, 7, 8]]


def test_a_clear_deletes_every_resting_order_and_lets_ids_come_back() -> None:
    events = _events(
        [
            (1, ev.ADD, 1, BUY, 40, 3),
            (2, ev.ADD, 2, SELL, 60, 4),
            (3, ev.CLEAR, 0, ev.NO_SIDE, 0, 0),
            (4, ev.ADD, 1, SELL, 61, 5),
        ]
    )
    stream = replay_stream(events)
    assert stream.kinds.tolist() == [ev.ADD, ev.ADD, ev.DELETE, ev.DELETE, ev.ADD]
    assert stream.sizes.tolist() == [3, 4, 3, 4, 5]
    top, volume, _ = replay_levels(stream, np.zeros((2, N_TICKS), np.int64), n_ticks=N_TICKS)
    assert volume.sum() == 5 and volume[SELL, 61] == 5
    assert top[3].tolist() == [[[-1, 0]], [[-1, 0]]]  # empty after the clear


def test_an_add_of_an_id_that_rests_is_refused_by_event() -> None:
    events = _events([(1, ev.ADD, 5, BUY, 40, 1), (2, ev.ADD, 5, BUY, 41, 1)])
    with pytest.raises(ValueError, match=r"day\.dbn: event 1: order id 5 is added while it rests"):
        replay_stream(events, "day.dbn")


def test_times_count_from_the_first_events_midnight() -> None:
    midnight = ev.midnight("2024-03-01")
    at = midnight + 34_200 * ev.NANOSECONDS + np.array([1, 500_000_001])
    events = _events([(int(at[0]), ev.ADD, 1, BUY, 40, 1), (int(at[1]), ev.ADD, 2, BUY, 40, 1)])
    assert replay_stream(events).time.tolist() == [34_200.000000001, 34_200.500000001]
