"""LOBSTER as one reader of the order-event schema: ``lobster.to_events`` keeps every
message's kind, id, size and price, turns the direction into a side and the seconds after
midnight into nanoseconds since the epoch, and refuses what ``read_messages`` refuses."""

from __future__ import annotations

import datetime

import numpy as np
import pytest
from lobster_days import generate_day, ship, write_day

from sekai.finance.lob import events as ev
from sekai.finance.lobster import (
    HALT,
    MESSAGE_DTYPE,
    SUBMIT,
    date_of,
    read_messages,
    to_events,
)


def test_a_written_day_reads_into_events_message_for_message(tmp_path):
    messages_path, _ = write_day(tmp_path, ship(generate_day(seed=0), 10))
    messages = read_messages(messages_path)
    events = to_events(messages, date="2012-06-21")
    assert len(events) == len(messages)
    np.testing.assert_array_equal(events["kind"], messages["type"])
    np.testing.assert_array_equal(events["order_id"], messages["order_id"])
    np.testing.assert_array_equal(events["size"], messages["size"])
    np.testing.assert_array_equal(events["price"], messages["price"])
    book = events["kind"] != HALT
    np.testing.assert_array_equal(
        events["side"][book], np.where(messages["direction"][book] == 1, ev.BUY, ev.SELL)
    )
    midnight = np.datetime64("2012-06-21T00:00:00", "ns").astype(np.int64)
    seconds = (events["time"] - midnight) / ev.NANOSECONDS
    np.testing.assert_array_equal(seconds, messages["time"])  # exact: ns keep all 9 decimals


def test_time_is_nanoseconds_and_a_halt_has_no_side():
    messages = np.array(
        [(34200.000000001, SUBMIT, 1, 100, 1000000, -1), (34200.5, HALT, 0, 0, -1, 1)],
        MESSAGE_DTYPE,
    )
    events = to_events(messages, date=datetime.date(2012, 6, 21))
    day = (datetime.date(2012, 6, 21) - datetime.date(1970, 1, 1)).days * ev.DAY
    assert events["time"].tolist() == [day + 34_200_000_000_001, day + 34_200_500_000_000]
    assert events["side"].tolist() == [ev.SELL, ev.NO_SIDE]
    assert events["price"].tolist() == [1000000, ev.HALTED]
    assert to_events(messages)["time"][0] == 34_200_000_000_001  # no date: from 1970-01-01


def test_the_file_name_gives_the_date():
    assert date_of("AAPL_2012-06-21_34200000_57600000_message_10.csv") == datetime.date(2012, 6, 21)
    assert date_of("day_message.csv") is None


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"type": 9}, "message 2: type is not one of 1 to 7"),
        ({"direction": 0}, "message 2: direction is not 1 or -1"),
        ({"time": 1.0}, "message 2: time goes backwards"),
    ],
)
def test_a_bad_message_is_refused_naming_it(change, problem):
    messages = np.array(
        [(2.0, SUBMIT, 1, 100, 1000000, 1), (3.0, SUBMIT, 2, 100, 1000100, -1)], MESSAGE_DTYPE
    )
    for name, value in change.items():
        messages[name][1] = value
    with pytest.raises(ValueError, match=problem):
        to_events(messages)


def test_a_bad_date_is_refused():
    messages = np.array([(2.0, SUBMIT, 1, 100, 1000000, 1)], MESSAGE_DTYPE)
    with pytest.raises(ValueError, match="date must be 'YYYY-MM-DD', got '21/06/2012'"):
        to_events(messages, date="21/06/2012")
    with pytest.raises(TypeError, match="MESSAGE_DTYPE"):
        to_events(np.zeros(2))
