"""Any supported file by its name (``lob.files``), and the replay env reading each format's path."""

from __future__ import annotations

from pathlib import Path

import itch_messages as itch
import numpy as np
import pytest

from sekai.envs.finance.lobster_replay import LobsterReplayEnv
from sekai.finance.lob import events as ev
from sekai.finance.lob.files import format_of, read_events
from sekai.finance.lob.itch import read_itch
from sekai.finance.lob.lobster import MESSAGE_DTYPE, SUBMIT, to_events, write_messages

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("xnas-itch-20231201.mbo.dbn.zst", "dbn"),
        ("test_data.mbo.dbn", "dbn"),
        ("12302019.NASDAQ_ITCH50.gz", "itch"),
        ("01302019.NASDAQ_ITCH50", "itch"),
        ("AAPL_2012-06-21_34200000_57600000_message_10.csv", "lobster"),
        ("AAPL_2012-06-21_34200000_57600000_message_10.csv.gz", "lobster"),
    ],
)
def test_the_format_is_told_by_the_name(name: str, expected: str) -> None:
    assert format_of(name) == expected


def test_a_name_of_no_known_format_is_refused_with_the_names_known() -> None:
    with pytest.raises(ValueError, match=r"day\.parquet: cannot tell the format.*\*\.dbn"):
        format_of("day.parquet")


def _itch_day(folder: Path) -> Path:
    """An ITCH file of two stocks: SEKA quotes and trades for ten minutes, OTHR adds once."""
    clock = 34_200 * 10**9
    messages = [itch.system_event(clock, "O"), itch.directory(1, "SEKA"), itch.directory(2, "OTHR")]
    messages.append(itch.add(2, clock, 999, "B", 100, "OTHR", 50_0000))
    ref = 1
    for second in range(600):
        at = clock + second * 10**9
        messages.append(itch.add(1, at, ref, "B", 100, "SEKA", 99_9900 - (second % 3) * 100))
        messages.append(itch.add(1, at + 1, ref + 1, "S", 100, "SEKA", 100_0100))
        messages.append(itch.executed(1, at + 2, ref, 40, second))
        messages.append(itch.delete(1, at + 3, ref + 1))
        ref += 2
    path = folder / "12302019.NASDAQ_ITCH50"
    path.write_bytes(itch.frame(messages))
    return path


def test_an_itch_path_replays_one_stock_in_the_env(tmp_path: Path) -> None:
    path = _itch_day(tmp_path)
    events = read_events(path, symbol="SEKA")
    assert np.array_equal(events, read_itch(path, "SEKA"))
    assert events["time"][0] == ev.midnight("2019-12-30") + 34_200 * 10**9
    env = LobsterReplayEnv(path, symbol="SEKA", step_seconds=1.0, episode_steps=60)
    from_events = LobsterReplayEnv(events, step_seconds=1.0, episode_steps=60)
    observation, info = env.reset(seed=3)
    expected, _ = from_events.reset(seed=3)
    assert np.array_equal(observation, expected) and info["day"] == 0
    assert env.terms.days.n_ticks == from_events.terms.days.n_ticks
    with pytest.raises(ValueError, match="an ITCH file holds every stock: give symbol="):
        LobsterReplayEnv(path, step_seconds=1.0, episode_steps=60)


def test_a_lobster_path_is_dated_by_its_name_and_checked_against_the_symbol(tmp_path) -> None:
    messages = np.array(
        [(34_200.5, SUBMIT, 1, 10, 1_000_000, 1), (34_201.25, SUBMIT, 2, 10, 1_000_100, -1)],
        MESSAGE_DTYPE,
    )
    path = tmp_path / "SEKA_2024-03-01_34200000_57600000_message_1.csv"
    write_messages(path, messages)
    events = read_events(path)
    assert np.array_equal(events, to_events(messages, date="2024-03-01"))
    assert np.array_equal(read_events(path, symbol="SEKA"), events)
    with pytest.raises(ValueError, match="a LOBSTER file of SEKA, not of symbol 'AAPL'"):
        read_events(path, symbol="AAPL")


@pytest.mark.needs("databento-dbn")
def test_a_dbn_path_reads_through_read_dbn_and_takes_no_date() -> None:
    from sekai.finance.lob.databento import read_dbn

    path = DATA / "databento" / "test_data.mbo.v3.dbn.zst"
    assert np.array_equal(read_events(path), read_dbn(path))
    with pytest.raises(ValueError, match="a DBN file's times are dated already"):
        read_events(path, date="2020-12-28")
