"""The Parquet event store and ``sekai data``: days written and read back identical, one file
per symbol and UTC day in Hive folders with the schema's integer columns, atomic replacement,
several days of a Databento file split at UTC midnight, ``sekai data convert`` on LOBSTER,
ITCH and Databento files, ``sekai data info`` line by line, and every bad input an exit code 2
with one line naming it and nothing written."""

from __future__ import annotations

import datetime
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from itch_messages import add, cross, delete, directory, executed, frame, trading_action
from lobster_days import generate_day, ship, write_day

from sekai.cli import main
from sekai.finance.lob import store
from sekai.finance.lob.events import (
    ADD,
    CLEAR,
    DAY,
    EVENT_DTYPE,
    HALT,
    NO_SIDE,
    empty,
    midnight,
)
from sekai.finance.lob.lobster import read_messages, to_events

DBN_DATA = Path(__file__).parent / "data" / "databento"
needs_pyarrow = pytest.mark.needs("pyarrow")
needs_dbn = pytest.mark.needs("databento-dbn")
JUNE_21 = datetime.date(2012, 6, 21)
LOBSTER_NAME = "SEKA_2012-06-21_34200000_57600000_message_5.csv"


def lobster_file(folder: Path, seed: int = 0, events: int = 400, name: str = LOBSTER_NAME) -> Path:
    """A generated LOBSTER message file under LOBSTER's own file name."""
    messages, _ = write_day(folder, ship(generate_day(seed=seed, events=events), 5))
    return messages.rename(folder / name)


def lobster_events(path: Path, date: datetime.date | str = JUNE_21) -> np.ndarray:
    return to_events(read_messages(path), date=date)


def events_at(*times: int, price: int = 1_000_000) -> np.ndarray:
    """Adds at ``times`` (ns since the epoch), order ids 1, 2, ..."""
    events = empty(len(times))
    events["time"] = times
    events["kind"] = ADD
    events["order_id"] = np.arange(1, len(times) + 1)
    events["price"] = price
    events["size"] = 100
    return events


def run(*argv: object) -> int:
    return main(["data", *map(str, argv)])


def usage_error(capsys: pytest.CaptureFixture[str], *argv: object) -> str:
    """The one line ``sekai data ...`` writes on stderr, after checking it exits with 2."""
    assert run(*argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("sekai data: error: "), lines[0]
    assert "Traceback" not in captured.err and captured.out == ""
    return lines[0]


def write(path: Path, text: str = "1,1,1,1\n") -> Path:
    path.write_text(text)
    return path


def tree(folder: Path) -> list[str]:
    """Every path under ``folder``, relative, sorted (hidden ones too)."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


# -- ITCH --------------------------------------------------------------------------------------
T930 = 34_200 * 10**9  # 9:30, in ns since midnight


def itch_day() -> bytes:
    """Two stocks, SEKA (locate 7) and OTHR (locate 8), and a third that has no messages."""
    return frame(
        [
            directory(7, "SEKA"),
            directory(8, "OTHR"),
            directory(9, "NONE"),
            add(7, T930 + 1, 1, "B", 100, "SEKA", 1_000_000),
            add(8, T930 + 2, 2, "S", 900, "OTHR", 502_500),
            add(7, T930 + 3, 3, "S", 200, "SEKA", 1_001_000),
            executed(7, T930 + 4, 3, 50, 1),
            cross(8, T930 + 5, 300, "OTHR", 500_000, 2),
            delete(7, T930 + 6, 1),
            trading_action(7, "SEKA", "H", T930 + 7),
        ]
    )


def itch_file(folder: Path, name: str = "12302019.NASDAQ_ITCH50") -> Path:
    path = folder / name
    path.write_bytes(itch_day())
    return path


# -- Databento ---------------------------------------------------------------------------------
def dbn_days(folder: Path) -> Path:
    """One instrument (7, SEKA) over three UTC days: a snapshot after midnight of 2024-01-02,
    records up to 1 ns before the next midnight, one at midnight, and one two days on."""
    from test_databento import mbo, write_dbn

    start = midnight("2024-01-02")
    return write_dbn(
        folder / "days.mbo.dbn.zst",
        [
            mbo("A", "B", 11, 1_000_000, 5, t=start + 1000),
            mbo("A", "A", 12, 1_000_500, 3, t=start + DAY - 1),
            mbo("C", "B", 11, 1_000_000, 2, t=start + DAY),
            mbo("A", "B", 13, 999_900, 4, t=start + 2 * DAY + 5),
            mbo("R", "N", 0, None, 0, t=start + 2 * DAY + 6),
        ],
        zstd=True,
    )


# -- the store API -----------------------------------------------------------------------------
@needs_pyarrow
def test_a_day_written_is_read_back_identical_from_its_hive_folder(tmp_path):
    events = lobster_events(lobster_file(tmp_path))
    path = store.write_events(tmp_path / "store", "SEKA", events)
    assert path == tmp_path / "store" / "symbol=SEKA" / "date=2012-06-21" / "events.parquet"
    assert store.symbols(tmp_path / "store") == ["SEKA"]
    assert store.days(tmp_path / "store", "SEKA") == [JUNE_21]
    back = store.read_day(tmp_path / "store", "SEKA", "2012-06-21")
    assert back.dtype == EVENT_DTYPE and np.array_equal(back, events)
    assert np.array_equal(store.read_day(str(tmp_path / "store"), "SEKA", JUNE_21), events)


@needs_pyarrow
def test_the_files_hold_exactly_the_schemas_integer_columns_and_read_as_a_hive_dataset(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = tmp_path / "store"
    store.write_events(root, "SEKA", events_at(midnight(JUNE_21) + 5, midnight(JUNE_21) + 9))
    store.write_events(root, "OTHR", events_at(midnight("2012-06-22") + 7))
    schema = pq.read_schema(root / "symbol=SEKA" / "date=2012-06-21" / "events.parquet")
    assert [(f.name, str(f.type)) for f in schema] == [
        ("time", "int64"),
        ("kind", "int8"),
        ("order_id", "int64"),
        ("side", "int8"),
        ("price", "int64"),
        ("size", "int64"),
        ("flags", "uint8"),
    ]
    table = pq.read_table(root, partitioning="hive").sort_by("time")
    assert table.column("symbol").to_pylist() == ["SEKA", "SEKA", "OTHR"]
    assert [str(d) for d in table.column("date").to_pylist()] == [
        "2012-06-21",
        "2012-06-21",
        "2012-06-22",
    ]
    assert pa.types.is_int64(table.schema.field("time").type)


@needs_pyarrow
def test_days_are_cut_at_utc_midnight_and_one_write_is_one_day(tmp_path):
    june_22 = midnight("2012-06-22")
    events = events_at(june_22 - DAY + 1, june_22 - 1, june_22, june_22 + 2 * DAY)
    split = store.split_days(events)
    assert [day for day, _ in split] == [
        JUNE_21,
        datetime.date(2012, 6, 22),
        datetime.date(2012, 6, 24),
    ]
    assert [part["order_id"].tolist() for _, part in split] == [[1, 2], [3], [4]]
    with pytest.raises(ValueError, match=r"span 2012-06-21 to 2012-06-22: write_events writes"):
        store.write_events(tmp_path, "SEKA", events[1:3])
    for _, part in split:
        store.write_events(tmp_path, "SEKA", part)
    assert store.days(tmp_path, "SEKA") == [day for day, _ in split]
    for day, part in split:
        assert np.array_equal(store.read_day(tmp_path, "SEKA", day), part)


@needs_pyarrow
def test_writing_a_day_again_replaces_it_and_a_failed_write_keeps_the_old_one(
    tmp_path, monkeypatch
):
    import pyarrow.parquet as pq

    first = events_at(midnight(JUNE_21) + 1, midnight(JUNE_21) + 2)
    second = events_at(midnight(JUNE_21) + 3, price=990_000)
    folder = tmp_path / "symbol=SEKA" / "date=2012-06-21"
    store.write_events(tmp_path, "SEKA", first)
    store.write_events(tmp_path, "SEKA", second)
    assert np.array_equal(store.read_day(tmp_path, "SEKA", JUNE_21), second)
    assert [p.name for p in folder.iterdir()] == ["events.parquet"]

    def broken(table, where, **kwargs):  # a write that dies half way
        Path(where).write_bytes(b"PAR1 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", broken)
    with pytest.raises(OSError, match="disk full"):
        store.write_events(tmp_path, "SEKA", first)
    assert np.array_equal(store.read_day(tmp_path, "SEKA", JUNE_21), second)
    assert [p.name for p in folder.iterdir()] == ["events.parquet"]


@needs_pyarrow
def test_what_cannot_be_written_is_refused(tmp_path):
    day = events_at(midnight(JUNE_21) + 1)
    with pytest.raises(ValueError, match="no events for SEKA"):
        store.write_events(tmp_path, "SEKA", empty(0))
    for symbol in ["", "../up", "A/B", "symbol=X", " SEKA"]:
        with pytest.raises(ValueError, match="cannot name a store folder"):
            store.write_events(tmp_path, symbol, day)
    with pytest.raises(TypeError, match="EVENT_DTYPE"):
        store.write_events(tmp_path, "SEKA", np.zeros(3))
    backwards = events_at(midnight(JUNE_21) + 5, midnight(JUNE_21) + 1)
    with pytest.raises(ValueError, match="event 1: time goes backwards"):
        store.write_events(tmp_path, "SEKA", backwards)
    with pytest.raises(ValueError, match="not a local path"):
        store.write_events("s3://bucket/store", "SEKA", day)
    assert tree(tmp_path) == []


@needs_pyarrow
def test_reading_what_the_store_does_not_hold_names_what_it_does(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such store folder"):
        store.days(tmp_path / "nowhere", "SEKA")
    store.write_events(tmp_path, "SEKA", events_at(midnight(JUNE_21) + 1))
    store.write_events(tmp_path, "SEKA", events_at(midnight("2012-06-25") + 1))
    with pytest.raises(ValueError, match=r"no symbol OTHR in the store \(symbols: SEKA\)"):
        store.read_day(tmp_path, "OTHR", JUNE_21)
    with pytest.raises(ValueError, match=r"no symbol OTHR in the store"):
        store.days(tmp_path, "OTHR")
    with pytest.raises(
        ValueError, match=r"no day 2012-06-22 of SEKA .*2 days, 2012-06-21 to 2012-06-25"
    ):
        store.read_day(tmp_path, "SEKA", "2012-06-22")
    with pytest.raises(ValueError, match="date must be 'YYYY-MM-DD'"):
        store.read_day(tmp_path, "SEKA", "21.06.2012")


@needs_pyarrow
def test_a_days_file_of_other_columns_is_refused_by_name(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    events = events_at(midnight(JUNE_21) + 1)
    path = store.write_events(tmp_path, "SEKA", events)
    columns = {name: pa.array(events[name]) for name in EVENT_DTYPE.names}
    pq.write_table(pa.table({**columns, "price": pa.array([100.0])}), path)
    with pytest.raises(ValueError, match="column price is double, not int64"):
        store.read_day(tmp_path, "SEKA", JUNE_21)
    pq.write_table(pa.table({**columns, "venue": pa.array(["X"])}), path)
    with pytest.raises(ValueError, match=r"columns time, kind, .*, venue; a day's file has"):
        store.read_day(tmp_path, "SEKA", JUNE_21)
    bad = events.copy()
    bad["side"] = 5
    pq.write_table(pa.table({name: pa.array(bad[name]) for name in EVENT_DTYPE.names}), path)
    with pytest.raises(ValueError, match="event 0: side must be BUY"):
        store.read_day(tmp_path, "SEKA", JUNE_21)


# -- sekai data convert ------------------------------------------------------------------------
@needs_pyarrow
def test_convert_writes_lobster_and_itch_days_that_read_back_identical(tmp_path, capsys):
    from sekai.finance.lob.itch import read_itch

    lobster = lobster_file(tmp_path)
    itch = itch_file(tmp_path)
    root = tmp_path / "store"
    assert run("convert", lobster, itch, root, "--symbol", "SEKA", "--symbol", "OTHR") == 0
    days_written = [("SEKA", "2012-06-21"), ("SEKA", "2019-12-30"), ("OTHR", "2019-12-30")]
    seka_itch_day = datetime.date(2019, 12, 30)
    files = [root / f"symbol={s}" / f"date={d}" / "events.parquet" for s, d in days_written]
    assert capsys.readouterr().out.splitlines() == [
        f"SEKA 2012-06-21: {len(lobster_events(lobster))} events -> {files[0]}",
        f"SEKA 2019-12-30: 5 events -> {files[1]}",
        f"OTHR 2019-12-30: 2 events -> {files[2]}",
    ]
    assert store.symbols(root) == ["OTHR", "SEKA"]
    assert store.days(root, "SEKA") == [JUNE_21, seka_itch_day]
    assert np.array_equal(store.read_day(root, "SEKA", JUNE_21), lobster_events(lobster))
    for symbol in ["SEKA", "OTHR"]:
        assert np.array_equal(store.read_day(root, symbol, seka_itch_day), read_itch(itch, symbol))
    assert not [p for p in tree(root) if p.startswith(".")]  # no staging left


@needs_pyarrow
def test_convert_takes_the_date_of_a_file_whose_name_has_none(tmp_path, capsys):
    lobster = lobster_file(tmp_path, name="SEKA_message_5.csv")
    itch = itch_file(tmp_path, "day.NASDAQ_ITCH50")
    assert "SEKA_message_5.csv: no date in the name" in usage_error(
        capsys, "convert", lobster, tmp_path / "store"
    )
    assert "day.NASDAQ_ITCH50: no date in the name" in usage_error(
        capsys, "convert", itch, tmp_path / "store", "--symbol", "SEKA"
    )
    assert not (tmp_path / "store").exists()
    root = tmp_path / "store"
    assert run("convert", lobster, root, "--date", "2013-01-02") == 0
    assert run("convert", itch, root, "--symbol", "SEKA", "--date", "2013-01-03") == 0
    capsys.readouterr()
    assert store.days(root, "SEKA") == [datetime.date(2013, 1, 2), datetime.date(2013, 1, 3)]
    assert np.array_equal(
        store.read_day(root, "SEKA", "2013-01-02"), lobster_events(lobster, "2013-01-02")
    )


@needs_pyarrow
@needs_dbn
def test_convert_splits_a_databento_file_by_utc_date(tmp_path, capsys):
    from sekai.finance.lob.databento import read_dbn

    path = dbn_days(tmp_path)
    root = tmp_path / "store"
    assert run("convert", path, root) == 0
    assert [line.split(" ->")[0] for line in capsys.readouterr().out.splitlines()] == [
        "SEKA 2024-01-02: 2 events",
        "SEKA 2024-01-03: 1 events",
        "SEKA 2024-01-04: 2 events",
    ]
    events = read_dbn(path)
    got = [store.read_day(root, "SEKA", day) for day in store.days(root, "SEKA")]
    assert [len(day) for day in got] == [2, 1, 2]
    assert np.array_equal(np.concatenate(got), events)
    assert got[2]["kind"].tolist() == [ADD, CLEAR] and got[2]["side"][1] == NO_SIDE
    assert run("convert", path, tmp_path / "by-id", "--instrument-id", "7") == 0
    assert store.symbols(tmp_path / "by-id") == ["SEKA"]  # the symbology's name for 7


@needs_pyarrow
@needs_dbn
def test_convert_reads_databentos_own_file_by_its_symbol(tmp_path, capsys):
    from sekai.finance.lob.databento import read_dbn

    path = DBN_DATA / "test_data.mbo.v3.dbn.zst"
    assert run("convert", path, tmp_path, "--symbol", "ESH1") == 0
    capsys.readouterr()
    assert store.days(tmp_path, "ESH1") == [datetime.date(2020, 12, 28)]
    assert np.array_equal(store.read_day(tmp_path, "ESH1", "2020-12-28"), read_dbn(path))


@needs_pyarrow
def test_a_failed_convert_leaves_the_store_as_it_was(tmp_path, capsys):
    root = tmp_path / "store"
    first = lobster_file(tmp_path, seed=0)
    assert run("convert", first, root) == 0
    capsys.readouterr()
    before = {p: (root / p).read_bytes() for p in tree(root) if (root / p).is_file()}
    again = lobster_file(tmp_path, seed=1, name="SEKA_2012-06-22_0_0_message_5.csv")
    broken = tmp_path / "SEKA_2012-06-23_0_0_message_5.csv"
    broken.write_text("34200.0,1,1,100,1000000,1\n34199.0,3,1,100,1000000,1\n")
    message = usage_error(capsys, "convert", again, broken, root)
    assert message.endswith("SEKA_2012-06-23_0_0_message_5.csv line 2: time goes backwards")
    assert {p: (root / p).read_bytes() for p in tree(root) if (root / p).is_file()} == before
    assert tree(root) == [
        "symbol=SEKA",
        "symbol=SEKA/date=2012-06-21",
        "symbol=SEKA/date=2012-06-21/events.parquet",
    ]
    duplicate = lobster_file(tmp_path, seed=2, name="SEKA_2012-06-22_1_1_message_10.csv")
    assert "both hold SEKA on 2012-06-22" in usage_error(capsys, "convert", again, duplicate, root)
    assert len(tree(root)) == 3


@needs_pyarrow
@pytest.mark.parametrize(
    ("make", "extra", "problem"),
    [
        (lambda d: d / "nothing.dbn", [], "nothing.dbn: no such file"),
        (lambda d: "https://example.com/x.dbn", [], "not a local path"),
        (lambda d: d, [], "not a file"),
        (lambda d: write(d / "prices.json"), [], "prices.json: cannot tell the format"),
        (lambda d: write(d / "prices.csv"), [], "prices.csv: no symbol in the name"),
        (
            lambda d: itch_file(d),
            ["--symbol", "ABSENT"],
            "no stock 'ABSENT' in the file (its stock directory lists 3: NONE, OTHR, SEKA)",
        ),
        (lambda d: itch_file(d), ["--symbol", "NONE"], "no events of NONE in the file"),
        (lambda d: itch_file(d), [], "an ITCH file holds many stocks: name them with --symbol"),
        (lambda d: lobster_file(d), ["--symbol", "OTHR"], "a LOBSTER file of SEKA (by its name)"),
        (lambda d: lobster_file(d), ["--symbol", "no/slash"], "cannot name a store folder"),
        (lambda d: lobster_file(d), ["--date", "2012-6-1"], "date must be 'YYYY-MM-DD'"),
        (lambda d: lobster_file(d), ["--instrument-id", "7"], "--instrument-id chooses"),
        (
            lambda d: write(d / LOBSTER_NAME.replace("message", "orderbook")),
            [],
            "a LOBSTER orderbook file; convert its message file",
        ),
    ],
)
def test_a_bad_source_is_exit_code_2_with_one_line_and_nothing_written(
    tmp_path, capsys, make, extra, problem
):
    source = make(tmp_path)
    message = usage_error(capsys, "convert", source, tmp_path / "store", *extra)
    assert problem in message
    assert not (tmp_path / "store").exists()


@needs_pyarrow
@needs_dbn
def test_a_databento_symbol_not_in_the_file_or_a_date_is_refused(tmp_path, capsys):
    path = DBN_DATA / "test_data.mbo.v3.dbn.zst"
    assert "symbol 'ESZ9' is not in the file's symbology: ESH1" in usage_error(
        capsys, "convert", path, tmp_path / "store", "--symbol", "ESZ9"
    )
    assert "instrument 1 has no records" in usage_error(
        capsys, "convert", path, tmp_path / "store", "--instrument-id", "1"
    )
    assert "times carry their dates; drop --date" in usage_error(
        capsys, "convert", path, tmp_path / "store", "--date", "2020-12-28"
    )
    assert not (tmp_path / "store").exists()


# -- sekai data info ---------------------------------------------------------------------------
@needs_pyarrow
def test_info_describes_a_known_store_line_by_line(tmp_path, capsys):
    root = tmp_path / "store"
    june_22 = midnight("2012-06-22")
    store.write_events(root, "SEKA", events_at(midnight(JUNE_21) + 34_200 * 10**9, june_22 - 1))
    day_two = events_at(june_22 + 5, june_22 + 6, june_22 + 7, price=1_234_567)
    day_two["price"][1] = 99_999
    day_two[2] = (june_22 + 7, HALT, 0, NO_SIDE, -1, 0, 0)  # a halt's price is no price
    store.write_events(root, "SEKA", day_two)
    halts = empty(1)
    halts[0] = (june_22 + 9, HALT, 0, NO_SIDE, 1, 0, 0)
    store.write_events(root, "OTHR", halts)
    assert run("info", root) == 0
    assert capsys.readouterr().out.splitlines() == [
        "OTHR: 1 day, 1 events, 2012-06-22T00:00:00.000000009 to 2012-06-22T00:00:00.000000009,"
        " no prices",
        "  2012-06-22: 1 events, 2012-06-22T00:00:00.000000009 to 2012-06-22T00:00:00.000000009,"
        " no prices",
        "SEKA: 2 days, 5 events, 2012-06-21T09:30:00.000000000 to 2012-06-22T00:00:00.000000007,"
        " prices 9.9999 to 123.4567",
        "  2012-06-21: 2 events, 2012-06-21T09:30:00.000000000 to 2012-06-21T23:59:59.999999999,"
        " prices 100.0000 to 100.0000",
        "  2012-06-22: 3 events, 2012-06-22T00:00:00.000000005 to 2012-06-22T00:00:00.000000007,"
        " prices 9.9999 to 123.4567",
    ]
    assert run("info", root, "--symbol", "OTHR") == 0
    assert capsys.readouterr().out.startswith("OTHR: 1 day, 1 events")
    assert "no symbol ABSENT in the store (symbols: OTHR, SEKA)" in usage_error(
        capsys, "info", root, "--symbol", "ABSENT"
    )
    assert "a store; --instrument-id and --date are for single files" in usage_error(
        capsys, "info", root, "--date", "2012-06-21"
    )
    assert "not an event store" in usage_error(capsys, "info", tmp_path / "store" / "symbol=SEKA")


def test_info_describes_a_single_file_without_a_store(tmp_path, capsys):
    assert run("info", itch_file(tmp_path), "--symbol", "SEKA", "--symbol", "OTHR") == 0
    assert capsys.readouterr().out.splitlines() == [
        "OTHR: 1 day, 2 events, 2019-12-30T09:30:00.000000002 to 2019-12-30T09:30:00.000000005,"
        " prices 50.0000 to 50.2500",
        "  2019-12-30: 2 events, 2019-12-30T09:30:00.000000002 to 2019-12-30T09:30:00.000000005,"
        " prices 50.0000 to 50.2500",
        "SEKA: 1 day, 5 events, 2019-12-30T09:30:00.000000001 to 2019-12-30T09:30:00.000000007,"
        " prices 100.0000 to 100.1000",
        "  2019-12-30: 5 events, 2019-12-30T09:30:00.000000001 to 2019-12-30T09:30:00.000000007,"
        " prices 100.0000 to 100.1000",
    ]
    assert "no such file" in usage_error(capsys, "info", tmp_path / "absent.NASDAQ_ITCH50")


# -- the slim install --------------------------------------------------------------------------
@pytest.mark.absent("pyarrow")
def test_without_pyarrow_the_store_names_the_extra(tmp_path, capsys):
    day = events_at(midnight(JUNE_21) + 1)
    extra = r'needs pyarrow: pip install "sekai-finance\[parquet\]"'
    with pytest.raises(ModuleNotFoundError, match=extra):
        store.write_events(tmp_path, "SEKA", day)
    (tmp_path / "symbol=SEKA" / "date=2012-06-21").mkdir(parents=True)
    (tmp_path / "symbol=SEKA" / "date=2012-06-21" / "events.parquet").write_bytes(b"")
    assert store.days(tmp_path, "SEKA") == [JUNE_21]  # listing needs no pyarrow
    with pytest.raises(ModuleNotFoundError, match=extra):
        store.read_day(tmp_path, "SEKA", JUNE_21)
    message = usage_error(capsys, "convert", lobster_file(tmp_path), tmp_path / "new")
    assert 'pip install "sekai-finance[parquet]"' in message
    assert not (tmp_path / "new").exists()


@needs_pyarrow
def test_importing_the_store_or_building_the_command_line_imports_no_pyarrow():
    code = (
        "import sys, sekai.finance.lob.store\n"
        "from sekai.cli import _parser\n"
        "_parser()\n"
        "for heavy in ('pyarrow', 'databento_dbn', 'numba'):\n"
        "    assert heavy not in sys.modules, heavy + ' was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_sekai_data_without_an_action_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        run()
    assert exit_.value.code == 2
    assert "ACTION" in capsys.readouterr().err
