"""The same synthetic day written as LOBSTER, as NASDAQ ITCH 5.0 and as Databento DBN MBO reads
back, through sekai's three readers, as the same order events (up to the documented
differences of DBN) and gives the same books after every event (issue 34)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from synthetic_formats import (
    DATE,
    FIRST_ID,
    N_TICKS,
    RECV_DELAY,
    SYMBOL,
    TICK,
    as_read,
    features,
    first_difference,
    read_back,
    synthetic_day,
    top_levels_after_each,
    write_day,
    write_dbn_mbo,
    write_itch,
    write_lobster,
)

from sekai.finance.lob.events import (
    ADD,
    CANCEL,
    DAY,
    DELETE,
    EVENT_DTYPE,
    HALT,
    LAST,
    MODIFY,
    midnight,
)
from sekai.finance.lob.lobster import date_of

needs_dbn = pytest.mark.needs("databento-dbn")


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Path]]:
    """The day and its three files (LOBSTER and ITCH only where databento-dbn is missing)."""
    folder = tmp_path_factory.mktemp("day")
    try:
        import databento_dbn  # noqa: F401
    except ModuleNotFoundError:
        return write_day(folder, formats=("lobster", "itch"))
    return write_day(folder)


def test_the_day_holds_every_event_the_comparison_is_about(day):
    events, _ = day
    held = features(events)
    assert all(count > 0 for count in held.values()), held
    assert held["halt states"] == 3  # halted, quoting, resumed
    assert held["replaces"] >= 10 and held["partial executions"] >= 10
    assert 2_000 <= len(events) <= 10_000
    on_book = events["kind"] != HALT
    assert (events["price"][on_book] % TICK == 0).all()  # a cent grid
    assert (events["price"][on_book] // TICK < N_TICKS).all()
    assert events["order_id"].max() > 2**32 and events["order_id"][0] == FIRST_ID
    assert ((events["time"] >= midnight(DATE)) & (events["time"] < midnight(DATE) + DAY)).all()
    # the day replays on a full-depth book, by order id, without a refusal
    top_levels_after_each(events)


# -- each format read back -------------------------------------------------------------------
def test_the_lobster_file_reads_back_as_the_day(day):
    events, paths = day
    assert date_of(paths["lobster"]) == DATE
    assert paths["lobster"].name.startswith(f"{SYMBOL}_{DATE.isoformat()}_34200000_")
    assert first_difference(read_back("lobster", paths["lobster"]), events) is None


def test_the_itch_file_reads_back_as_the_day(day):
    events, paths = day
    assert first_difference(read_back("itch", paths["itch"]), events) is None


def test_the_itch_file_holds_every_message_type_the_day_needs(day):
    _, paths = day
    assert _itch_types(paths["itch"].read_bytes()) == set("SRAFECXDUPH")


@needs_dbn
def test_the_dbn_file_reads_back_as_the_day_by_the_documented_rules(day):
    """MBO has no halts, reads every delete as a cancel of the rest, and marks the last
    event of each time (a venue packet) ``LAST``: nothing else differs."""
    events, paths = day
    read = read_back("dbn", paths["dbn"])
    assert first_difference(read, as_read("dbn", events)) is None
    kept = events[events["kind"] != HALT]
    assert (read["kind"] != kept["kind"]).sum() == (kept["kind"] == DELETE).sum() > 0
    assert (read["kind"][kept["kind"] == DELETE] == CANCEL).all()
    same_time = np.zeros(len(read), bool)
    same_time[:-1] = read["time"][1:] == read["time"][:-1]
    assert (read["flags"] == np.where(same_time, 0, LAST)).all() and same_time.any()


@needs_dbn
def test_the_dbn_file_holds_databentos_records_for_each_event(day):
    """Read by databento-dbn's own decoder: a trade print 'T', a fill 'F' and a cancel 'C' per
    execution, a 'T' and an 'F' per hidden trade, an 'A' per add, a 'C' per cancel and
    delete."""
    import databento_dbn as dbn

    events, paths = day
    decoder = dbn.DBNDecoder()
    decoder.write(paths["dbn"].read_bytes())
    records = decoder.decode()[1:]
    actions = [str(r.action) for r in records]
    count = {kind: int((events["kind"] == kind).sum()) for kind in range(1, 8)}
    assert actions.count("T") == count[4] + count[5]
    assert actions.count("F") == count[4] + count[5]
    assert actions.count("C") == count[2] + count[3] + count[4]
    assert actions.count("A") == count[1]
    assert {r.instrument_id for r in records} == {7}
    assert all(r.ts_recv == r.ts_event + RECV_DELAY for r in records)


@pytest.mark.parametrize("fmt", ["lobster", "itch", pytest.param("dbn", marks=needs_dbn)])
def test_compressed_files_read_back_the_same(fmt, tmp_path):
    events, paths = write_day(tmp_path, n_events=800, formats=(fmt,), compressed=True)
    assert paths[fmt].suffix == (".zst" if fmt == "dbn" else ".gz")
    assert first_difference(read_back(fmt, paths[fmt]), as_read(fmt, events)) is None


@pytest.mark.parametrize("fmt", ["lobster", "itch", pytest.param("dbn", marks=needs_dbn)])
def test_times_survive_to_the_nanosecond(fmt, tmp_path):
    """LOBSTER's nine decimals of seconds (read through a float64), ITCH's six bytes of
    nanoseconds since midnight and DBN's nanoseconds since the epoch all keep every
    nanosecond of a day, from its first to its last (less DBN's receive delay, whose
    ``ts_recv`` must stay on the day for its symbology)."""
    rng = np.random.default_rng(1)
    last = DAY - RECV_DELAY - 1
    clocks = np.unique(np.concatenate([[0, 1, 999_999_999, last], rng.integers(0, last, 500)]))
    events = np.zeros(len(clocks), EVENT_DTYPE)
    events["time"] = midnight(DATE) + clocks
    events["kind"] = ADD
    events["order_id"] = FIRST_ID + np.arange(len(clocks))
    events["price"] = (900 - np.arange(len(clocks)) % 100) * TICK  # bids: nothing crosses
    events["size"] = 1 + np.arange(len(clocks)) % 7
    path = _write(fmt, events, tmp_path)
    assert first_difference(read_back(fmt, path), as_read(fmt, events)) is None


# -- the books -------------------------------------------------------------------------------
def test_lobster_and_itch_give_the_same_books_after_every_event(day):
    events, paths = day
    truth, truth_book = top_levels_after_each(events)
    for fmt in ("lobster", "itch"):
        after, book = top_levels_after_each(read_back(fmt, paths[fmt]))
        assert len(after) == len(truth), fmt
        mismatch = next(
            (k for k, (a, b) in enumerate(zip(after, truth, strict=True)) if a != b), None
        )
        assert mismatch is None, (fmt, mismatch, after[mismatch], truth[mismatch])
        assert book.trades == truth_book.trades
    assert any(halted for *_, halted in truth)  # the halt is part of what is compared


@needs_dbn
def test_dbn_gives_the_same_books_after_every_event(day):
    """After each DBN event, the book is the one after the same event of the day (DBN lacks
    only the halts, which change no level); the tapes are the same."""
    events, paths = day
    truth, truth_book = top_levels_after_each(events)
    levels = [depth[:2] for depth, kind in zip(truth, events["kind"], strict=True) if kind != HALT]
    after, book = top_levels_after_each(read_back("dbn", paths["dbn"]))
    assert len(after) == len(levels)
    mismatch = next(
        (k for k, (a, b) in enumerate(zip(after, levels, strict=True)) if a[:2] != b), None
    )
    assert mismatch is None, (mismatch, after[mismatch], levels[mismatch])
    assert book.trades == truth_book.trades and len(book.trades) > 0


# -- what the writers refuse -----------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["lobster", "itch", pytest.param("dbn", marks=needs_dbn)])
def test_the_writers_refuse_what_not_all_formats_carry(fmt, tmp_path):
    events = synthetic_day(n_events=50)
    events[-1]["kind"] = MODIFY
    with pytest.raises(ValueError, match=r"a 'modify' event; the .* writer takes only"):
        _write(fmt, events, tmp_path)


def test_the_itch_writer_refuses_a_delete_not_of_what_the_order_has_left(tmp_path):
    events = synthetic_day(n_events=300)
    at = int(np.flatnonzero(events["kind"] == DELETE)[0])
    events[at]["size"] += 1
    with pytest.raises(ValueError, match=rf"event {at}: a delete of .* which has .* left"):
        write_itch(events, tmp_path / "day.NASDAQ_ITCH50", SYMBOL)


# -- helpers ---------------------------------------------------------------------------------
def _write(fmt: str, events: Any, folder: Path) -> Path:
    if fmt == "lobster":
        return write_lobster(events, folder, SYMBOL, DATE)
    if fmt == "itch":
        return write_itch(events, folder / f"{DATE:%m%d%Y}.NASDAQ_ITCH50", SYMBOL)
    return write_dbn_mbo(events, folder / "day.mbo.dbn", SYMBOL, DATE)


def _itch_types(data: bytes) -> set[str]:
    """The message types of an ITCH file, following its length prefixes."""
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    types, at = set(), 0
    while at < len(data):
        length = int.from_bytes(data[at : at + 2], "big")
        types.add(chr(data[at + 2]))
        at += 2 + length
    return types


SHIPPED = Path(__file__).parent / "data" / "synthetic"


@pytest.mark.parametrize("fmt", ["lobster", "itch", pytest.param("dbn", marks=needs_dbn)])
def test_the_shipped_files_are_the_day_of_seed_0(fmt):
    """The files the docs' examples replay are ``write_day(seed=0, compressed=True)``'s."""
    names = {
        "lobster": "SEKA_*_message_10.csv.gz",
        "itch": "*.NASDAQ_ITCH50.gz",
        "dbn": "*.dbn.zst",
    }
    (path,) = SHIPPED.glob(names[fmt])
    assert first_difference(read_back(fmt, path), as_read(fmt, synthetic_day(0))) is None
