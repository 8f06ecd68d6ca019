"""``replay_orders``: a schedule of orders on a replayed day in one compiled call fills exactly
what ``LobsterReplayEnv``'s replay market fills for the same instructions, step by step (quotes
in the FIFO queues, cancels, market orders walking the levels, latency, halts, the inventory
cap, fees, a day reconciled with its orderbook rows); the fills name the orders and messages
that made them; bad schedules are errors that say what is wrong."""

from __future__ import annotations

import functools
import re
import warnings

import numpy as np
import pytest
from lobster_days import generate_day, ship
from synthetic_formats import synthetic_day

from sekai.envs.finance.lobster_replay import LobsterReplayEnv
from sekai.finance import BUY, SELL
from sekai.finance.lob import CANCEL, FILL_DTYPE, MARKET, ORDER_DTYPE, QUOTE, replay_orders
from sekai.finance.lob._replay_windows import CANCEL_ORDER, KEEP_ORDER, NO_MARKET
from sekai.finance.lob.events import ADD, EVENT_DTYPE, EXECUTE, MODIFY

STEP = 1.0  # seconds a step


@functools.cache
def day(seed: int = 0) -> np.ndarray:
    return synthetic_day(seed, n_events=3_000)  # about ten minutes, with a halt


def drive_env(env, rng, steps, *, quote=0.45, cancel=0.1, market=0.15, lots=(1, 7), behind=(-2, 4)):
    """Step ``env``'s replay market ``steps`` steps with random instructions in absolute ticks
    (a quote ``behind`` ticks behind the best of the book the step starts on, some crossing
    (< 0); a cancel; a market
    order of random side and lots), both quotes cancelled at the last step. Returns the same
    instructions as ``ORDER_DTYPE`` rows at each step's time (bid, ask, then market order),
    each row's step, the env's fills as (step, side, price, lots, maker) and per step the
    messages it replayed and the instructions it refused."""
    model = env.unwrapped.model
    price, best = model._price, model.terms.days.best
    rows, row_steps, fills, spans, refused = [], [], [], [], []
    for j in range(steps):
        now, cursor = float(model.now()[0]), int(model.cursor[0])
        sides = [KEEP_ORDER, KEEP_ORDER]
        for side in (BUY, SELL):
            draw = rng.random()
            if j == steps - 1 or draw < cancel:
                sides[side] = CANCEL_ORDER
            elif draw < cancel + quote and best[cursor, side] >= 0:
                ticks = int(rng.integers(*behind))
                sides[side] = int(best[cursor, side]) + (-ticks if side == BUY else ticks)
        side = int(rng.integers(2)) if rng.random() < market and j < steps - 1 else NO_MARKET
        size = int(rng.integers(*lots))
        for s, value in ((BUY, sides[BUY]), (SELL, sides[SELL])):
            if value >= 0:
                rows.append((now, QUOTE, s, price[value], 0))
            elif value == CANCEL_ORDER:
                rows.append((now, CANCEL, s, np.nan, 0))
        if side != NO_MARKET:
            rows.append((now, MARKET, side, np.nan, size))
        row_steps += [j] * (len(rows) - len(row_steps))
        before = int(model.refused[0])
        model.advance(*(np.array([[v]]) for v in (sides[BUY], sides[SELL], side, size)))
        refused.append(int(model.refused[0]) - before)
        spans.append((cursor, int(model.cursor[0])))
        for _, s, tick, n, maker in model.fill_log(0):
            fills.append((j, int(s), float(price[tick]), int(n), bool(maker)))
    return np.array(rows, ORDER_DTYPE), np.array(row_steps), fills, spans, refused


def as_steps(fills, row_steps, spans):
    """``replay_orders``' fills as the env's rows: a market order's in its row's step, a
    maker's in the step that replayed its message."""
    starts = np.array([a for a, _ in spans])
    steps = np.where(
        fills["maker"],
        np.searchsorted(starts, fills["message"], "right") - 1,
        row_steps[fills["order"]],
    )
    return [
        (int(j), int(f["side"]), float(f["price"]), int(f["lots"]), bool(f["maker"]))
        for j, f in zip(steps, fills, strict=True)
    ]


def replay_quietly(*args, **kwargs):
    """``replay_orders`` and the number of refused rows its warning names (0: no warning)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fills = replay_orders(*args, **kwargs)
    said = [re.match(r"(\d+) orders reached a halted book", str(w.message)) for w in caught]
    assert all(said), [str(w.message) for w in caught]
    return fills, sum(int(m[1]) for m in said if m)


def check_rows(fills, orders, env, spans):
    """Every fill names the row that made it: a quote of its side and price, or a market
    order of its side, arrived before it; a maker's message is the replayed one of its time."""
    row = orders[fills["order"]]
    assert (row["side"] == fills["side"]).all()
    maker = fills["maker"]
    assert (row["kind"][maker] == QUOTE).all() and (row["kind"][~maker] == MARKET).all()
    np.testing.assert_array_equal(row["price"][maker], fills["price"][maker])
    assert (row["time"] <= fills["time"]).all()
    time = env.unwrapped.model.terms.days.time
    np.testing.assert_array_equal(time[fills["message"][maker]], fills["time"][maker])
    assert (np.diff(fills["time"]) >= 0).all()


@pytest.mark.parametrize(
    ("seed", "terms"),
    [
        (0, dict(order_size=1, max_inventory=10, entry_latency=0.0)),
        (1, dict(order_size=2, max_inventory=3, entry_latency=0.3)),
        (2, dict(order_size=5, max_inventory=8, entry_latency=0.75)),
    ],
)
def test_the_fills_are_the_envs_for_the_same_instructions(seed, terms):
    events = day(seed)
    env = LobsterReplayEnv(events, step_seconds=STEP, episode_steps=500, **terms)
    env.reset(seed=0, options={"start": 0})
    orders, row_steps, expected, spans, refused = drive_env(env, np.random.default_rng(seed), 500)
    fills, n_refused = replay_quietly(events, orders, **terms)
    assert fills.dtype == FILL_DTYPE
    assert as_steps(fills, row_steps, spans) == expected
    assert len(expected) >= 40 and 0 < (~fills["maker"]).sum() < len(fills)
    partial = fills["maker"] & (fills["lots"] < terms["order_size"])
    assert terms["order_size"] == 1 or partial.any()
    check_rows(fills, orders, env, spans)
    # the halt: the env refuses a step's instruction, replay_orders each quote or market order
    acting = np.bincount(row_steps[orders["kind"] != CANCEL], minlength=len(refused))
    assert sum(refused) > 0 and n_refused == (np.array(refused) * acting).sum()
    # the cap binds: the inventory reaches it and never passes it
    signed = np.where(fills["side"] == BUY, fills["lots"], -fills["lots"])
    inventory = np.cumsum(signed)
    assert np.abs(inventory).max() == terms["max_inventory"]
    assert inventory[-1] == env.unwrapped.model.inventory[0, 0]


def test_market_orders_walk_the_levels_as_the_envs_do():
    """Market orders of up to 5,000 lots walk the replayed book's top levels, best first, at
    their prices: lot for lot the env's."""
    events = day(3)
    terms = dict(max_inventory=10**6, order_size=3)
    env = LobsterReplayEnv(events, step_seconds=STEP, episode_steps=400, **terms)
    env.reset(seed=0, options={"start": 0})
    rng = np.random.default_rng(3)
    orders, row_steps, expected, spans, _ = drive_env(
        env, rng, 400, quote=0.2, market=0.3, lots=(1, 5_000)
    )
    fills, _ = replay_quietly(events, orders, **terms)
    assert as_steps(fills, row_steps, spans) == expected
    taker = fills[~fills["maker"]]
    walks = np.bincount(taker["order"])
    assert walks.max() >= 4  # one order took four levels or more
    for row in np.flatnonzero(walks >= 2):
        prices = taker["price"][taker["order"] == row]
        ascending = orders["side"][row] == BUY
        assert (np.diff(prices) > 0).all() if ascending else (np.diff(prices) < 0).all()


def test_fees_are_paid_per_lot_as_in_the_env():
    events = day(1)
    terms = dict(order_size=2, max_inventory=6, maker_fee=-0.0021, taker_fee=0.0035)
    env = LobsterReplayEnv(events, step_seconds=STEP, episode_steps=500, **terms)
    env.reset(seed=0, options={"start": 0})
    orders, row_steps, expected, spans, _ = drive_env(env, np.random.default_rng(5), 500)
    fills, _ = replay_quietly(events, orders, **terms)
    assert as_steps(fills, row_steps, spans) == expected
    maker = fills["maker"]
    np.testing.assert_array_equal(fills["fee"][maker], -0.0021 * fills["lots"][maker])
    np.testing.assert_array_equal(fills["fee"][~maker], 0.0035 * fills["lots"][~maker])
    model = env.unwrapped.model
    assert fills["fee"].sum() == pytest.approx(model.fees[0, 0], rel=1e-12)
    assert model.fees[0, 0] != 0 and maker.any() and (~maker).any()
    paid = np.where(fills["side"] == BUY, 1, -1) * fills["price"] * fills["lots"]
    cash = model.terms.market.initial_cash - paid.sum() - fills["fee"].sum()
    assert cash == pytest.approx(model.cash[0, 0], rel=1e-12)


def test_a_day_reconciled_with_its_orderbook_rows_fills_as_the_env():
    """A LOBSTER level-5 file (messages and orderbook rows, volume the file never showed):
    the corrections after each message move the agent's quotes as in the env."""
    shipped = ship(generate_day(seed=2), 5)
    terms = dict(orderbook=shipped.orderbook, order_size=4, max_inventory=20, entry_latency=0.1)
    env = LobsterReplayEnv(shipped.messages, step_seconds=5.0, episode_steps=150, **terms)
    assert env.terms.days[0].reconciliations > 0
    env.reset(seed=0, options={"start": 0})
    orders, row_steps, expected, spans, _ = drive_env(
        env, np.random.default_rng(2), 150, quote=0.6, market=0.05
    )
    fills, _ = replay_quietly(shipped.messages, orders, **terms)
    assert as_steps(fills, row_steps, spans) == expected
    assert fills["maker"].sum() >= 20


# -- hand-made days --------------------------------------------------------------------------
def events_of(rows):
    """Events from (seconds, kind, id, side, dollars, size) rows, on the day of the epoch."""
    return np.array(
        [(round(t * 1e9), k, i, s, round(p * 10_000), n, 0) for t, k, i, s, p, n in rows],
        EVENT_DTYPE,
    )


def orders_of(rows):
    return np.array(rows, ORDER_DTYPE)


OPENING = [
    (0.0, ADD, 1, BUY, 10.00, 100),
    (0.0, ADD, 2, SELL, 10.02, 100),
]


def test_a_quote_at_the_tick_it_rests_at_is_kept_with_its_place_and_its_row():
    events = events_of(
        [
            *OPENING,
            (1.5, ADD, 3, BUY, 10.00, 50),  # behind the first quote
            (3.0, EXECUTE, 1, BUY, 10.00, 100),
            (4.0, EXECUTE, 3, BUY, 10.00, 10),  # behind the agent: it trades first
        ]
    )
    orders = orders_of([(1.0, QUOTE, BUY, 10.00, 0), (2.0, QUOTE, BUY, 10.00, 0)])
    fills = replay_orders(events, orders, order_size=2)
    assert fills.tolist() == [(4.0, 4, BUY, 10.0, 2, True, 0.0, 0)]
    # cancelled and sent again, it joins behind order 3: nothing fills
    again = orders_of(
        [(1.0, QUOTE, BUY, 10.00, 0), (2.0, CANCEL, BUY, np.nan, 0), (2.0, QUOTE, BUY, 10.0, 0)]
    )
    assert len(replay_orders(events, again, order_size=2)) == 0


def test_a_quote_that_would_cross_is_dropped_and_takes_the_old_one_with_it():
    events = events_of([*OPENING, (3.0, ADD, 3, SELL, 10.01, 5)])  # crosses a bid at $10.01
    kept = orders_of([(1.0, QUOTE, BUY, 10.01, 0)])
    assert replay_orders(events, kept).tolist() == [(3.0, 2, BUY, 10.01, 1, True, 0.0, 0)]
    crossing = orders_of([(1.0, QUOTE, BUY, 10.01, 0), (2.0, QUOTE, BUY, 10.02, 0)])
    assert len(replay_orders(events, crossing)) == 0
    cancelled = orders_of([(1.0, QUOTE, BUY, 10.01, 0), (2.0, CANCEL, BUY, np.nan, 0)])
    assert len(replay_orders(events, cancelled)) == 0
    other_side = orders_of([(1.0, QUOTE, BUY, 10.01, 0), (2.0, CANCEL, SELL, np.nan, 0)])
    assert len(replay_orders(events, other_side)) == 1


def test_latency_decides_which_messages_an_order_reaches_the_book_after():
    events = events_of([*OPENING, (2.0, ADD, 3, SELL, 10.01, 5)])
    orders = orders_of([(1.0, QUOTE, BUY, 10.01, 0)])
    assert len(replay_orders(events, orders, entry_latency=0.999)) == 1
    assert len(replay_orders(events, orders, entry_latency=1.0)) == 0  # after the message
    market = orders_of([(1.0, MARKET, BUY, np.nan, 3)])
    assert replay_orders(events, market, entry_latency=0.5).tolist() == [
        (1.5, 2, BUY, 10.02, 3, False, 0.0, 0)
    ]
    late = replay_orders(events, market, entry_latency=1.5)  # the sell at $10.01 is first now
    assert late.tolist() == [(2.5, 3, BUY, 10.01, 3, False, 0.0, 0)]


def test_a_fill_names_the_row_of_the_callers_messages():
    """A modify to a new price is two replay messages (a delete and an add): a fill's
    ``message`` is still the row of the event that made it."""
    events = events_of(
        [
            *OPENING,
            (1.0, MODIFY, 2, SELL, 10.01, 100),  # to $10.01
            (3.0, EXECUTE, 2, SELL, 10.01, 100),  # ahead of the agent's ask
            (4.0, ADD, 3, BUY, 10.01, 7),  # a bid at the agent's ask: it crosses it
        ]
    )
    orders = orders_of([(2.0, QUOTE, SELL, 10.01, 0), (5.0, MARKET, SELL, np.nan, 1)])
    assert replay_orders(events, orders, order_size=3).tolist() == [
        (4.0, 4, SELL, 10.01, 3, True, 0.0, 0),
        (5.0, 5, SELL, 10.01, 1, False, 0.0, 1),  # after the last event: the end
    ]


def test_an_empty_schedule_fills_nothing():
    fills = replay_orders(day(), np.zeros(0, ORDER_DTYPE))
    assert fills.dtype == FILL_DTYPE and len(fills) == 0


# -- bad input -------------------------------------------------------------------------------
def test_bad_schedules_are_errors_naming_the_row_and_the_problem():
    t = (int(day()["time"][0]) % 86_400_000_000_000) / 1e9 + 10
    good = [(t, QUOTE, BUY, 10.00, 0), (t + 1, MARKET, SELL, np.nan, 2)]
    replay_orders(day(), orders_of(good))
    cases = {
        "row 2: time .* goes back \\(row 1 is at": [*good, (t, CANCEL, BUY, 0.0, 0)],
        "row 1: kind 7 is none of QUOTE \\(0\\), CANCEL \\(2\\), MARKET \\(1\\)": [
            good[0],
            (t + 1, 7, BUY, 10.0, 0),
        ],
        "row 1: side 3 is neither BUY": [good[0], (t + 1, QUOTE, 3, 10.0, 0)],
        "row 1: a market order's lots must be at least 1, got -2": [
            good[0],
            (t + 1, MARKET, BUY, np.nan, -2),
        ],
        "row 0: time nan is not a finite number": [(np.nan, QUOTE, BUY, 10.0, 0)],
        "row 1: price 10.005 is between two ticks of the grid": [
            good[0],
            (t + 1, QUOTE, SELL, 10.005, 0),
        ],
        "row 0: price 99.0 is outside the grid": [(t, QUOTE, SELL, 99.0, 0)],
        "row 0: price -0.01 is outside the grid": [(t, QUOTE, BUY, -0.01, 0)],
    }
    for message, rows in cases.items():
        with pytest.raises(ValueError, match=message):
            replay_orders(day(), orders_of(rows))
    with pytest.raises(ValueError, match="entry_latency must be a finite number of at least 0"):
        replay_orders(day(), orders_of(good), entry_latency=-0.1)
    with pytest.raises(ValueError, match="order_size must be"):
        replay_orders(day(), orders_of(good), order_size=0)


def test_a_schedule_of_the_wrong_type_is_a_type_error_naming_it():
    rows = [(1.0, QUOTE, BUY, 10.0, 0)]
    with pytest.raises(TypeError, match="structured array of ORDER_DTYPE, got <class 'list'>"):
        replay_orders(day(), rows)
    missing = np.zeros(1, [("time", float), ("kind", int), ("side", int), ("price", float)])
    with pytest.raises(TypeError, match="1-d array of ORDER_DTYPE"):
        replay_orders(day(), missing)
    floats = np.zeros(1, [(n, float) for n in ORDER_DTYPE.names])
    with pytest.raises(TypeError, match=r"orders\['kind'\] must be of int8, got float64"):
        replay_orders(day(), floats)
    with pytest.raises(TypeError, match="1-d array"):
        replay_orders(day(), orders_of(rows * 2).reshape(1, 2))
    with pytest.raises(TypeError, match="one day at a time"):
        replay_orders([day(), day()], orders_of(rows))
    # another int width or field order is fine: the values are what count
    names = ["price", "side", "kind", "lots", "time"]
    wide = np.zeros(1, [(n, ORDER_DTYPE[n] if n != "kind" else np.int64) for n in names])
    assert len(replay_orders(day(), wide)) == 0
    wide["kind"] = 256  # checked before it is narrowed to int8 (where it would be 0)
    with pytest.raises(ValueError, match="row 0: kind 256 is none of"):
        replay_orders(day(), wide)


def test_refused_orders_are_named_in_a_warning():
    """An order reaching the halted book is refused (a cancel is not): the warning names it."""
    events = day()
    halts = np.flatnonzero(events["kind"] == 7)
    halted_at = (int(events["time"][halts[0]]) % 86_400_000_000_000) / 1e9 + 0.001
    orders = orders_of(
        [
            (halted_at, QUOTE, BUY, 9.0, 0),
            (halted_at, CANCEL, BUY, np.nan, 0),
            (halted_at, MARKET, BUY, np.nan, 1),
        ]
    )
    refusal = r"^2 orders reached a halted book and were refused: rows 0, 2$"
    with pytest.warns(UserWarning, match=refusal):
        assert len(replay_orders(events, orders)) == 0
