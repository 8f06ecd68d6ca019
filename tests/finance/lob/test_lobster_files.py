"""LOBSTER readers: real-file variants, local paths only, every bad line named; a stream is
checked whole before replay touches a book; the opening book is row 1 less message 1."""

from __future__ import annotations

import bz2
import copy
import lzma
import zipfile
from pathlib import Path

import numpy as np
import pytest

from sekai.finance import BUY, LEGACY, SELL, OrderBook
from sekai.finance.lob.lobster import (
    MESSAGE_DTYPE,
    initial_book,
    orderbook_dtype,
    read_messages,
    read_orderbook,
    replay,
)

GOOD = [
    "34200.004241176,1,16113575,18,5853300,1",
    "34200.025552036,1,16120456,18,5859100,-1",
    "34200.201743669,3,16120456,18,5859100,-1",
]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("34200.3,8,1,5,5853300,1", "type is not one of 1 to 7"),
        ("34200.3,1,1,5,5853300,0", "direction is not 1 or -1"),
        ("34200.3,1,1,5,nan,1", "price is not a whole number"),
        ("34200.3,1,1,1.5,5853300,1", "size is not a whole number"),
        ("34200.3,1,1,0,5853300,1", "size must be positive"),
        ("34200.3,1,9007199254740993,5,5853300,1", r"order id is 2\*\*53 or more"),
        ("34200.3,4,1,-3,5853300,1", "size must be positive"),
        ("34200.3,7,0,0,2,-1", "a halt's price must be -1"),
        ("34200.01,1,1,5,5853300,1", "time goes backwards"),
        ("34200.3,1,1,5,5853300", "5 columns, expected 6"),
        ("34200.3,1,1,5,5853300,1,0", "7 columns, expected 6"),
        ("34200.3,1,x,5,5853300,1", "not all numbers"),
    ],
)
@pytest.mark.parametrize("header", [False, True])
def test_a_bad_message_line_is_named(tmp_path: Path, line: str, what: str, header: bool) -> None:
    lines = ["Time,Type,OrderID,Size,Price,Direction"] * header + GOOD[:2] + [line] + GOOD[2:]
    path = write(tmp_path / "m.csv", lines)
    with pytest.raises(ValueError, match=f"m.csv line {3 + header}: {what}"):
        read_messages(path)


def test_files_with_and_without_header_and_with_5_to_9_decimals_read_alike(
    tmp_path: Path,
) -> None:
    plain = read_messages(write(tmp_path / "a.csv", GOOD))
    short = [f"{float(line.split(',')[0]):.5f}," + line.split(",", 1)[1] for line in GOOD]
    headed = read_messages(write(tmp_path / "b.csv", ["time,type,id,size,price,dir", *short]))
    assert plain.dtype == MESSAGE_DTYPE and len(plain) == 3
    assert plain["order_id"].tolist() == [16113575, 16120456, 16120456]
    assert plain["time"][0] == pytest.approx(34200.004241176, abs=1e-9)
    assert headed["time"].tolist() == [34200.00424, 34200.02555, 34200.20174]
    assert np.array_equal(headed[["type", "size", "price"]], plain[["type", "size", "price"]])
    assert len(read_messages(write(tmp_path / "c.csv", []))) == 0
    # a first line with a number in it is a broken message, not a header
    with pytest.raises(ValueError, match="line 1: not all numbers"):
        read_messages(write(tmp_path / "d.csv", ["34200.1,1,x,5,5853300,1", *GOOD]))


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zip"])
def test_compressed_files_are_read_by_their_suffix(tmp_path: Path, suffix: str) -> None:
    text = ("\n".join(GOOD) + "\n").encode()
    path = tmp_path / f"m.csv{suffix}"
    if suffix == ".gz":
        import gzip

        path.write_bytes(gzip.compress(text))
    elif suffix == ".bz2":
        path.write_bytes(bz2.compress(text))
    elif suffix == ".xz":
        path.write_bytes(lzma.compress(text))
    else:
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("m.csv", text)
    assert np.array_equal(read_messages(path), read_messages(write(tmp_path / "m.csv", GOOD)))


def test_readers_open_local_files_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for reader in (read_messages, read_orderbook):
        with pytest.raises(ValueError, match="not a local path"):
            reader("https://example.com/AMZN_message_10.csv")
        with pytest.raises(FileNotFoundError, match="no such file"):
            reader(tmp_path / "absent.csv")
        with pytest.raises(ValueError, match="not a file"):
            reader(tmp_path)
        with pytest.raises(TypeError, match="path must be a str or a path"):
            reader(3)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []  # nothing fetched, no folder named after a host
    with zipfile.ZipFile(tmp_path / "two.zip", "w") as archive:
        archive.writestr("a.csv", "1")
        archive.writestr("b.csv", "2")
    with pytest.raises(ValueError, match="a zip must hold one file, it holds 2"):
        read_messages(tmp_path / "two.zip")


ROWS = [  # 2 levels: ask price, ask size, bid price, bid size, then level 2
    "5859400,200,5853300,18,5859800,200,5853000,150",
    "5859400,200,5853300,18,9999999999,0,5853000,150",
    "5859400,200,-9999999999,0,9999999999,0,-9999999999,0",
]


def test_orderbook_rows_name_their_levels_and_read_empty_levels_as_empty(
    tmp_path: Path,
) -> None:
    rows = read_orderbook(write(tmp_path / "o.csv", ROWS))
    assert rows.dtype == orderbook_dtype(2)
    assert rows["ask_price"].tolist() == [[5859400, 5859800], [5859400, 0], [5859400, 0]]
    assert rows["bid_size"].tolist() == [[18, 150], [18, 150], [0, 0]]
    assert rows["bid_price"][:, 0].tolist() == [5853300, 5853300, 0]


@pytest.mark.parametrize(
    ("row", "what"),
    [
        ("5859400,200,5853300,18,5859800,200,5853000", "7 columns, expected 8"),
        ("5859400,200,5853300,18,9999999999,0,5853000,nan", "not all whole numbers"),
        ("5859400,200,5853300,-18,5859800,200,5853000,150", "a negative size"),
        ("9999999999,0,5853300,18,5859800,200,5853000,150", "a level after an empty one"),
        ("5859400,200,5853300,18,5859300,200,5853000,150", "levels out of price order"),
        ("5859400,200,5853300,18,5859800,200,5853300,150", "levels out of price order"),
        ("5853300,200,5853300,18,5859800,200,5853000,150", "the best bid reaches the best ask"),
        ("0,200,5853300,18,5859800,200,5853000,150", "a level with volume has no price"),
    ],
)
def test_a_bad_orderbook_row_is_named(tmp_path: Path, row: str, what: str) -> None:
    path = write(tmp_path / "o.csv", [ROWS[0], row, ROWS[1]])
    with pytest.raises(ValueError, match=f"o.csv line 2: {what}"):
        read_orderbook(path)


def a_book() -> OrderBook:
    book = OrderBook(100)
    book.add(BUY, 40, 5, order_id=1)
    book.add(SELL, 60, 5, order_id=2)
    book.add_legacy(BUY, 39, 3)
    return book


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"direction": 0}, "message 3: direction is not 1 or -1"),
        ({"type": 0}, "message 3: type is not one of 1 to 7"),
        ({"time": 1.0}, "message 3: time goes backwards"),
        ({"size": 0}, "message 3: size must be positive"),
        ({"price": 4050}, "message 3: price 4050 is not on the 100-unit grid"),
        ({"price": 10_000}, "message 3: price 10000 is tick 100, outside"),
        ({"order_id": 1}, "order id 1 is submitted but already rests"),
        ({"order_id": 10}, "message 3: order id 10 is submitted twice"),
    ],
)
def test_a_bad_message_mid_stream_leaves_the_book_untouched(bad: dict, match: str) -> None:  # type: ignore[type-arg]
    messages = np.array(
        [
            (5.0, 1, 10, 5, 4100, 1),
            (6.0, 3, 2, 5, 6000, -1),
            (7.0, 1, 11, 5, 5000, -1),
            (8.0, 4, 1, 5, 4000, 1),
        ],
        MESSAGE_DTYPE,
    )
    for name, value in bad.items():
        messages[2][name] = value
    book = a_book()
    before = copy.deepcopy(vars(book))
    with pytest.raises(ValueError, match=match):
        replay(book, messages)
    assert vars(book) == before


def test_a_bad_orderbook_leaves_the_book_untouched() -> None:
    messages = np.array([(5.0, 1, 10, 5, 4100, 1), (6.0, 3, 2, 5, 6000, -1)], MESSAGE_DTYPE)
    rows = np.zeros(2, orderbook_dtype(1))
    rows["bid_price"], rows["bid_size"] = 4100, 5
    book = a_book()
    before = copy.deepcopy(vars(book))
    with pytest.raises(ValueError, match="orderbook has 1 rows for 2 messages"):
        replay(book, messages, orderbook=rows[:1])
    rows["bid_price"][1] = 4150
    with pytest.raises(ValueError, match="orderbook row 2: bid price 4150 is not a tick"):
        replay(book, messages, orderbook=rows)
    assert vars(book) == before


@pytest.mark.parametrize(
    ("first", "bids", "asks"),
    [
        ((1, 7, 30, 4000, 1), [(40, 5), (39, 2)], [(41, 4)]),  # a submission: less 30 at 40
        ((3, 7, 10, 4200, -1), [(40, 35), (39, 2)], [(41, 4), (42, 10)]),  # a delete: plus 10
        ((4, 7, 6, 4100, -1), [(40, 35), (39, 2)], [(41, 10)]),  # an execution: plus 6
        ((5, 0, 6, 4050, -1), [(40, 35), (39, 2)], [(41, 4)]),  # hidden: the row as it is
    ],
)
def test_the_opening_book_is_row_one_less_message_one(
    first: tuple[int, ...], bids: list[tuple[int, int]], asks: list[tuple[int, int]]
) -> None:
    messages = np.array([(34200.0, *first)], MESSAGE_DTYPE)
    row = np.zeros(1, orderbook_dtype(2))
    row["bid_price"], row["bid_size"] = [4000, 3900], [35, 2]
    row["ask_price"], row["ask_size"] = [4100, 0], [4, 0]
    book = initial_book(messages, row, n_ticks=100)
    assert book.depth(BUY, 5) == bids and book.depth(SELL, 5) == asks
    assert len(book) == 0 and {o.owner for o in book.queue(BUY, 40)} == {LEGACY}
    result = replay(book, messages, orderbook=row)  # message 1 then gives row 1 back
    assert result.reconciliations == 0 and result.unmatched == 0
    assert book.depth(BUY, 2) == [(40, 35), (39, 2)] and book.depth(SELL, 2) == [(41, 4)]
