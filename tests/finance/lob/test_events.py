"""The event schema's checks: ``check_events`` names the first event that breaks a rule, and
the rule, however long the array and however it is laid out in memory."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.events import (
    ADD,
    CANCEL,
    CLEAR,
    CROSS,
    DELETE,
    EVENT_DTYPE,
    EXECUTE,
    HALT,
    HALTED,
    MODIFY,
    NO_SIDE,
    QUOTING,
    RESUMED,
    TRADE,
    check_events,
)

ON_BOOK = (ADD, CANCEL, DELETE, EXECUTE, TRADE, CROSS, MODIFY)


def good(n: int) -> np.ndarray:
    """``n`` well-formed events: adds, cancels, trades, modifies and halts in turn."""
    events = np.zeros(n, EVENT_DTYPE)
    events["time"] = np.arange(n) // 3  # equal times are in order
    events["kind"] = np.array([ADD, CANCEL, TRADE, MODIFY, HALT])[np.arange(n) % 5]
    events["side"] = np.where(events["kind"] == HALT, NO_SIDE, np.arange(n) % 2)
    events["price"] = np.where(events["kind"] == HALT, RESUMED, 1_000_000)
    events["size"] = np.where(events["kind"] == HALT, 0, 100)
    return events


def broken(event: dict[str, int]) -> str | None:
    """The rule one event breaks (the first of them), restated from the schema's docs."""
    kind, side, size, price = event["kind"], event["side"], event["size"], event["price"]
    on_book = kind in ON_BOOK
    if not ADD <= kind <= CLEAR:
        return "unknown event kind"
    if on_book and side not in (BUY, SELL):
        return "side must be BUY (0) or SELL (1)"
    if kind in (HALT, CLEAR) and side != NO_SIDE:
        return "a halt or clear has no side"
    if on_book and kind != MODIFY and size <= 0:
        return "size must be positive"
    if kind == MODIFY and size < 0:
        return "a modify's new size must not be negative"
    if kind in (ADD, CANCEL, DELETE, EXECUTE, MODIFY) and price <= 0:
        return "price must be positive"
    if kind == HALT and price not in (HALTED, QUOTING, RESUMED):
        return "a halt's price must be -1 (halted), 0 (quoting) or 1 (resumed)"
    return None


@pytest.mark.parametrize(
    ("change", "what"),
    [
        ({"kind": 0}, "unknown event kind"),
        ({"kind": CLEAR + 1}, "unknown event kind"),
        ({"kind": -3}, "unknown event kind"),
        ({"side": NO_SIDE}, r"side must be BUY \(0\) or SELL \(1\)"),
        ({"kind": HALT, "side": BUY, "price": HALTED}, "a halt or clear has no side"),
        ({"kind": CLEAR, "side": SELL}, "a halt or clear has no side"),
        ({"size": 0}, "size must be positive"),
        ({"kind": MODIFY, "size": -1}, "a modify's new size must not be negative"),
        ({"price": 0}, "price must be positive"),
        ({"kind": HALT, "side": NO_SIDE, "price": 2}, "a halt's price must be -1"),
        ({"time": -1}, "time goes backwards"),
    ],
)
def test_each_rule_names_the_event_that_breaks_it(change: dict[str, int], what: str) -> None:
    events = good(10)
    for name, value in change.items():
        events[name][6] = value
    with pytest.raises(ValueError, match=f"^day: event 6: {what}"):
        check_events(events, "day")


def test_what_the_rules_allow_passes() -> None:
    events = good(10)
    events[["kind", "side", "price", "size"]][[1, 2, 3, 4, 5]] = [
        (TRADE, SELL, -5, 1),  # a trade's and a cross's price is not checked
        (CROSS, BUY, 0, 1),
        (MODIFY, BUY, 1, 0),  # a modify may leave nothing
        (CLEAR, NO_SIDE, 0, 0),
        (HALT, NO_SIDE, HALTED, -7),  # a halt's size is not checked
    ]
    assert check_events(events) is events
    assert len(check_events(good(0))) == 0


def test_a_problem_is_found_anywhere_in_a_long_array() -> None:
    """Wherever the bad event is (every power of two, either side of it), in an array of
    hundreds of thousands of events, the first one is named."""
    events = good(300_000)
    for at in sorted({p + d for p in (2**k for k in range(19)) for d in (-1, 0, 1)} - {0}):
        late = events.copy()
        late["time"][at] = late["time"][at - 1] - 1
        with pytest.raises(ValueError, match=f"event {at}: time goes backwards"):
            check_events(late)
        late["time"][at] = events["time"][at]
        late[["kind", "side", "price", "size"]][[at, at + 7]] = (ADD, BUY, 1, 0)  # 0 shares
        with pytest.raises(ValueError, match=f"event {at}: size must be positive"):
            check_events(late)  # the first, not the later one
    assert check_events(events) is events


def test_a_strided_view_is_checked_as_its_own_events() -> None:
    events = good(200_001)
    view = events[::2]
    assert check_events(view) is view
    events["size"][2 * 70_001] = 0  # an add: event 70,001 of the view
    events["kind"][2 * 70_001] = ADD
    with pytest.raises(ValueError, match="event 70001: size must be positive"):
        check_events(view)


def test_random_arrays_are_refused_exactly_where_a_rule_breaks() -> None:
    """Fields drawn around every bound the rules draw: ``check_events`` passes an array iff
    no event breaks a rule, and otherwise names the first event that does and its rule."""
    rng = np.random.default_rng(0)
    for _ in range(3000):
        n = int(rng.integers(1, 7))
        events = np.zeros(n, EVENT_DTYPE)
        events["kind"] = rng.integers(-1, CLEAR + 2, n)
        events["side"] = rng.choice([BUY, SELL, NO_SIDE, 2], n, p=[0.3, 0.3, 0.3, 0.1])
        events["size"] = rng.choice([-1, 0, 1, 5], n, p=[0.05, 0.1, 0.7, 0.15])
        events["price"] = rng.choice([-2, HALTED, QUOTING, RESUMED, 2, 10**6], n)
        events["time"] = np.cumsum(rng.choice([-1, 0, 1, 2], n, p=[0.05, 0.3, 0.35, 0.3]))
        problems = [
            (k, broken(dict(zip(events.dtype.names, events[k].item(), strict=True))))
            for k in range(n)
        ]
        problems = [(k, what) for k, what in problems if what is not None]
        problems += [
            (k, "time goes backwards") for k in np.flatnonzero(np.diff(events["time"]) < 0) + 1
        ]
        if not problems:
            assert check_events(events) is events
            continue
        at, what = min(problems, key=lambda problem: problem[0])  # stable: a row's first rule
        with pytest.raises(ValueError) as raised:
            check_events(events)
        assert str(raised.value) == f"events: event {at}: {what}"
