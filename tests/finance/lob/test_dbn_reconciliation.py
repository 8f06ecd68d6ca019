"""A Databento MBO day reconciled with its MBP-10 rows (issue 34): the synthetic day written as
MBO, and the MBP-10 file Databento would derive from it (``synthetic_formats.mbp10_records``),
replayed by ``ReplayDay`` and ``LobsterReplay-v0``. Rows are aligned to events by time
(``_replay_stream.rows_by_time``) and the book is checked at the last event of each
timestamp: there every level equals the row, with no reconciliation for the day's own rows,
and exactly where a row was altered, or where an MBO file that starts mid-day lacks the
volume resting before it."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from synthetic_formats import (
    DATE,
    SYMBOL,
    TICK,
    derive_mbp10,
    mbp10_records,
    read_dbn_records,
    top_levels_after_each,
    write_day,
    write_dbn_mbo,
    write_dbn_mbp10,
)

from sekai.envs.finance.lobster_replay import LobsterReplayEnv
from sekai.finance import BUY, SELL
from sekai.finance.lob._replay_day import ReplayDay, load_day
from sekai.finance.lob._replay_stream import rows_by_time
from sekai.finance.lob.events import LAST

pytestmark = pytest.mark.needs("databento-dbn")

DATA = Path(__file__).parent / "data" / "databento"
DEPTH = 10
F_LAST = int(LAST)


@functools.cache
def _day(folder: str) -> tuple[Any, Path, Path]:
    events, paths = write_day(folder, formats=("dbn",))
    return events, paths["dbn"], derive_mbp10(paths["dbn"], Path(folder) / "SEKA.mbp-10.dbn")


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    """The synthetic day's events, its MBO file and the MBP-10 file derived from it."""
    return _day(str(tmp_path_factory.mktemp("mbp10")))


def row_levels(row: Any, tick: int = TICK) -> np.ndarray:
    """A level row as the replay's top levels: (side BUY/SELL, level, tick/lots), tick -1 and
    0 lots where the row has no level."""
    out = np.zeros((2, DEPTH, 2), np.int64)
    for side, name in ((BUY, "bid"), (SELL, "ask")):
        sizes = row[f"{name}_size"]
        out[side, :, 0] = np.where(sizes > 0, row[f"{name}_price"] // tick, -1)
        out[side, :, 1] = sizes
    return out


def checked_events(events: Any, levels: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The events the replay checks against the rows, the row each is given and the index
    of its last replay message."""
    loaded = load_day(events, levels)
    stream = loaded.stream
    last_message = np.full(stream.n_events, -1)
    last_message[stream.source] = np.arange(len(stream))  # the last write wins
    checked = np.flatnonzero(loaded.checked)
    assert (last_message[checked] >= 0).all()  # every checked event has a message
    return checked, loaded.rows[checked], last_message[checked]


def assert_every_checked_event_shows_its_row(day_replay: ReplayDay, events, levels) -> int:
    """After every checked event, the replay's ten levels of each side are the row's; the
    number of events compared."""
    checked, rows, messages = checked_events(events, levels)
    for e, row, m in zip(checked, rows, messages, strict=True):
        got, want = day_replay.top[m + 1], row_levels(row)
        assert (got == want).all(), (int(e), got.tolist(), want.tolist())
    return len(checked)


def reconciled_at(day_replay: ReplayDay) -> list[int]:
    """The messages after which the replay corrected the book."""
    return np.flatnonzero(np.diff(day_replay.fix_starts)).tolist()


def packet_ends(levels: Any) -> np.ndarray:
    """The index of the last row of each time."""
    ends = np.ones(len(levels.time), bool)
    ends[:-1] = levels.time[1:] != levels.time[:-1]
    return np.flatnonzero(ends)


# -- the MBP-10 writer -------------------------------------------------------------------------
def test_the_derived_mbp10_records_follow_databentos_rule(day):
    """One record per MBO record that changes the top ten levels and per trade print, none per
    fill or deeper change; each with its MBO record's times and sequence; F_LAST on each
    packet's last; and after each packet the levels are an OrderBook's after its events."""
    import databento_dbn as dbn

    events, mbo_path, mbp_path = day
    mbo = read_dbn_records(mbo_path)
    mbp = read_dbn_records(mbp_path)
    assert all(isinstance(r, dbn.MBP10Msg) for r in mbp)
    by_sequence = {r.sequence: r for r in mbo}
    actions = [str(by_sequence[r.sequence].action) for r in mbp]
    assert "F" not in actions
    assert actions.count("T") == sum(str(r.action) == "T" for r in mbo)
    deep = sum(str(r.action) in "AC" for r in mbo) - sum(a in "AC" for a in actions)
    assert deep > 20  # adds and cancels past the tenth level: no record
    for record in mbp:
        source = by_sequence[record.sequence]
        assert (record.ts_event, record.ts_recv) == (source.ts_event, source.ts_recv)
        assert (record.price, record.size, str(record.side)) == (
            source.price,
            source.size,
            str(source.side),
        )
    times = [r.ts_event for r in mbp]
    last = [bool(r.flags & F_LAST) for r in mbp]
    assert last == [k + 1 == len(times) or times[k + 1] != times[k] for k in range(len(times))]
    # the levels after each packet: an OrderBook's after the packet's last event
    after, _ = top_levels_after_each(events, DEPTH)
    when = events["time"]
    ends = np.flatnonzero(np.append(when[1:] != when[:-1], True))
    by_time = {int(when[e]): after[e] for e in ends}
    compared = 0
    for record, end in zip(mbp, last, strict=True):
        if not end:
            continue
        bids, asks, _ = by_time[record.ts_event]
        shown = [
            [(lv.bid_px // 100_000 // TICK, lv.bid_sz) for lv in record.levels if lv.bid_sz],
            [(lv.ask_px // 100_000 // TICK, lv.ask_sz) for lv in record.levels if lv.ask_sz],
        ]
        counts = [lv.bid_ct for lv in record.levels if lv.bid_sz]
        assert shown == [list(bids), list(asks)]
        assert all(c >= 1 for c in counts)
        compared += 1
    assert compared > 1_500


def test_a_level_records_order_count_is_its_resting_orders():
    """Two orders at one price, one cancelled in part then in full: the counts 1, 2, 2, 1."""
    import databento_dbn as dbn

    def mbo(sequence: int, action: str, order_id: int, size: int) -> Any:
        return dbn.MBOMsg(
            2, 7, 1_000 + sequence, order_id, 10 * 10**9, size, dbn.Action.from_str(action),
            dbn.Side.from_str("B"), 2_000 + sequence, flags=F_LAST, sequence=sequence,
        )  # fmt: skip

    records = mbp10_records(
        [mbo(1, "A", 1, 5), mbo(2, "A", 2, 7), mbo(3, "C", 1, 2), mbo(4, "C", 1, 3)]
    )
    top = [(r.levels[0].bid_sz, r.levels[0].bid_ct) for r in records]
    assert top == [(5, 1), (12, 2), (10, 2), (7, 1)]
    assert records[-1].levels[1].bid_px == dbn.UNDEF_PRICE


# -- the day reconciled with its own rows ------------------------------------------------------
@pytest.mark.parametrize("by_path", [False, True])
def test_an_mbo_day_with_its_mbp10_rows_equals_every_row_without_reconciling(day, by_path):
    from sekai.finance.lob.databento import read_dbn, read_dbn_levels

    _, mbo_path, mbp_path = day
    events, levels = read_dbn(mbo_path), read_dbn_levels(mbp_path)
    if by_path:
        replay = ReplayDay(mbo_path, orderbook=mbp_path, levels=DEPTH)
    else:
        replay = ReplayDay(events, orderbook=levels, levels=DEPTH)
    assert replay.reconciliations == 0
    assert len(replay.fix_sides) == 0
    compared = assert_every_checked_event_shows_its_row(replay, events, levels)
    # every timestamp is checked once, at its last event
    assert compared == len(np.unique(events["time"])) > 1_500


def test_the_env_on_the_mbo_and_mbp10_files_shows_every_row(day):
    """LobsterReplay-v0 on both paths, an agent acting: after every step the ten levels the
    agent sees are the row of the last event replayed, and nothing was reconciled."""
    from sekai.finance.lob.databento import read_dbn, read_dbn_levels

    _, mbo_path, mbp_path = day
    env = LobsterReplayEnv(
        mbo_path, mbp_path, step_seconds=2.0, episode_steps=200, book_levels=DEPTH
    )
    assert env.terms.days[0].reconciliations == 0
    loaded = load_day(read_dbn(mbo_path), read_dbn_levels(mbp_path))
    env.reset(seed=1, options={"start": 0})
    rng, done, compared = np.random.default_rng(0), False, 0
    while not done:
        action = [int(rng.choice(np.flatnonzero(m))) for m in env.action_mask()]
        result = env.step(action)
        done = result.truncated
        k = result.info["message"]
        event = int(loaded.stream.source[k - 1])
        assert loaded.checked[event]
        want = row_levels(loaded.rows[event])
        view = env.model.view(0)
        for side, ticks, lots in (
            (BUY, view.bid_prices[0], view.bid_volumes[0]),
            (SELL, view.ask_prices[0], view.ask_volumes[0]),
        ):
            seen = [(int(t), int(v)) for t, v in zip(ticks, lots, strict=True) if v]
            shown = [(int(t), int(v)) for t, v in want[side] if v]
            assert seen == shown, (k, side)
        compared += 1
    assert compared == 200


# -- altered rows: reconciled exactly there ----------------------------------------------------
def _altered(day, tmp_path: Path, alter) -> tuple[Path, int]:
    """The day's MBP-10 file with one row altered by ``alter(levels)`` (a list of
    ``BidAskPair``, changed in place): the last row of a packet in the day's middle; the
    altered file's path and that row's index among the records."""
    _, _, mbp_path = day
    records = read_dbn_records(mbp_path)
    at = next(
        k
        for k in range(len(records) // 2, len(records))
        if records[k].flags & F_LAST and str(records[k].action) != "T"
    )
    levels = records[at].levels
    alter(levels)
    records[at].levels = levels
    return write_dbn_mbp10(records, tmp_path / "altered.mbp-10.dbn", SYMBOL, DATE), at


def _more_at_the_best_bid(levels: list[Any]) -> None:
    levels[0].bid_sz += 100


def _a_bid_level_missing(levels: list[Any]) -> None:  # the row shows nine bid levels
    import databento_dbn as dbn

    for k in range(2, DEPTH):  # the third level gone: the deeper ones move up
        nxt = levels[k + 1] if k + 1 < DEPTH else None
        levels[k].bid_px = nxt.bid_px if nxt else dbn.UNDEF_PRICE
        levels[k].bid_sz = nxt.bid_sz if nxt else 0
        levels[k].bid_ct = nxt.bid_ct if nxt else 0


@pytest.mark.parametrize(
    ("alter", "lots"), [(_more_at_the_best_bid, 100), (_a_bid_level_missing, None)]
)
def test_an_altered_row_is_reconciled_exactly_there(day, tmp_path, alter, lots):
    from sekai.finance.lob.databento import read_dbn, read_dbn_levels

    _, mbo_path, mbp_path = day
    true_levels = read_dbn_levels(mbp_path)
    path, at = _altered(day, tmp_path, alter)
    events, levels = read_dbn(mbo_path), read_dbn_levels(path)
    replay = ReplayDay(events, orderbook=levels, levels=DEPTH)
    assert replay.reconciliations >= 1
    checked, _, messages = checked_events(events, levels)
    altered_event = int(np.flatnonzero(events["time"] == levels.time[at])[-1])
    where = int(np.searchsorted(checked, altered_event))
    assert checked[where] == altered_event
    m = int(messages[where])
    # the first correction is after that event's last message, on the bid side only
    assert reconciled_at(replay)[0] == m
    fixes = slice(replay.fix_starts[m], replay.fix_starts[m + 1])
    assert set(replay.fix_sides[fixes].tolist()) == {BUY}
    true_row = row_levels(true_levels.rows[at])
    if lots is not None:  # 100 lots of legacy volume at the best bid
        assert replay.fix_ticks[fixes].tolist() == [true_row[BUY, 0, 0]]
        assert replay.fix_lots[fixes].tolist() == [lots]
        assert replay.fix_arrival[fixes].tolist() == [-1]
    else:
        # the third level's lots cancelled, newest orders first (their arrivals known); and,
        # as the row now shows nine bid levels (a side with no more, by the LOBSTER rule),
        # every bid past them too; none at a level the row shows
        ticks, cut = replay.fix_ticks[fixes], replay.fix_lots[fixes]
        assert (cut < 0).all() and (replay.fix_arrival[fixes] >= 0).all()
        assert cut[ticks == true_row[BUY, 2, 0]].sum() == -true_row[BUY, 2, 1]
        shown = row_levels(levels.rows[at])[BUY]
        assert not set(ticks.tolist()) & set(shown[shown[:, 1] > 0, 0].tolist())
        assert (ticks < shown[8, 0]).sum() > 0
    # the levels after that event are the altered row's, and the next check is reconciled back
    assert (replay.top[m + 1] == row_levels(levels.rows[at])).all()
    assert not (replay.top[m + 1] == true_row).all()
    assert reconciled_at(replay)[1] == messages[where + 1]
    assert assert_every_checked_event_shows_its_row(replay, events, levels) == len(checked)
    # the env runs on the altered file, with the same replay
    env = LobsterReplayEnv(mbo_path, path, episode_steps=50, book_levels=DEPTH)
    assert env.terms.days[0].reconciliations == replay.reconciliations
    env.reset(seed=0)
    for _ in range(50):
        result = env.step([0, 0, 0])
    assert result.truncated


# -- an MBO file that starts mid-day ---------------------------------------------------------
def test_an_mbo_file_starting_mid_day_takes_the_missing_volume_from_the_rows(day, tmp_path):
    """The MBO file without its opening packet (the book's first orders, no snapshot): the
    first check finds the rows' levels and no orders, and the volume comes in as legacy; the
    events that then cancel or execute those orders take it, and no check after needs a
    correction. Every checked event shows its row."""
    from sekai.finance.lob.databento import read_dbn, read_dbn_levels

    events, _, mbp_path = day
    first = int(np.argmax(events["time"] != events["time"][0]))  # after the opening packet
    assert first >= 40
    path = write_dbn_mbo(events[first:], tmp_path / "mid-day.mbo.dbn", SYMBOL, DATE)
    events, levels = read_dbn(path), read_dbn_levels(mbp_path)
    replay = ReplayDay(events, orderbook=levels, levels=DEPTH)
    checked, rows, messages = checked_events(events, levels)
    assert replay.reconciliations == 1
    assert reconciled_at(replay) == [messages[0]]
    fixes = slice(0, replay.fix_starts[-1])
    assert (replay.fix_arrival[fixes] == -1).all() and (replay.fix_lots[fixes] > 0).all()
    opening = row_levels(rows[0])
    fixed = zip(replay.fix_sides.tolist(), replay.fix_ticks.tolist(), strict=True)
    assert sorted(fixed) == sorted(
        (side, int(t)) for side in (BUY, SELL) for t, v in opening[side] if v
    )
    assert assert_every_checked_event_shows_its_row(replay, events, levels) == len(checked)
    env = LobsterReplayEnv(path, mbp_path, episode_steps=50, book_levels=DEPTH)
    assert env.terms.days[0].reconciliations == 1


# -- Databento's own test files ----------------------------------------------------------------
def test_the_real_mbp10_rows_align_to_the_real_mbo_events_by_time():
    """Databento's MBO test file holds two cancels, the first at the time of the first MBP-10
    row, the second before the second row: both get the first row and both are checked (each
    ends its timestamp). The MBP-1 file's rows all come later: no event is checked. Replayed
    from an empty book, the first check brings in the row's levels as legacy volume; the
    second cancel, past the tenth level, changes nothing the row shows."""
    from sekai.finance.lob.databento import read_dbn, read_dbn_levels

    events = read_dbn(DATA / "test_data.mbo.v3.dbn.zst")
    levels = read_dbn_levels(DATA / "test_data.mbp-10.v3.dbn.zst")
    assert events["time"][0] == levels.time[0] < events["time"][1] < levels.time[1]
    rows, checked = rows_by_time(events["time"], levels.time, levels.rows)
    assert checked.tolist() == [True, True]
    assert (rows == levels.rows[[0, 0]]).all()
    top = read_dbn_levels(DATA / "test_data.mbp-1.v3.dbn.zst")
    assert rows_by_time(events["time"], top.time, top.rows)[1].tolist() == [False, False]
    tick = 2_500  # a quarter point, in 1e-4 units
    replay = ReplayDay(events, orderbook=levels, tick=tick, levels=DEPTH)
    assert replay.reconciliations == 1
    for m in (0, 1):
        assert (replay.top[m + 1] == row_levels(levels.rows[0], tick)).all()
    assert set(replay.fix_arrival.tolist()) == {-1}
    assert replay.fix_lots.sum() == levels.rows[0]["bid_size"].sum() + (
        levels.rows[0]["ask_size"].sum()
    )


# -- a timestamp whose last event makes no replay message --------------------------------------
def test_a_timestamp_ending_in_a_modify_that_changes_nothing_is_still_checked():
    """A packet whose last record is a modify that changes nothing (no replay message): the
    book after the packet is still checked against its row. Here the row shows 100 lots more
    than the packet's orders; they come in as legacy volume after the packet's add, not one
    timestamp late."""
    from sekai.finance.lob.databento import DbnLevels
    from sekai.finance.lob.events import ADD, EVENT_DTYPE, MODIFY
    from sekai.finance.lob.lobster import orderbook_dtype

    t = 1_704_187_800_000_000_000
    events = np.array(
        [
            (t, ADD, 1, BUY, 100_000, 5, 0),
            (t, ADD, 2, SELL, 100_100, 5, 0),
            (t + 10, ADD, 3, BUY, 100_000, 7, 0),
            (t + 10, MODIFY, 3, BUY, 100_000, 7, 0),  # the same price and size: no message
            (t + 20, ADD, 4, SELL, 100_200, 1, 0),
        ],
        EVENT_DTYPE,
    )
    rows = np.zeros(3, orderbook_dtype(1))
    rows["bid_price"], rows["ask_price"] = 100_000, 100_100
    rows["bid_size"][:, 0], rows["ask_size"] = [5, 112, 112], 5
    levels = DbnLevels(np.array([t, t + 10, t + 20]), np.arange(3), rows)
    replay = ReplayDay(events, orderbook=levels, levels=1)
    # messages: the three adds before the modify, then the last add
    assert replay.top[1:, BUY, 0].tolist() == [[1000, 5], [1000, 5], [1000, 112], [1000, 112]]
    assert reconciled_at(replay) == [2]
    assert replay.fix_lots.tolist() == [100] and replay.fix_arrival.tolist() == [-1]
    assert replay.reconciliations == 1
