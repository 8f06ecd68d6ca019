"""hftbacktest (2.4, its L3 FIFO queue model) as an outside oracle for LobsterReplay-v0's
fills, order by order (issue 35, point 1).

One synthetic day of order events (``synthetic_formats.synthetic_day``: adds, partial cancels,
deletes, FIFO executions in sweeps, hidden executions, a halt) is replayed by sekai's
``replay_orders`` (the whole day in one compiled call through the kernel functions
LobsterReplay-v0 steps, each fill with the message that made it), and by
hftbacktest's ``HashMapMarketDepthBacktest`` with ``l3_fifo_queue_model()`` and its only L3
exchange, ``no_partial_fill_exchange()``, on the day converted to its L3 feed
(``hftbacktest_events.to_hftbacktest``). The same agent sends the same post-only (GTX) limit
orders to both: more than 200 a day, at random whole seconds, sides and prices (one tick better
than the best it sees, at it, or one or two ticks behind), each cancelled 1 to 10 s later, with a
constant entry latency (300 ms) and feed latency (200 ms: the agent prices its orders on the book of
200 ms ago, and hftbacktest's strategy sees that same book). Every order's fills (exchange time,
price, lots) are compared.

The rules that differ by design, each counted (``oracle_harness.differences``):

- **inside the spread**: an order one tick better than the best (alone at its price) and an
  execution at the old best, a worse price: sekai fills it (a marketable order meets the better
  price first); hftbacktest's trade-through rule fills only the orders between the executed price
  and the book's best, which does not count backtest orders, so it fills it later, when an order
  crosses it, or never.
- **sweep through its level**: a market order that empties the agent's level and goes on to a
  worse price. sekai fills the agent at the worse execution. hftbacktest compares that price
  with the book's best after the emptied level was deleted (a feed gives an execution and then
  the removal of the executed lots, order by order), so it misses it as above. Converted with
  ``sweeps_first=True`` (a sweep's fills before its removals) it fills it, and the rule explains
  nothing.
- **no partial fills**: hftbacktest's L3 exchange fills a whole order at its first fill (its
  partial-fill exchange has no L3 form); sekai fills it by the executed lots. The orders here are
  of 1 lot, except in the test of this rule.
- **hidden execution**: an execution of hidden volume (no order id) at a worse price than the
  agent's fills it in sekai; hftbacktest's L3 exchange does not match backtest orders against
  trades.

Rules that make no difference on this day, by its making: legacy volume (the day opens with
adds, so no volume is unannounced; hftbacktest's L3 book knows only orders by id), the step grid
(the agent decides on whole seconds in both; the env's per-step fills are those of the kernel,
``test_the_env_makes_the_fills_the_comparison_checks``), crossing by new orders (the day has no
locked or crossed adds), and halts (hftbacktest has no trading states: no order is sent to reach
the book during the halt, which sekai would refuse).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "finance" / "lob"))  # synthetic_formats

from hftbacktest_events import to_hftbacktest
from oracle_harness import (
    differences,
    env_actions,
    hftbacktest_fills,
    make_terms,
    random_schedule,
    sekai_fills,
)
from synthetic_formats import synthetic_day

ENTRY, RESPONSE, FEED = 300_000_000, 300_000_000, 200_000_000  # ns
STEP = 1_000_000_000
# per day (seed): orders whose fills agree, and those each rule explains; 0 unexplained
EXPECTED = {
    0: {"agree": 488, "inside the spread": 14, "hidden execution": 1},
    1: {"agree": 466, "inside the spread": 13, "hidden execution": 2},
}


def _compare(seed: int, order_size: int, *, sweeps_first: bool) -> tuple[dict, int, int]:
    events = synthetic_day(seed, n_events=10_000)
    terms = make_terms(events, order_size)
    rng = np.random.default_rng(seed)
    schedule = random_schedule(
        events, terms, rng, step=STEP, entry_latency=ENTRY, feed_latency=FEED
    )
    ours, made = sekai_fills(events, terms, schedule, ENTRY)
    data = to_hftbacktest(events, FEED, sweeps_first=sweeps_first)
    theirs, seen = hftbacktest_fills(
        data, schedule, entry_latency=ENTRY, response_latency=RESPONSE, order_size=order_size
    )
    # both saw the same book when they priced the orders (-1: an empty side, in sekai)
    np.testing.assert_array_equal(np.where(seen < -(2**62), -1, seen), schedule.seen)
    found = differences(terms, schedule, ours, made, theirs, order_size)
    counts = {why: len(orders) for why, orders in found.items()}
    counts["agree"] = sum(ours[o] == theirs[o] for o in ours)
    filled = sum(bool(f) for f in ours.values())
    return counts, len(ours), filled


@pytest.mark.parametrize("seed", [0, 1])
def test_every_order_fills_as_in_hftbacktest_l3_fifo(seed):
    counts, orders, filled = _compare(seed, 1, sweeps_first=True)
    assert orders >= 200 and filled >= 50
    assert "unexplained" not in counts, counts
    assert counts == EXPECTED[seed], counts


@pytest.mark.parametrize("seed", [0, 1])
def test_a_sweep_through_the_agents_level_is_the_only_rule_the_feeds_order_adds(seed):
    # the feed's own order (each execution, then its removal): hftbacktest misses the sweeps
    counts, _, _ = _compare(seed, 1, sweeps_first=False)
    sweeps = counts.pop("sweep through its level")
    assert sweeps == {0: 14, 1: 38}[seed]
    expected = dict(EXPECTED[seed], agree=EXPECTED[seed]["agree"] - sweeps)
    assert counts == expected, counts


@pytest.mark.parametrize("seed", [0, 1])
def test_orders_of_several_lots_differ_only_where_sekai_fills_part_of_one(seed):
    counts, _, _ = _compare(seed, 5, sweeps_first=True)
    partial = counts.pop("no partial fills")
    assert partial == {0: 2, 1: 16}[seed]
    expected = dict(EXPECTED[seed], agree=EXPECTED[seed]["agree"] - partial)
    assert counts == expected, counts


def test_the_env_makes_the_fills_the_comparison_checks():
    """LobsterReplay-v0 stepped on the schedule's actions (its instructions relative to the
    best it sees) fills, step by step, exactly what ``replay_orders`` did in one call."""
    from sekai.envs.finance.lobster_replay import LobsterReplayEnv

    events = synthetic_day(0, n_events=10_000)
    terms = make_terms(events, 1)
    schedule = random_schedule(
        events, terms, np.random.default_rng(0), step=STEP, entry_latency=ENTRY, feed_latency=FEED
    )
    ours, _ = sekai_fills(events, terms, schedule, ENTRY)
    first = int(events["time"][0])
    actions = env_actions(schedule, first, STEP)
    expected: dict[int, list[tuple[int, int, int]]] = {}
    new = schedule.what == 0
    sent = dict(zip(schedule.order[new].tolist(), schedule.side[new].tolist(), strict=True))
    for order, fills in ours.items():
        for time, tick, lots in fills:
            step = -(-(time - first) // STEP) - 1  # the step whose span holds the time
            expected.setdefault(step, []).append((sent[order], tick, lots))
    env = LobsterReplayEnv(
        events,
        step_seconds=STEP / 1e9,
        episode_steps=len(actions),
        entry_latency=ENTRY / 1e9,
        data_latency=FEED / 1e9,
        order_size=1,
        max_inventory=10**6,
    )
    env.reset(seed=0, options={"start": 0})
    got: dict[int, list[tuple[int, int, int]]] = {}
    for j, action in enumerate(actions):
        env.step(action)
        rows = [(int(s), int(t), int(n)) for _, s, t, n, _ in env.unwrapped.fills()]
        if rows:
            got[j] = rows
    assert sum(len(v) for v in expected.values()) >= 50
    assert got == expected
