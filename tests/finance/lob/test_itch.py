"""ITCH 5.0 reader: one stock's messages as order events, known answers from messages built by
hand, the book they replay to, and every bad input named by file, message and problem."""

from __future__ import annotations

import datetime
import gzip
from pathlib import Path

import numpy as np
import pytest
from itch_messages import (
    SKIPPED,
    add,
    cancel,
    cross,
    delete,
    directory,
    executed,
    executed_with_price,
    frame,
    other,
    replace,
    system_event,
    trade,
    trading_action,
)

from sekai.finance import BUY, SELL, OrderBook
from sekai.finance.lob.events import (
    ADD,
    CANCEL,
    CROSS,
    DAY,
    DELETE,
    EVENT_DTYPE,
    EXECUTE,
    HALT,
    HALTED,
    NO_SIDE,
    QUOTING,
    RESUMED,
    TRADE,
)
from sekai.finance.lob.itch import MESSAGE_LENGTHS, read_itch
from sekai.finance.lobster import MESSAGE_DTYPE, replay

T = 34_200_000_000_000  # 9:30 in ns since midnight
US, THEM = 7, 3  # stock locates: SEKA, the stock read, and OTHR, the one to ignore


def day() -> list[bytes]:
    """A day of SEKA with OTHR's messages between its own, and every skipped type."""
    return [
        system_event(1),
        directory(THEM, "OTHR", 2),
        directory(US, "SEKA", 3),
        *(other(kind, US, 4) for kind in SKIPPED),
        add(US, T + 1, 1, "B", 100, "SEKA", 1_000_000),
        add(THEM, T + 2, 2, "S", 50, "OTHR", 500_000),
        add(US, T + 3, 3, "S", 200, "SEKA", 1_001_000, mpid="ABCD"),
        add(US, T + 4, 4, "B", 300, "SEKA", 999_000),
        executed(US, T + 5, 3, 40, 1),
        executed(THEM, T + 6, 2, 10, 2),
        cancel(US, T + 7, 4, 100),
        replace(US, T + 8, 1, 5, 150, 1_000_500),
        executed_with_price(US, T + 9, 5, 50, 3, 1_000_600),
        replace(US, T + 10, 5, 6, 100, 1_000_400),
        delete(THEM, T + 10, 2),
        delete(US, T + 11, 4),
        trade(US, T + 12, "S", 25, "SEKA", 1_000_700, 4),
        trading_action(US, "SEKA", "H", T + 13),
        trading_action(US, "SEKA", "P", T + 13),  # paused: halted too
        trading_action(THEM, "OTHR", "H", T + 13),
        trading_action(US, "SEKA", "Q", T + 14),
        cross(US, T + 15, 500, "SEKA", 1_000_600, 5),
        trading_action(US, "SEKA", "T", T + 16),
        cross(US, T + 16, 0, "SEKA", 0, 6),
        add(US, T + 17, 7, "S", 10, "SEKA", 1_000_900),
        cross(THEM, T + 18, 70, "OTHR", 500_000, 7),
    ]


# time after 9:30, kind, order id, side, price, size
EXPECTED = [
    (1, ADD, 1, BUY, 1_000_000, 100),
    (3, ADD, 3, SELL, 1_001_000, 200),
    (4, ADD, 4, BUY, 999_000, 300),
    (5, EXECUTE, 3, SELL, 1_001_000, 40),  # at the resting order's side and price
    (7, CANCEL, 4, BUY, 999_000, 100),
    (8, DELETE, 1, BUY, 1_000_000, 100),  # a replace: the old order goes...
    (8, ADD, 5, BUY, 1_000_500, 150),  # ...and the new one comes, on its side
    (9, EXECUTE, 5, BUY, 1_000_500, 50),  # the order's price, not the execution's 1_000_600
    (10, DELETE, 5, BUY, 1_000_500, 100),  # what is left of it
    (10, ADD, 6, BUY, 1_000_400, 100),  # the side of a replace of a replace
    (11, DELETE, 4, BUY, 999_000, 200),
    (12, TRADE, 0, SELL, 1_000_700, 25),
    (13, HALT, 0, NO_SIDE, HALTED, 0),
    (13, HALT, 0, NO_SIDE, HALTED, 0),
    (14, HALT, 0, NO_SIDE, QUOTING, 0),
    (15, CROSS, 0, BUY, 1_000_600, 500),
    (16, HALT, 0, NO_SIDE, RESUMED, 0),
    (17, ADD, 7, SELL, 1_000_900, 10),
]


def write(path: Path, messages: list[bytes]) -> Path:
    path.write_bytes(frame(messages))
    return path


def expected(midnight: int = 0) -> np.ndarray:
    events = np.zeros(len(EXPECTED), EVENT_DTYPE)
    names = ("time", "kind", "order_id", "side", "price", "size")
    for name, column in zip(names, zip(*EXPECTED, strict=True), strict=True):
        events[name] = column
    events["time"] += T + midnight
    return events


def test_one_stock_of_a_day_reads_as_its_events(tmp_path: Path) -> None:
    events = read_itch(write(tmp_path / "day.itch", day()), "SEKA")
    assert events.dtype == EVENT_DTYPE
    assert events.tolist() == expected().tolist()


def test_the_other_stock_reads_alone(tmp_path: Path) -> None:
    events = read_itch(write(tmp_path / "day.itch", day()), "OTHR")
    assert events[["kind", "order_id", "side", "price", "size"]].tolist() == [
        (ADD, 2, SELL, 500_000, 50),
        (EXECUTE, 2, SELL, 500_000, 10),
        (DELETE, 2, SELL, 500_000, 40),
        (HALT, 0, NO_SIDE, HALTED, 0),
        (CROSS, 0, BUY, 500_000, 70),
    ]


def test_the_events_replay_to_the_book_of_the_day(tmp_path: Path) -> None:
    events = read_itch(write(tmp_path / "day.itch", day()), "SEKA")
    messages = np.zeros(len(events), MESSAGE_DTYPE)  # as LOBSTER messages: kinds 1 to 7 agree
    messages["time"] = events["time"] / 1e9
    messages["type"] = events["kind"]
    messages["order_id"] = events["order_id"]
    messages["size"] = events["size"]
    messages["price"] = events["price"]
    messages["direction"] = np.where(events["side"] == BUY, 1, -1)
    book = OrderBook(20_000)
    result = replay(book, messages, tick=100)
    assert result.unmatched == 0 and result.halts == 4
    assert book.depth(BUY, 5) == [(10_004, 100)]
    assert book.depth(SELL, 5) == [(10_009, 10), (10_010, 160)]
    assert sorted(order.order_id for side in (BUY, SELL) for order in _orders(book, side)) == [
        3,
        6,
        7,
    ]
    assert not book.halted
    assert [t.size for t in book.trades] == [40, 50, 25, 500]  # executions, hidden, cross


def _orders(book: OrderBook, side: int) -> list:
    return [o for price, _ in book.depth(side, 100) for o in book.queue(side, price)]


def test_a_gzipped_file_reads_the_same(tmp_path: Path) -> None:
    path = tmp_path / "day.itch.gz"
    path.write_bytes(gzip.compress(frame(day())))
    assert read_itch(path, "SEKA").tolist() == expected().tolist()


def test_time_counts_from_the_date_given_or_named(tmp_path: Path) -> None:
    midnight = (datetime.date(2019, 12, 30) - datetime.date(1970, 1, 1)).days * DAY
    named = write(tmp_path / "12302019.NASDAQ_ITCH50", day())
    assert read_itch(named, "SEKA").tolist() == expected(midnight).tolist()
    zipped = tmp_path / "12302019.NASDAQ_ITCH50.gz"
    zipped.write_bytes(gzip.compress(frame(day())))
    assert read_itch(zipped, "SEKA")["time"][0] == midnight + T + 1
    plain = write(tmp_path / "day.itch", day())
    for date in ("2019-12-30", datetime.date(2019, 12, 30)):
        assert read_itch(plain, "SEKA", date=date).tolist() == expected(midnight).tolist()
    later = midnight + DAY  # a date given wins over the name's
    assert read_itch(named, "SEKA", date="2019-12-31")["time"][0] == later + T + 1
    not_a_date = write(tmp_path / "13302019.NASDAQ_ITCH50", day())
    assert read_itch(not_a_date, "SEKA")["time"][0] == T + 1


def test_a_bad_date_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "day.itch", day())
    with pytest.raises(ValueError, match=r"date must be 'YYYY-MM-DD', got '30\.12\.2019'"):
        read_itch(path, "SEKA", date="30.12.2019")
    with pytest.raises(TypeError, match=r"date must be a datetime\.date"):
        read_itch(path, "SEKA", date=20191230)  # type: ignore[arg-type]


def test_without_a_stock_directory_the_stock_fields_name_the_stock(tmp_path: Path) -> None:
    messages = [m for m in day() if m[:1] != b"R"]
    assert read_itch(write(tmp_path / "day.itch", messages), "SEKA").tolist() == (
        expected().tolist()
    )


def test_a_stock_not_in_the_file_is_refused_with_those_that_are(tmp_path: Path) -> None:
    path = write(tmp_path / "day.itch", day())
    with pytest.raises(ValueError, match=r"day.itch: no stock 'AAPL' .* lists 2: OTHR, SEKA\)"):
        read_itch(path, "AAPL")
    many = [directory(k, f"S{k:03d}") for k in range(1, 21)]
    with pytest.raises(ValueError, match=r"lists 20: S001, S002, .*, S008 and 12 more\)"):
        read_itch(write(tmp_path / "many.itch", many), "SEKA")


def test_the_published_lengths(tmp_path: Path) -> None:
    """The reader's table of lengths agrees with the messages built from the layouts."""
    built = {m[:1].decode(): len(m) for m in day()}
    assert built == {kind: MESSAGE_LENGTHS[kind] for kind in built}
    assert set(MESSAGE_LENGTHS) == set(built)  # and the day has every type


def test_a_url_is_refused() -> None:
    with pytest.raises(
        ValueError, match=r"https://example\.com/12302019\.NASDAQ_ITCH50: not a local"
    ):
        read_itch("https://example.com/12302019.NASDAQ_ITCH50", "SEKA")


GOOD = [directory(US, "SEKA"), add(US, T, 1, "B", 100, "SEKA", 1_000_000)]  # bytes 0 to 78


@pytest.mark.parametrize(
    ("bad", "what"),
    [
        (
            add(US, T + 1, 2, "S", 5, "SEKA", 1_000_100)[:-1],
            "'A' messages are 36 bytes long, this one is 35",
        ),
        (b"Z" + bytes(20), "unknown message type 'Z'"),
        (b"", "an empty message"),
        (add(US, T + 1, 2, "S", 5, "SEKA", 0), "an order at price 0"),
        (add(US, T + 1, 2, "S", 0, "SEKA", 1_000_100), "'A' message of 0 shares"),
        (add(US, T + 1, 2, "b", 5, "SEKA", 1_000_100), "buy/sell indicator 'b' is not 'B' or 'S'"),
        (add(US, T - 1, 2, "S", 5, "SEKA", 1_000_100), f"time goes backwards \\({T - 1} ns"),
        (add(US, DAY, 2, "S", 5, "SEKA", 1_000_100), f"timestamp {DAY} ns is past midnight"),
        (add(US, T + 1, 1, "S", 5, "SEKA", 1_000_100), "order reference 1 is added twice"),
        (executed(US, T + 1, 9, 5, 1), "order reference 9 is unknown"),
        (cancel(US, T + 1, 9, 5), "order reference 9 is unknown"),
        (delete(US, T + 1, 9), "order reference 9 is unknown"),
        (replace(US, T + 1, 9, 10, 5, 1_000_000), "order reference 9 is unknown"),
        (executed(US, T + 1, 1, 101, 1), "101 shares off order reference 1, which has 100 left"),
        (replace(US, T + 1, 1, 2, 5, 0), "an order at price 0"),
        (trading_action(US, "SEKA", "X", T + 1), "trading state 'X' is not 'H', 'P', 'Q' or 'T'"),
    ],
)
def test_a_bad_message_is_named(tmp_path: Path, bad: bytes, what: str) -> None:
    path = write(tmp_path / "bad.itch", [*GOOD, bad, delete(US, T + 2, 1)])
    with pytest.raises(ValueError, match=f"bad.itch: message 3 \\(byte 79\\): {what}"):
        read_itch(path, "SEKA")


def test_an_order_used_after_its_end_is_named(tmp_path: Path) -> None:
    after_delete = [*GOOD, delete(US, T + 1, 1), executed(US, T + 2, 1, 5, 1)]
    with pytest.raises(ValueError, match=r"message 4 \(byte 100\): order reference 1 was deleted"):
        read_itch(write(tmp_path / "a.itch", after_delete), "SEKA")
    after_replace = [*GOOD, replace(US, T + 1, 1, 2, 5, 1_000_000), cancel(US, T + 2, 1, 5)]
    with pytest.raises(ValueError, match=r"message 4 \(byte 116\): order reference 1 was deleted"):
        read_itch(write(tmp_path / "b.itch", after_replace), "SEKA")
    used_up = [*GOOD, executed(US, T + 1, 1, 100, 1), delete(US, T + 2, 1)]
    with pytest.raises(
        ValueError, match=r"message 4 \(byte 112\): order reference 1 has no shares"
    ):
        read_itch(write(tmp_path / "c.itch", used_up), "SEKA")
    executed_before_add = [GOOD[0], executed(US, T, 1, 5, 1), add(US, T + 1, 1, "B", 9, "SEKA", 9)]
    with pytest.raises(ValueError, match=r"message 2 \(byte 41\): order reference 1 is unknown"):
        read_itch(write(tmp_path / "d.itch", executed_before_add), "SEKA")


def test_a_truncated_file_is_named(tmp_path: Path) -> None:
    whole = frame([*GOOD, delete(US, T + 1, 1)])
    path = tmp_path / "cut.itch"
    path.write_bytes(whole[:-5])
    with pytest.raises(
        ValueError,
        match=r"cut.itch: message 3 \(byte 79\): truncated: .* says 19 bytes, .* 14 left",
    ):
        read_itch(path, "SEKA")
    path.write_bytes(whole + b"\x00")  # half a length prefix
    with pytest.raises(ValueError, match=r"message 4 \(byte 100\): truncated"):
        read_itch(path, "SEKA")


def test_another_stocks_messages_are_not_checked_for_orders(tmp_path: Path) -> None:
    """Only the stock read has its orders followed: a stranger's unknown reference is not ours."""
    messages = [*GOOD, directory(THEM, "OTHR"), executed(THEM, T + 1, 99, 5, 1)]
    assert len(read_itch(write(tmp_path / "day.itch", messages), "SEKA")) == 1
    with pytest.raises(ValueError, match=r"message 4 .* order reference 99 is unknown"):
        read_itch(tmp_path / "day.itch", "OTHR")


def test_many_orders_are_followed_by_their_reference(tmp_path: Path) -> None:
    """Hundreds of orders alive at once, their references sharing their low bits or their
    high bits (multiples of 2**32, of 1024, 2**63 and above, random), each taken from, deleted
    or replaced in turn: every event has the shares, side and price of its own order."""
    rng = np.random.default_rng(5)
    pool = [k << 32 for k in range(1, 200)] + [k * 1024 for k in range(1, 200)]
    pool += [(1 << 63) + k for k in range(200)] + rng.integers(1, 1 << 62, 200).tolist()
    fresh = iter(rng.permutation(np.array(pool, np.uint64)).tolist())
    live: dict[int, tuple[int, int, int]] = {}  # reference: side, price, shares left
    messages, wanted = [directory(US, "SEKA")], []
    for step in range(1, 1200):
        clock, choice = T + step, rng.random()
        if not live or (choice < 0.45 and len(live) < 300):
            ref, side, price = next(fresh), int(rng.integers(2)), int(rng.integers(1, 9)) * 100
            shares = int(rng.integers(1, 50))
            messages.append(add(US, clock, ref, "BS"[side], shares, "SEKA", price))
            wanted.append((clock, ADD, ref, side, price, shares))
            live[ref] = (side, price, shares)
            continue
        ref = list(live)[int(rng.integers(len(live)))]
        side, price, left = live[ref]
        if choice < 0.7 and left > 1:  # some of its shares, executed or cancelled
            shares = int(rng.integers(1, left))
            if choice < 0.6:
                messages.append(executed(US, clock, ref, shares, step))
                wanted.append((clock, EXECUTE, ref, side, price, shares))
            else:
                messages.append(cancel(US, clock, ref, shares))
                wanted.append((clock, CANCEL, ref, side, price, shares))
            live[ref] = (side, price, left - shares)
        elif choice < 0.85:
            messages.append(delete(US, clock, ref))
            wanted.append((clock, DELETE, ref, side, price, left))
            del live[ref]
        else:  # replaced by a new reference, on its side
            new, new_price, new_shares = next(fresh), price + 100, int(rng.integers(1, 50))
            messages.append(replace(US, clock, ref, new, new_shares, new_price))
            wanted.append((clock, DELETE, ref, side, price, left))
            wanted.append((clock, ADD, new, side, new_price, new_shares))
            del live[ref]
            live[new] = (side, new_price, new_shares)
    events = read_itch(write(tmp_path / "many.itch", messages), "SEKA")
    got = events[["time", "kind", "order_id", "side", "price", "size"]].tolist()
    # an order id is an int64: references of 2**63 and more wrap around, as NumPy casts them
    signed = [
        (t, k, ref - (1 << 64) if ref >= 1 << 63 else ref, *rest) for t, k, ref, *rest in wanted
    ]
    assert len(live) > 100  # many alive at once
    assert got == signed
