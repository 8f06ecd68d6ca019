"""hftbacktest (2.4.2: its partial-fill exchange and its queue models for depth-only data) as an
outside oracle for DepthReplay-v0's fills, order by order, for each of the six queue models
(issue 35, point 2).

Two depth-only streams, each a synthetic order-level day (``synthetic_formats.synthetic_day``)
replayed and written as its top 10 levels after every event (``depth.levels_to_depth``: level
updates, a level past the shown depth keeping its size) and its executions as trades (the
taker on the other side): a quiet one (10,000 events, about 5 a second) and a busy one (20,000
events run 10 times faster, about 50 a second). sekai's depth kernel (what DepthReplay-v0 steps,
``_depth_windows``, driven one message at a time so each fill has its message's time) and
hftbacktest's ``HashMapMarketDepthBacktest`` with ``partial_fill_exchange()`` and the same
queue model read the same messages in the same order (a trade before the level updates of its
timestamp). The same agent sends both the same post-only (GTX) limit orders of one lot: more
than 200 a stream, at random steps (1 s quiet, 200 ms busy), sides and prices (one tick better
than the best it sees, at it, one or two ticks behind), each cancelled 1 to 10 steps later,
with 300 ms entry latency and 200 ms feed latency (the strategy prices on the book of 200 ms
ago, and hftbacktest's strategy sees that same book: checked). The order responses come back
after 1 ns, so that hftbacktest's strategy learns of each fill before anything else can happen.

Every order's fills (exchange time, price, lots) agree, with no rounding rule of sekai's own:
the float arithmetic of the queue models is hftbacktest's, operation by operation
(``_queue_kernel``). One behaviour of hftbacktest 2.4.2 is counted, not a disagreement:

- **hftbacktest stops**: a trade at an order's price that fills it to its last lot leaves it
  in hftbacktest's exchange as filled, and a second trade at that price before the order is
  gone (here: in the same timestamp, a sweep) makes the backtest stop with
  ``InvalidOrderStatus`` before the fill reaches the strategy. Each order runs in a backtest
  of its own (``depth_harness.hftbacktest_depth_fills``), so nothing else is lost; for these
  orders the test checks that sekai filled the whole order at its price, once, by a trade
  that another trade at or through that price follows in the same timestamp (a sweep). An
  order whose fill reached the strategy before hftbacktest stopped is compared as any other.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from depth_harness import (
    MODELS,
    depth_stream,
    hftbacktest_depth_fills,
    make_terms,
    merged_times,
    sekai_depth_fills,
    to_hftbacktest_depth,
)
from oracle_harness import random_schedule

from sekai.finance.lob._depth_day import TRADE
from sekai.finance.lob.book import SELL

ENTRY, RESPONSE, FEED = 300_000_000, 1, 200_000_000  # ns
STREAMS = {  # seed, events, clock speed-up, the agent's step (ns)
    "quiet": (0, 10_000, 1, 1_000_000_000),
    "busy": (1, 20_000, 10, 200_000_000),
}
EXPONENTS = {"power": 3.0, "power2": 2.0, "power3": 1.5}  # the others have none
# per stream and model: orders whose fills agree, and those hftbacktest stopped on
EXPECTED = {
    ("quiet", "risk_averse"): (510, 1),
    ("quiet", "power"): (510, 1),
    ("quiet", "power2"): (510, 1),
    ("quiet", "power3"): (511, 0),
    ("quiet", "log"): (510, 1),
    ("quiet", "log2"): (511, 0),
    ("busy", "risk_averse"): (484, 4),
    ("busy", "power"): (480, 8),
    ("busy", "power2"): (485, 3),
    ("busy", "power3"): (483, 5),
    ("busy", "log"): (484, 4),
    ("busy", "log2"): (485, 3),
}


@pytest.fixture(scope="module", params=list(STREAMS))
def stream(request):
    seed, n_events, speedup, step = STREAMS[request.param]
    depth, trades = depth_stream(seed, n_events, speedup)
    return request.param, seed, step, depth, trades, merged_times(depth, trades)


@pytest.mark.parametrize("model", list(MODELS))
def test_every_order_fills_as_in_hftbacktest(stream, model):
    name, seed, step, depth, trades, times = stream
    n = EXPONENTS.get(model, 0.0)
    terms = make_terms(depth, trades, model, n, 1)
    schedule = random_schedule(
        {"time": times}, terms, np.random.default_rng(seed), step=step,
        entry_latency=ENTRY, feed_latency=FEED,
    )  # fmt: skip
    ours = sekai_depth_fills(times, terms, schedule, ENTRY)
    theirs, seen, stopped = hftbacktest_depth_fills(
        to_hftbacktest_depth(depth, trades, FEED), schedule, model, n,
        entry_latency=ENTRY, response_latency=RESPONSE, feed_latency=FEED, order_size=1,
    )  # fmt: skip
    days = terms.days
    counts = {"agree": 0, "hftbacktest stops": 0}
    unexplained = []
    for order, mine in ours.items():
        if order in stopped:
            assert stopped[order][0] == 14, stopped[order]
        if order in stopped and mine != theirs[order]:
            sent = schedule.order == order
            side, tick = int(schedule.side[sent][0]), int(schedule.tick[sent][0])
            assert len(mine) == 1 and theirs[order] == [], order
            at, price, lots = mine[0]
            reaching = days.ticks >= tick if side == SELL else days.ticks <= tick
            taken = (times == at) & (days.kinds == TRADE) & (days.sides != side) & reaching
            assert (price, lots) == (tick, 1) and taken.sum() >= 2, (order, mine)
            counts["hftbacktest stops"] += 1
        elif mine == theirs[order]:
            counts["agree"] += 1
        else:
            unexplained.append((order, mine, theirs[order]))
    assert not unexplained, unexplained[:5]
    # both priced every order on the same book (-1: an empty side, in sekai)
    checked = ~np.isin(schedule.order, list(stopped))
    np.testing.assert_array_equal(
        np.where(np.abs(seen) > 2**62, -1, seen)[checked], schedule.seen[checked]
    )
    assert len(ours) >= 200 and sum(bool(f) for f in ours.values()) >= 50
    assert (counts["agree"], counts["hftbacktest stops"]) == EXPECTED[name, model], counts
