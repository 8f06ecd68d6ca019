"""Faithful replay of generated LOBSTER days (see lobster_days.py): with reconciliation the top
N levels equal the orderbook file after every message; from messages alone level 1 is right
most of the time, and every miss is an old deep level coming into view."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from lobster_days import N_TICKS, TICK, Day, Shipped, generate_day, ship, write_day

from sekai.finance import BUY, SELL, OrderBook, TradingHalted
from sekai.finance.lob.lobster import (
    CROSS,
    EXECUTE_HIDDEN,
    HALT,
    initial_book,
    read_messages,
    read_orderbook,
    replay,
)


@cache
def day() -> Day:
    return generate_day(seed=0)


@cache
def shipped(levels: int) -> Shipped:
    return ship(day(), levels)


def row_levels(row: np.void, side: int) -> list[tuple[int, int]]:
    name = "bid" if side == BUY else "ask"
    return [
        (int(p) // TICK, int(s))
        for p, s in zip(row[f"{name}_price"], row[f"{name}_size"], strict=True)
        if s
    ]


@pytest.mark.parametrize(
    ("levels", "header", "decimals", "suffix"),
    [(5, False, 9, ""), (10, True, 5, ".gz")],
)
def test_with_reconciliation_the_top_levels_equal_the_file_after_every_message(
    tmp_path: Path, levels: int, header: bool, decimals: int, suffix: str
) -> None:
    files = write_day(tmp_path, shipped(levels), header=header, decimals=decimals, suffix=suffix)
    messages, orderbook = read_messages(files[0]), read_orderbook(files[1])
    assert len(messages) == len(orderbook) == len(shipped(levels).messages)
    book = initial_book(messages, orderbook, n_ticks=N_TICKS)
    reconciliations = 0
    for k in range(len(messages)):
        result = replay(book, messages[k : k + 1], orderbook=orderbook[k : k + 1])
        reconciliations += result.reconciliations
        for side in (BUY, SELL):
            assert book.depth(side, levels) == row_levels(orderbook[k], side), k
    assert reconciliations > 0  # levels came into view that the file never announced
    # the same in one call, which also counts the hidden executions, the cross and the halts
    whole = replay(
        initial_book(messages, orderbook, n_ticks=N_TICKS), messages, orderbook=orderbook
    )
    kinds = messages["type"].tolist()
    assert whole.reconciliations == reconciliations
    assert (whole.hidden_trades, whole.cross_trades, whole.halts) == (
        kinds.count(EXECUTE_HIDDEN),
        kinds.count(CROSS),
        3,
    )
    assert whole.hidden_trades > 10 and whole.cross_trades == 1


@pytest.mark.parametrize(("levels", "share"), [(5, 0.65), (10, 0.89)])
def test_from_messages_alone_every_level_one_miss_is_an_old_deep_level(
    levels: int, share: float
) -> None:
    """Level 1 can only be wrong where the book reaches a price at which something happened
    while it lay deeper than the file's N levels (or an opening order deeper than row 1
    shows), or where a submission traded with such stale volume in the replayed book (a
    real submission never crosses)."""
    file = shipped(levels)
    book = initial_book(file.messages, file.orderbook, n_ticks=N_TICKS)
    stale_trades: dict[int, int] = {}  # tick -> first message at which a submission crossed
    right = 0
    for k, full_index in enumerate(file.index.tolist()):
        tape = len(book.trades)
        replay(book, file.messages[k : k + 1])
        for trade in book.trades[tape:]:
            if trade.taker_id:  # a replayed submission traded
                stale_trades.setdefault(trade.price, k)
        misses = [
            (want, got)
            for side in (BUY, SELL)
            if (want := row_levels(file.orderbook[k], side)[:1]) != (got := book.depth(side, 1))
        ]
        right += not misses
        for want, got in misses:
            prices = [price for price, _ in want + got]
            assert any(file.unseen_since.get(p, full_index) < full_index for p in prices) or any(
                stale_trades.get(p, k + 1) <= k for p in prices
            ), (k, want, got)
    assert right / len(file.messages) >= share
    assert right < len(file.messages)  # the file does hide things


def test_with_nothing_hidden_the_replay_follows_the_full_book() -> None:
    """The control: the whole day, on the whole opening book as legacy volume, replayed by
    order id from messages alone, is the truth after every message."""
    full = day()
    book = OrderBook(N_TICKS)
    for side in (BUY, SELL):
        for tick, volume in full.depth_before[side]:
            book.add_legacy(side, tick, volume)
    deeper = {(s, t) for _, s, t, _ in full.opening} - {
        (s, t) for s in (BUY, SELL) for t, _ in full.depth_before[s]
    }
    for side, tick in deeper:
        book.add_legacy(side, tick, sum(z for _, s, t, z in full.opening if (s, t) == (side, tick)))
    for k in range(len(full.messages)):
        result = replay(book, full.messages[k : k + 1])
        assert result.unmatched == 0
        depth = (tuple(book.depth(BUY, full.max_levels)), tuple(book.depth(SELL, full.max_levels)))
        assert depth == full.depths[k], k


def test_traders_cannot_trade_while_the_replayed_day_is_halted() -> None:
    file = shipped(10)
    kinds, prices = file.messages["type"], file.messages["price"]
    halt, resume = (int(np.flatnonzero((kinds == HALT) & (prices == p))[0]) for p in (-1, 1))
    book = initial_book(file.messages, file.orderbook, n_ticks=N_TICKS)
    replay(book, file.messages[: halt + 1])
    assert book.halted
    before = copy.deepcopy(vars(book))
    with pytest.raises(TradingHalted):
        book.market(BUY, 1, owner=1)
    assert vars(book) == before
    replay(book, file.messages[halt + 1 : resume + 1])
    assert not book.halted and book.market(BUY, 1, owner=1) == 1


def test_the_header_and_five_decimal_variants_read_back_the_same_day(tmp_path: Path) -> None:
    file = shipped(5)
    plain = read_messages(write_day(tmp_path, file)[0])
    folder = tmp_path / "variant"
    folder.mkdir()
    messages, orderbook = write_day(folder, file, header=True, decimals=5)
    variant = read_messages(messages)
    assert np.array_equal(plain, file.messages)
    for name in ("type", "order_id", "size", "price", "direction"):
        assert np.array_equal(variant[name], plain[name])
    assert np.allclose(variant["time"], plain["time"], atol=5e-6)
    rows = read_orderbook(orderbook)
    empty = file.orderbook["ask_size"] == 0
    assert empty.any()  # empty levels were written as 9999999999 with size 0 ...
    assert (rows["ask_price"][empty] == 0).all()  # ... and read as empty
    assert np.array_equal(rows["bid_size"], file.orderbook["bid_size"])
