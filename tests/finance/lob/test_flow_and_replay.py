"""The Cont-Stoikov-Talreja flow and LOBSTER replay: files the tests write themselves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sekai.finance import (
    BUY,
    CANCEL,
    LIMIT,
    MARKET,
    SELL,
    ContStoikovTalreja,
    FlowEvents,
    OrderBook,
    simulate_flow,
)
from sekai.finance.lob.flow import apply_event, sample_event, seed_book
from sekai.finance.lob.lobster import (
    MESSAGE_DTYPE,
    ReplayResult,
    read_messages,
    record_flow,
    replay,
    write_messages,
)


def sample_many(model: ContStoikovTalreja, m: int, queues: list[int], seed: int) -> np.ndarray:
    """(m, 5) events of a book with best bid 100, best ask 101 and ``queues`` public lots on
    each of the D levels of each side."""
    rng = np.random.default_rng(seed)
    return np.array([sample_event(model, rng, 100, 101, queues, queues) for _ in range(m)])


def test_sampled_event_frequencies_follow_the_rates() -> None:
    model = ContStoikovTalreja()
    events = sample_many(model, 40_000, [2] * model.levels, seed=0)
    wait, kind, side, price, rank = events.T
    limit_rate = model.limit_rates.sum()
    cancel_rate = 2 * np.sum(model.cancel_rates)
    total = 2 * limit_rate + 2 * model.market_rate + 2 * cancel_rate
    assert wait.mean() == pytest.approx(1 / total, rel=0.03)
    assert np.mean(kind == LIMIT) == pytest.approx(2 * limit_rate / total, abs=0.01)
    assert np.mean(kind == MARKET) == pytest.approx(2 * model.market_rate / total, abs=0.01)
    assert np.mean(side == BUY) == pytest.approx(0.5, abs=0.01)
    buy_limits = price[(kind == LIMIT) & (side == BUY)]
    assert buy_limits.max() == 100 and buy_limits.min() == 101 - model.levels  # ask - 1 .. ask - D
    assert set(rank[kind == CANCEL].tolist()) == {0, 1}


def test_no_cancels_where_no_public_orders_rest() -> None:
    model = ContStoikovTalreja()
    kind = sample_many(model, 5000, [0] * model.levels, seed=1)[:, 1]
    assert not (kind == CANCEL).any()


def test_bad_parameters_are_value_errors() -> None:
    with pytest.raises(ValueError, match="market_rate"):
        ContStoikovTalreja(market_rate=-1.0)
    with pytest.raises(ValueError, match="cancel_rates"):
        ContStoikovTalreja(cancel_rates=())
    with pytest.raises(ValueError, match="non-decreasing"):
        FlowEvents(*(np.array([1.0, 0.5]),) * 1, *(np.zeros(2, np.int64),) * 4)
    times, zeros = np.array([0.5, 1.0]), np.zeros(2, np.int64)
    with pytest.raises(ValueError, match=r"FlowEvents.kind values must be in \(0, 1, 2\), got 7"):
        FlowEvents(times, np.array([0, 7]), zeros, zeros, zeros)
    with pytest.raises(ValueError, match=r"FlowEvents\.side values"):
        FlowEvents(times, zeros, np.array([0, 2]), zeros, zeros)
    with pytest.raises(ValueError, match=r"FlowEvents\.rank must be >= 0, got -1"):
        FlowEvents(times, zeros, zeros, zeros, np.array([0, -1]))
    with pytest.raises(TypeError, match=r"FlowEvents\.price must hold integers, got float64"):
        FlowEvents(times, zeros, zeros, np.array([1.5, 2.0]), zeros)


def test_simulated_flow_is_deterministic_for_a_seed_and_keeps_the_book_uncrossed() -> None:
    first = simulate_flow(ContStoikovTalreja(), 30.0, n_ticks=200, seed=4)
    second = simulate_flow(ContStoikovTalreja(), 30.0, n_ticks=200, seed=4)
    other = simulate_flow(ContStoikovTalreja(), 30.0, n_ticks=200, seed=5)
    assert np.array_equal(first.kind, second.kind) and np.array_equal(first.time, second.time)
    assert not np.array_equal(first.time[:20], other.time[:20])
    book = OrderBook(200)
    seed_book(book, first.initial_depth, 100)
    for event in zip(first.kind, first.side, first.price, first.rank, strict=True):
        apply_event(book, *(int(x) for x in event))
        assert not book.is_crossed()


def write_file(path: Path, rows: list[tuple[float, int, int, int, int, int]]) -> Path:
    path.write_text("".join(",".join(str(x) for x in row) + "\n" for row in rows))
    return path


def test_replay_of_a_small_message_file(tmp_path: Path) -> None:
    path = write_file(
        tmp_path / "msgs.csv",
        [
            (34200.0, 1, 11, 100, 1000000, 1),  # buy 100 @ 100.00
            (34200.1, 1, 12, 50, 1000100, -1),  # sell 50 @ 100.01
            (34200.2, 1, 13, 30, 1000000, 1),  # buy 30 @ 100.00, behind 11
            (34200.3, 2, 11, 40, 1000000, 1),  # partial cancel of 11
            (34200.4, 4, 11, 60, 1000000, 1),  # execution of 11 (not of 13, behind it)
            (34200.5, 5, 0, 10, 1000050, 1),  # hidden execution: on the tape only
            (34200.6, 3, 12, 50, 1000100, -1),  # delete 12
            (34200.7, 3, 99, 5, 1000100, -1),  # an order the book never held: unmatched
        ],
    )
    messages = read_messages(path)
    assert messages["order_id"].tolist() == [11, 12, 13, 11, 11, 0, 12, 99]
    book = OrderBook(20_000)
    result = replay(book, messages, tick=100)
    assert result == ReplayResult(
        applied=6, unmatched=1, hidden_trades=1, cross_trades=0, halts=0, reconciliations=0
    )
    # the hidden execution at 100.005 goes on the tape at the tick below
    assert [(t.maker_id, t.price, t.size, t.taker_side) for t in book.trades] == [
        (11, 10_000, 60, SELL),
        (0, 10_000, 10, SELL),
    ]
    assert book.best_ask is None and book.best_bid == 10_000
    assert book.order(13).size == 30 and 11 not in book


def test_replay_refuses_unknown_types_and_off_grid_prices(tmp_path: Path) -> None:
    bad_type = np.array([(1.0, 9, 1, 1, 100, 1)], MESSAGE_DTYPE)
    with pytest.raises(ValueError, match="message 1: type is not one of 1 to 7"):
        replay(OrderBook(10), bad_type)
    off_grid = read_messages(write_file(tmp_path / "b.csv", [(1.0, 1, 1, 1, 150, 1)]))
    with pytest.raises(ValueError, match="message 1: price 150 is not on the 100-unit grid"):
        replay(OrderBook(10), off_grid)


def test_a_bad_message_late_in_a_file_is_refused_before_any_is_applied(tmp_path: Path) -> None:
    rows = [(1.0, 1, 1, 5, 300, 1), (2.0, 1, 2, 5, 900, -1), (3.0, 1, 3, 1, 450, 1)]
    messages = read_messages(write_file(tmp_path / "late.csv", rows))
    book = OrderBook(10)
    with pytest.raises(ValueError, match="message 3: price 450 is not on the 100-unit grid"):
        replay(book, messages)
    assert len(book) == 0 and book.best_bid is None and book.best_ask is None
    with pytest.raises(ValueError, match="tick must be a positive int, got 0"):
        replay(book, messages, tick=0)
    with pytest.raises(ValueError, match=r"message 2: price 900 is tick 12, outside the book's"):
        replay(book, messages, tick=75)
    assert len(book) == 0


def test_recorded_flow_replays_to_the_same_book(tmp_path: Path) -> None:
    flow = simulate_flow(ContStoikovTalreja(), 60.0, n_ticks=300, seed=2)
    direct = OrderBook(300)
    seed_book(direct, flow.initial_depth, 150)
    for event in zip(flow.kind, flow.side, flow.price, flow.rank, strict=True):
        apply_event(direct, *(int(x) for x in event))
    path = tmp_path / "flow.csv"
    write_messages(path, record_flow(flow, n_ticks=300))
    replayed = OrderBook(300)
    replay(replayed, read_messages(path))
    for side in (BUY, SELL):
        assert replayed.depth(side, 300) == direct.depth(side, 300)
    assert [(t.price, t.size, t.taker_side) for t in replayed.trades] == [
        (t.price, t.size, t.taker_side) for t in direct.trades
    ]
