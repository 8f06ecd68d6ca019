"""Databento DBN files: Databento's own test files and files written by databento-dbn's
encoder read into sekai's order events and level rows, the documented MBO action rules
checked on a known-answer day (replayed into an OrderBook), and every bad input named."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from synthetic_formats import write_dbn_file

from sekai.finance import BUY, SELL, OrderBook
from sekai.finance.lob.events import (
    ADD,
    CANCEL,
    CLEAR,
    EVENT_DTYPE,
    EXECUTE,
    LAST,
    MODIFY,
    NO_SIDE,
    SNAPSHOT,
    TRADE,
    check_events,
)

DATA = Path(__file__).parent / "data" / "databento"
needs_dbn = pytest.mark.needs("databento-dbn")

T0 = 1_704_196_800_000_000_000  # 2024-01-02T12:00:00Z
DAY = 86_400 * 10**9
F_BAD_TS_RECV = 8


# -- writing files with databento-dbn's own encoder ------------------------------------------
def metadata(schema: str = "mbo", symbols: dict[str, int] | None = None, ts_out: bool = False):
    import databento_dbn as dbn

    symbols = {"SEKA": 7} if symbols is None else symbols
    day = dt.date(2024, 1, 2)
    mappings = [
        SimpleNamespace(
            raw_symbol=raw,
            intervals=[
                SimpleNamespace(start_date=day, end_date=day + dt.timedelta(1), symbol=str(i))
            ],
        )
        for raw, i in symbols.items()
    ]
    return dbn.Metadata(
        dataset="XNAS.ITCH",
        start=T0 - DAY // 2,
        end=T0 + DAY // 2,
        stype_in=dbn.SType.RAW_SYMBOL,
        stype_out=dbn.SType.INSTRUMENT_ID,
        schema=dbn.Schema.from_str(schema),
        symbols=list(symbols),
        mappings=mappings,
        ts_out=ts_out,
    )


def mbo(
    action: str,
    side: str,
    order_id: int,
    price: int | None,
    size: int,
    *,
    t: int,
    flags: int = LAST,
    instrument_id: int = 7,
    ts_recv: int | None = None,
    **extra: Any,
):
    """One MBO record; ``price`` in sekai's 1e-4 units (None: UNDEF_PRICE)."""
    import databento_dbn as dbn

    return dbn.MBOMsg(
        1,
        instrument_id,
        t,
        order_id,
        dbn.UNDEF_PRICE if price is None else price * 100_000,
        size,
        dbn.Action.from_str(action),
        dbn.Side.from_str(side),
        t + 500 if ts_recv is None else ts_recv,
        flags=flags,
        **extra,
    )


def write_dbn(path: Path, records: list, *, head=None, zstd: bool = False) -> Path:
    """A DBN file of ``records`` (plain, or Zstandard through databento-dbn's Transcoder)."""
    return write_dbn_file(metadata() if head is None else head, records, path, zstd=zstd)


def the_day() -> list:
    """A day on one instrument: a snapshot (clear, three orders), then adds, a modify that
    lowers a size (keeps priority), one that raises it (loses it), one that moves a price, a
    trade print with its fill and cancel, a full cancel, a fill no cancel follows, a record
    with no action, a clear, and an add after it. Prices: 1_000_000 is 100.00."""
    snapshot = SNAPSHOT | F_BAD_TS_RECV
    return [
        mbo("R", "N", 0, None, 0, t=T0 - 3 * DAY, ts_recv=T0, flags=snapshot),  # 0
        mbo("A", "B", 11, 1_000_000, 5, t=T0 - 2 * DAY, ts_recv=T0, flags=snapshot),  # 1
        mbo("A", "B", 12, 1_000_000, 3, t=T0 - DAY, ts_recv=T0, flags=snapshot),  # 2
        mbo("A", "A", 21, 1_000_200, 4, t=T0 - DAY, ts_recv=T0, flags=snapshot | LAST),  # 3
        mbo("A", "B", 13, 1_000_000, 2, t=T0 + 1000),  # 4
        mbo("M", "B", 11, 1_000_000, 4, t=T0 + 2000),  # 5: lower size, keeps its place
        mbo("M", "B", 12, 1_000_000, 6, t=T0 + 3000),  # 6: larger size, to the back
        mbo("T", "A", 0, 1_000_000, 3, t=T0 + 4000, flags=0),  # 7: a sell aggressor's print
        mbo("F", "B", 11, 1_000_000, 3, t=T0 + 4000, flags=0),  # 8: order 11 filled ...
        mbo("C", "B", 11, 1_000_000, 3, t=T0 + 4000),  # 9: ... and the book changes
        mbo("C", "B", 13, 1_000_000, 2, t=T0 + 5000),  # 10: a full cancel
        mbo("M", "A", 21, 1_000_100, 4, t=T0 + 6000),  # 11: a new price
        mbo("A", "A", 22, 1_000_100, 1, t=T0 + 7000),  # 12
        mbo("F", "A", 22, 1_000_100, 1, t=T0 + 8000, flags=0),  # 13: no cancel follows
        mbo("N", "N", 0, None, 0, t=T0 + 8000),  # 14: only the packet's LAST flag
        mbo("R", "N", 0, None, 0, t=T0 + 9000),  # 15
        mbo("A", "B", 31, 999_900, 7, t=T0 + 10_000),  # 16
    ]


THE_DAYS_EVENTS = [  # (time, kind, order id, side, price, size, flags)
    (T0, CLEAR, 0, NO_SIDE, 0, 0, SNAPSHOT),
    (T0, ADD, 11, BUY, 1_000_000, 5, SNAPSHOT),
    (T0, ADD, 12, BUY, 1_000_000, 3, SNAPSHOT),
    (T0, ADD, 21, SELL, 1_000_200, 4, SNAPSHOT | LAST),
    (T0 + 1000, ADD, 13, BUY, 1_000_000, 2, LAST),
    (T0 + 2000, MODIFY, 11, BUY, 1_000_000, 4, LAST),
    (T0 + 3000, MODIFY, 12, BUY, 1_000_000, 6, LAST),
    (T0 + 4000, EXECUTE, 11, BUY, 1_000_000, 3, LAST),
    (T0 + 5000, CANCEL, 13, BUY, 1_000_000, 2, LAST),
    (T0 + 6000, MODIFY, 21, SELL, 1_000_100, 4, LAST),
    (T0 + 7000, ADD, 22, SELL, 1_000_100, 1, LAST),
    (T0 + 8000, TRADE, 22, SELL, 1_000_100, 1, LAST),
    (T0 + 9000, CLEAR, 0, NO_SIDE, 0, 0, LAST),
    (T0 + 10_000, ADD, 31, BUY, 999_900, 7, LAST),
]


def apply(events: np.ndarray, *, n_ticks: int = 20_000, tick: int = 100) -> OrderBook:
    """Replay events into an OrderBook, one tick a cent (the test's own applier)."""
    book = OrderBook(n_ticks)
    for e in events.tolist():
        _, kind, order_id, side, price, size, _ = e
        at = price // tick
        if kind == ADD:
            book.add(side, at, size, order_id=order_id)
        elif kind == CANCEL:
            book.cancel(order_id, size)
        elif kind == MODIFY:
            book.modify(order_id, price=at, size=size) if size else book.cancel(order_id)
        elif kind == EXECUTE:
            book.execute(order_id, size)
        elif kind == TRADE:
            book.record_trade(at, size, 1 - side)
        elif kind == CLEAR:
            book = OrderBook(n_ticks)
    return book


def queues(book: OrderBook, side: int) -> dict[int, list[tuple[int, int]]]:
    return {
        price: [(o.order_id, o.size) for o in book.queue(side, price)]
        for price, _ in book.depth(side, 100)
    }


# -- Databento's own test files --------------------------------------------------------------
REAL_MBO = [
    "test_data.mbo.dbn",
    "test_data.mbo.v3.dbn",
    "test_data.mbo.v1.dbn.zst",
    "test_data.mbo.v3.dbn.zst",
]


@needs_dbn
@pytest.mark.parametrize("name", REAL_MBO)
def test_databentos_mbo_test_files_read_exactly(name):
    from sekai.finance.lob.databento import read_dbn

    events = read_dbn(DATA / name)
    assert events.dtype == EVENT_DTYPE
    expected = [  # two cancels of one lot at 3722.75 and 3723.00 on the ask side of ESH1
        (1609160400000429831, CANCEL, 647784973705, SELL, 37_227_500, 1, LAST),
        (1609160400000431665, CANCEL, 647784973631, SELL, 37_230_000, 1, LAST),
    ]
    assert events.tolist() == expected


@needs_dbn
@pytest.mark.parametrize("name", REAL_MBO)
def test_mbo_events_agree_with_databento_dbns_own_decoder(name):
    import databento_dbn as dbn

    from sekai.finance.lob.databento import read_dbn

    data = (DATA / name).read_bytes()
    compression = dbn.Compression.ZSTD if name.endswith(".zst") else dbn.Compression.NONE
    decoder = dbn.DBNDecoder(compression=compression)
    decoder.write(data)
    records = decoder.decode()[1:]
    events = read_dbn(DATA / name)
    assert events["time"].tolist() == [r.ts_event for r in records]
    assert events["order_id"].tolist() == [r.order_id for r in records]
    assert events["price"].tolist() == [r.price // 100_000 for r in records]
    assert events["size"].tolist() == [r.size for r in records]


@needs_dbn
@pytest.mark.parametrize(
    ("name", "levels"),
    [
        ("test_data.mbp-1.v3.dbn.zst", 1),
        ("test_data.mbp-10.v3.dbn.zst", 10),
        ("test_data.mbp-10.dbn", 10),
    ],
)
def test_level_rows_agree_with_databento_dbns_own_decoder(name, levels):
    import databento_dbn as dbn

    from sekai.finance.lob.databento import read_dbn_levels
    from sekai.finance.lobster import orderbook_dtype

    data = (DATA / name).read_bytes()
    compression = dbn.Compression.ZSTD if name.endswith(".zst") else dbn.Compression.NONE
    decoder = dbn.DBNDecoder(compression=compression)
    decoder.write(data)
    records = decoder.decode()[1:]
    time, sequence, rows = read_dbn_levels(DATA / name)
    assert rows.dtype == orderbook_dtype(levels)
    assert time.tolist() == [r.ts_event for r in records]
    assert sequence.tolist() == [r.sequence for r in records]
    for row, record in zip(rows, records, strict=True):
        for k, level in enumerate(record.levels):
            assert row["bid_price"][k] * 100_000 == level.bid_px
            assert row["ask_price"][k] * 100_000 == level.ask_px
            assert (row["bid_size"][k], row["ask_size"][k]) == (level.bid_sz, level.ask_sz)
    assert rows["bid_price"][0, 0] == 37_202_500 and rows["bid_size"][0, 0] == 24
    assert rows["ask_price"][0, 0] == 37_205_000


@needs_dbn
def test_the_mbp_10_rows_match_the_mbo_events_of_the_same_updates():
    from sekai.finance.lob.databento import read_dbn, read_dbn_levels

    events = read_dbn(DATA / "test_data.mbo.v3.dbn.zst")
    time, _, rows = read_dbn_levels(DATA / "test_data.mbp-10.v3.dbn.zst")
    # the first MBO cancel (one lot at 3722.75) is the update of the first MBP-10 row, whose
    # tenth ask level is at that price
    assert time[0] == events["time"][0]
    assert rows["ask_price"][0, 9] == events["price"][0]


@needs_dbn
def test_the_record_layouts_are_databento_dbns():
    import databento_dbn as dbn

    from sekai.finance.lob import databento

    def offsets(dtype: np.dtype) -> list[tuple[int, str]]:
        flat = []
        for name in dtype.names:
            sub, offset = dtype.fields[name][:2]
            if sub.subdtype:  # the levels: their fields, level by level
                base, (count,) = sub.subdtype
                for k in range(count):
                    for field in base.names:
                        at = offset + k * base.itemsize + base.fields[field][1]
                        flat.append((at, base.fields[field][0].str))
            else:
                flat.append((offset, sub.str))
        return flat

    for schema, record in (("mbo", dbn.MBOMsg), ("mbp-1", dbn.MBP1Msg), ("mbp-10", dbn.MBP10Msg)):
        ours = databento._LAYOUTS[schema][1]
        theirs = np.dtype(record._dtypes)
        assert ours.itemsize == theirs.itemsize == record.size_hint
        assert offsets(ours) == offsets(theirs), schema


# -- a known-answer day written by databento-dbn's encoder -----------------------------------
@needs_dbn
@pytest.mark.parametrize("zstd", [False, True])
def test_the_known_answer_day_reads_as_documented(tmp_path, zstd):
    from sekai.finance.lob.databento import read_dbn

    path = write_dbn(tmp_path / "day.dbn", the_day(), zstd=zstd)
    events = read_dbn(path)
    assert events.tolist() == THE_DAYS_EVENTS
    check_events(events)


@needs_dbn
def test_the_known_answer_day_replays_into_the_expected_queues(tmp_path):
    from sekai.finance.lob.databento import read_dbn

    events = read_dbn(write_dbn(tmp_path / "day.dbn", the_day()))
    before_clear = apply(events[:-2])
    # 11 kept its place when its size went down, 12 went to the back when it went up; 11
    # traded 3 (on the tape), 13 left; 21 moved to 100.01, ahead of 22
    assert queues(before_clear, BUY) == {10_000: [(11, 1), (12, 6)]}
    assert queues(before_clear, SELL) == {10_001: [(21, 4), (22, 1)]}
    assert [(t.price, t.size, t.maker_id) for t in before_clear.trades] == [
        (10_000, 3, 11),
        (10_001, 1, 0),
    ]
    after = apply(events)
    assert queues(after, BUY) == {9_999: [(31, 7)]}
    assert queues(after, SELL) == {}


@needs_dbn
def test_a_fill_pairs_only_with_a_cancel_of_its_order_and_size(tmp_path):
    from sekai.finance.lob.databento import read_dbn

    records = [
        mbo("A", "B", 1, 1_000_000, 5, t=T0),
        mbo("A", "B", 2, 1_000_000, 5, t=T0 + 1),
        mbo("F", "B", 1, 1_000_000, 2, t=T0 + 2, flags=0),
        mbo("C", "B", 2, 1_000_000, 2, t=T0 + 2),  # another order: no pair
        mbo("F", "B", 2, 1_000_000, 3, t=T0 + 3, flags=0),
        mbo("C", "B", 2, 1_000_000, 1, t=T0 + 3),  # another size: no pair
    ]
    kinds = read_dbn(write_dbn(tmp_path / "f.dbn", records))["kind"].tolist()
    assert kinds == [ADD, ADD, TRADE, CANCEL, TRADE, CANCEL]


@needs_dbn
def test_records_with_the_gateways_send_time_read_the_same(tmp_path):
    from sekai.finance.lob.databento import read_dbn

    records = [
        mbo("A", "B", 1, 1_000_000, 5, t=T0, ts_out=T0 + 9),
        mbo("C", "B", 1, 1_000_000, 5, t=T0 + 1, ts_out=T0 + 10),
    ]
    head = metadata(ts_out=True)
    for zstd in (False, True):
        events = read_dbn(write_dbn(tmp_path / f"out{zstd}.dbn", records, head=head, zstd=zstd))
        assert events[["kind", "order_id", "size"]].tolist() == [(ADD, 1, 5), (CANCEL, 1, 5)]


# -- several instruments ---------------------------------------------------------------------
def two_instruments() -> list:
    return [
        mbo("A", "B", 1, 1_000_000, 5, t=T0, instrument_id=7),
        mbo("A", "A", 2, 2_000_000, 6, t=T0 + 1, instrument_id=8),
        mbo("C", "B", 1, 1_000_000, 5, t=T0 + 2, instrument_id=7),
    ]


@needs_dbn
def test_an_instrument_is_chosen_by_symbol_or_id(tmp_path):
    from sekai.finance.lob.databento import read_dbn

    head = metadata(symbols={"SEKA": 7, "SEKB": 8})
    path = write_dbn(tmp_path / "two.dbn", two_instruments(), head=head)
    assert read_dbn(path, symbol="SEKA")["order_id"].tolist() == [1, 1]
    assert read_dbn(path, symbol="SEKB")[["order_id", "size"]].tolist() == [(2, 6)]
    assert read_dbn(path, instrument_id=8)["order_id"].tolist() == [2]
    with pytest.raises(
        ValueError, match=r"two\.dbn: the file holds 2 instruments: 7 \(SEKA\), 8 \(SEKB\)"
    ):
        read_dbn(path)
    with pytest.raises(
        ValueError, match=r"two\.dbn: symbol 'SEKC' is not in the file's symbology: SEKA, SEKB"
    ):
        read_dbn(path, symbol="SEKC")
    with pytest.raises(
        ValueError, match=r"two\.dbn: instrument 9 has no records; the file holds 2"
    ):
        read_dbn(path, instrument_id=9)
    with pytest.raises(ValueError, match="not both"):
        read_dbn(path, symbol="SEKA", instrument_id=7)


@needs_dbn
def test_a_symbol_selects_its_instrument_only_on_its_mapped_dates(tmp_path):
    from sekai.finance.lob.databento import read_dbn

    # one instrument id, mapped to the symbol on 2024-01-02 only: a record of the next day is
    # another symbol's
    records = [
        mbo("A", "B", 1, 1_000_000, 5, t=T0),
        mbo("A", "B", 2, 1_000_000, 5, t=T0 + DAY),
    ]
    path = write_dbn(tmp_path / "days.dbn", records)
    assert read_dbn(path, symbol="SEKA")["order_id"].tolist() == [1]
    assert read_dbn(path)["order_id"].tolist() == [1, 2]


# -- bad input -------------------------------------------------------------------------------
# each case's records as a function: databento-dbn is imported only by the tests that need it
BAD_RECORDS = {
    "record 0: an order event with no price": lambda: [mbo("A", "B", 1, None, 5, t=T0)],
    r"record 0: price -10000000000 is not positive": lambda: [mbo("A", "B", 1, -100_000, 5, t=T0)],
    "record 0: an order event with no side": lambda: [mbo("A", "N", 1, 1_000_000, 5, t=T0)],
    "record 1: time goes backwards": lambda: [
        mbo("A", "B", 1, 1_000_000, 5, t=T0),
        mbo("A", "B", 2, 1_000_000, 5, t=T0 - 1),
    ],
    "record 1: a top-of-book record": lambda: [
        mbo("A", "B", 1, 1_000_000, 5, t=T0),
        mbo("A", "B", 2, 1_000_000, 5, t=T0, flags=64),
    ],
    "record 0: an add, cancel or fill of size 0": lambda: [mbo("A", "B", 1, 1_000_000, 0, t=T0)],
}


@needs_dbn
@pytest.mark.parametrize("what", list(BAD_RECORDS))
def test_bad_records_are_named(tmp_path, what):
    from sekai.finance.lob.databento import read_dbn

    with pytest.raises(ValueError, match=rf"bad\.dbn: {what}"):
        read_dbn(write_dbn(tmp_path / "bad.dbn", BAD_RECORDS[what]()))


@needs_dbn
def test_a_price_off_the_1e_4_grid_is_named(tmp_path):
    import databento_dbn as dbn

    from sekai.finance.lob.databento import read_dbn

    good = mbo("A", "B", 1, 1_000_000, 5, t=T0)
    off = dbn.MBOMsg(1, 7, T0 + 1, 2, 100_000_000_001, 5, dbn.Action.from_str("A"),
                     dbn.Side.from_str("B"), T0 + 2)  # fmt: skip
    with pytest.raises(ValueError, match=r"record 1: price 100000000001 .* off sekai's 1e-4 grid"):
        read_dbn(write_dbn(tmp_path / "off.dbn", [good, off]))


@needs_dbn
def test_an_unknown_action_is_named(tmp_path):
    from sekai.finance.lob.databento import read_dbn

    path = write_dbn(tmp_path / "x.dbn", [mbo("A", "B", 1, 1_000_000, 5, t=T0)] * 2)
    data = bytearray(path.read_bytes())
    data[-56 + 38] = ord("X")  # the last record's action byte
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"x\.dbn: record 1: unknown MBO action b'X'"):
        read_dbn(path)


@needs_dbn
@pytest.mark.parametrize(
    ("record", "what"),
    [
        (("C", "B", 99, 1_000_000, 1), "cancel of order 99"),
        (("M", "A", 98, 1_000_100, 2), "modify of order 98"),
        (("C", "B", 11, 1_000_000, 5), "cancel of order 11"),  # gone already
    ],
)
def test_after_a_snapshot_an_order_the_book_does_not_hold_is_named(tmp_path, record, what):
    """A day that starts with a snapshot of every order knows them all: a cancel or modify
    of another is a broken file. Without a snapshot (a file from mid-session) the same
    records are orders from before the file, left to the replay as legacy volume."""
    from sekai.finance.lob.databento import read_dbn

    snapshot = SNAPSHOT | LAST
    head = [
        mbo("R", "N", 0, None, 0, t=T0 - DAY, ts_recv=T0, flags=SNAPSHOT),
        mbo("A", "B", 11, 1_000_000, 5, t=T0 - DAY, ts_recv=T0, flags=snapshot),
        mbo("C", "B", 11, 1_000_000, 5, t=T0 + 10),
    ]
    path = write_dbn(tmp_path / "x.dbn", [*head, mbo(*record, t=T0 + 20)])
    with pytest.raises(ValueError, match=rf"x\.dbn: record 3: {what}, which the book does not"):
        read_dbn(path)
    plain = [mbo("A", "B", 11, 1_000_000, 5, t=T0), mbo(*record, t=T0 + 20)]
    assert len(read_dbn(write_dbn(tmp_path / "z.dbn", plain))) == 2


@needs_dbn
def test_a_record_of_another_type_is_named(tmp_path):
    import databento_dbn as dbn

    from sekai.finance.lob.databento import read_dbn

    add = mbo("A", "B", 1, 1_000_000, 5, t=T0)
    quote = dbn.MBP1Msg(1, 7, T0 + 1, 10**14, 5, dbn.Action.from_str("A"),
                        dbn.Side.from_str("B"), 0, T0 + 2)  # fmt: skip
    path = write_dbn(tmp_path / "mixed.dbn", [add, quote])
    with pytest.raises(ValueError, match=r"mixed\.dbn: record 1: a mbp-1 record of 80 bytes"):
        read_dbn(path)
    # a bar is as long as an MBO record: only its record type tells it apart
    bar = dbn.OHLCVMsg(32, 1, 7, T0 + 1, 1, 2, 0, 1, 100)
    path = write_dbn(tmp_path / "bars.dbn", [add, bar])
    with pytest.raises(ValueError, match=r"bars\.dbn: record 1: a type 32 record of 56 bytes"):
        read_dbn(path)


@needs_dbn
def test_truncated_files_are_named(tmp_path):
    from sekai.finance.lob.databento import read_dbn

    whole = write_dbn(tmp_path / "whole.dbn", the_day()).read_bytes()
    cut = tmp_path / "cut.dbn"
    cut.write_bytes(whole[:-20])
    with pytest.raises(ValueError, match=r"cut\.dbn: record 16: cut short \(36 of its 56 bytes\)"):
        read_dbn(cut)
    cut.write_bytes(whole[:30])
    with pytest.raises(ValueError, match=r"cut\.dbn: the DBN metadata is cut short"):
        read_dbn(cut)
    packed = write_dbn(tmp_path / "whole.dbn.zst", the_day(), zstd=True).read_bytes()
    for end in (len(packed) - 2, len(packed) // 2, 12):
        cut.write_bytes(packed[:end])
        with pytest.raises(ValueError, match=r"cut\.dbn: the Zstandard stream is cut short"):
            read_dbn(cut)


@needs_dbn
def test_other_schemas_urls_and_other_files_are_refused(tmp_path):
    from sekai.finance.lob.databento import read_dbn, read_dbn_levels

    with pytest.raises(ValueError, match=r"ohlcv-1d\.v3\.dbn\.zst: a file of schema ohlcv-1d"):
        read_dbn(DATA / "test_data.ohlcv-1d.v3.dbn.zst")
    with pytest.raises(
        ValueError, match=r"mbo\.v3\.dbn\.zst: a file of schema mbo; read_dbn reads"
    ):
        read_dbn_levels(DATA / "test_data.mbo.v3.dbn.zst")
    with pytest.raises(ValueError, match=r"mbp-1\.v3\.dbn\.zst: a file of schema mbp-1"):
        read_dbn(DATA / "test_data.mbp-1.v3.dbn.zst")
    with pytest.raises(ValueError, match="not a local path"):
        read_dbn("https://example.com/day.dbn.zst")
    text = tmp_path / "day.csv"
    text.write_text("ts_event,action\n")
    with pytest.raises(ValueError, match=r"day\.csv: not a DBN file"):
        read_dbn(text)
    with pytest.raises(FileNotFoundError):
        read_dbn(tmp_path / "missing.dbn")


@needs_dbn
def test_a_level_with_volume_and_no_price_is_named(tmp_path):
    import databento_dbn as dbn

    from sekai.finance.lob.databento import read_dbn_levels

    data = bytearray((DATA / "test_data.mbp-10.dbn").read_bytes())
    start = len(data) - 2 * dbn.MBP10Msg.size_hint  # record 0
    bid_px_03 = start + 48 + 3 * 32
    data[bid_px_03 : bid_px_03 + 8] = (2**63 - 1).to_bytes(8, "little")
    path = tmp_path / "holes.dbn"
    path.write_bytes(bytes(data))
    with pytest.raises(
        ValueError, match=r"holes\.dbn: record 0: bid level 4 has volume and no price"
    ):
        read_dbn_levels(path)


# -- the slim install ------------------------------------------------------------------------
def test_without_databento_dbn_reading_names_the_extra(monkeypatch):
    from sekai.finance.lob.databento import read_dbn, read_dbn_levels

    monkeypatch.setitem(sys.modules, "databento_dbn", None)  # as if not installed
    for read in (read_dbn, read_dbn_levels):
        with pytest.raises(ModuleNotFoundError, match=r'pip install "sekai-finance\[databento\]"'):
            read(DATA / "test_data.mbo.v3.dbn.zst")


def test_importing_sekai_finance_does_not_import_databento_dbn():
    code = (
        "import sys, sekai.finance, sekai.finance.lob, sekai.finance.lob.databento\n"
        "assert 'databento_dbn' not in sys.modules, 'databento_dbn was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
