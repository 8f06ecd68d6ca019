"""LobsterReplay-v0's replay rules, each on a small real-format day where the rule alone decides
the outcome (docs/limit-order-book.md, "A real day as an env"): a new real order on the other
side at the agent's price fills it; a visible execution at a price worse than the agent's fills
it; a post-only quote at the other side's best when it arrives is dropped; an instruction that
reaches a halted book is refused; the opening book's legacy volume is ahead of an agent that
joins at the open; a negative latency is an error naming it.

Each day is written as LOBSTER message and orderbook text files (``lobster_days.write_day``)
and passed as paths. Every scenario runs through the single env, ``sekai.make``, once per
start of the day, and through the native batch, ``sekai.make_vec`` with 1,024 windows whose
starts cycle through the day's starts: every window must agree with the single env on its
start, step by step, and the rule's outcome is asserted on both."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from lobster_days import Shipped, write_day

import sekai
from sekai.finance import BUY, SELL
from sekai.finance.lobster import (
    DELETE,
    EMPTY_PRICE,
    EXECUTE,
    HALT,
    HALTED,
    MESSAGE_DTYPE,
    PARTIAL_CANCEL,
    QUOTING,
    RESUMED,
    SUBMIT,
    orderbook_dtype,
)

# every rule is checked on the single env and the 1,024-window native batch, which must agree
pytestmark = pytest.mark.needs("sekai-vector")

# the action's bid and ask instructions, and market orders (LimitOrderBookMarket's)
KEEP, CANCEL, IMPROVE, JOIN = 0, 1, 2, 3
NONE, MARKET_BUY = 0, 1
# the observation with book_levels=5: the book (4 * 5), then the account and the queues
INVENTORY, BID_PRICE, BID_LOTS, ASK_PRICE, ASK_LOTS = 20, 22, 23, 24, 25
BID_AHEAD = 27
BUYS, SELLS = 1, -1  # LOBSTER directions
CENTS = 100  # LOBSTER price units (dollars x 10,000) per tick
OPEN = 34_200.0  # the day's first message: 9:30, in seconds after midnight
WINDOWS = 1024
ORDER_SIZE = 5
STEP_SECONDS = 1.0
EPISODE_STEPS = 4
LEVELS = 10  # the orderbook files' levels: more than any of these days has on a side

# (seconds after OPEN, type, order id, size, tick (a halt's price: -1, 0 or 1), direction)
Message = tuple[float, int, int, int, int, int]
# the book before the first message, lots per tick: the opening book, all legacy volume
TIGHT = {BUY: {10_000: 200, 9_999: 300}, SELL: {10_003: 100, 10_004: 200}}
FIRST = (0.0, SUBMIT, 1, 10, 10_020, SELLS)  # far from the quotes
LAST = (8.0, DELETE, 1, 10, 10_020, SELLS)  # the day spans 8 steps: starts 0 to 4


def lobster_files(
    folder: Path, opening: dict[int, dict[int, int]], messages: list[Message]
) -> tuple[Path, Path]:
    """A level-``LEVELS`` LOBSTER day: the message file of ``messages`` and the orderbook file
    of the book after each, played from ``opening`` (lots per side and tick), so that row 1
    less message 1 is ``opening`` and the rows agree with the messages."""
    book = {side: dict(levels) for side, levels in opening.items()}
    rows = np.zeros(len(messages), orderbook_dtype(LEVELS))
    records = []
    for k, (seconds, kind, order_id, size, tick, direction) in enumerate(messages):
        side = BUY if direction == BUYS else SELL
        if kind == SUBMIT:
            book[side][tick] = book[side].get(tick, 0) + size
        elif kind in (PARTIAL_CANCEL, DELETE, EXECUTE):
            book[side][tick] -= size
            assert book[side][tick] >= 0, (k, "takes more than the level holds")
            if not book[side][tick]:
                del book[side][tick]
        bids, asks = sorted(book[BUY], reverse=True), sorted(book[SELL])
        assert not bids or not asks or bids[0] < asks[0], (k, "a crossed book")
        for name, side, ticks, empty in (
            ("bid", BUY, bids, -EMPTY_PRICE),
            ("ask", SELL, asks, EMPTY_PRICE),
        ):
            rows[f"{name}_price"][k] = empty
            for level, at in enumerate(ticks[:LEVELS]):
                rows[f"{name}_price"][k, level] = at * CENTS
                rows[f"{name}_size"][k, level] = book[side][at]
        price = tick if kind == HALT else tick * CENTS
        records.append((OPEN + seconds, kind, order_id, size, price, direction))
    shipped = Shipped(np.array(records, MESSAGE_DTYPE), rows, np.arange(len(messages)), {})
    return write_day(folder, shipped)


@dataclass
class Run:
    """An episode's results after each step: observations, rewards, infos' counts, and the
    account (inventory, cash)."""

    observations: list[np.ndarray] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    fills: list[int] = field(default_factory=list)
    refused: list[int] = field(default_factory=list)
    ignored: list[int] = field(default_factory=list)
    inventory: list[int] = field(default_factory=list)
    cash: list[float] = field(default_factory=list)
    fill_rows: list[list[list[int]]] = field(default_factory=list)  # the single env's fills()

    def ahead(self) -> list[int]:
        return [int(obs[BID_AHEAD]) for obs in self.observations]

    def quotes(self, step: int) -> tuple[int, int]:
        """The lots of the agent's resting bid and ask after ``step``."""
        obs = self.observations[step]
        return int(obs[BID_LOTS]), int(obs[ASK_LOTS])


def replay_day(files: tuple[Path, Path], actions: list[list[int]], **kwargs: Any) -> dict[int, Run]:
    """``actions`` (one per step, from the start) played on every start of the day, by the
    single env and by the 1,024-window native batch; the two must agree on every window, step
    by step. Returns the single env's runs by start, after checking that the day's files agree
    with its messages (no reconciliation needed) and that every window of the batch equals
    them."""
    messages, orderbook = (str(path) for path in files)
    options = dict(
        messages=messages,
        orderbook=orderbook,
        step_seconds=STEP_SECONDS,
        episode_steps=EPISODE_STEPS,
        order_size=ORDER_SIZE,
        **kwargs,
    )
    assert len(actions) < EPISODE_STEPS  # no step ends the episode: no autoreset in the batch
    n_starts = int((LAST[0] - FIRST[0]) // STEP_SECONDS) - EPISODE_STEPS + 1
    singles: dict[int, Run] = {}
    resets = {}
    for start in range(n_starts):
        env = sekai.make("LobsterReplay-v0", **options)
        assert env.unwrapped.terms.days[0].reconciliations == 0
        resets[start], _ = env.reset(options={"start": start})
        run = singles[start] = Run()
        for action in actions:
            obs, reward, _, _, info = env.step(action)
            run.observations.append(obs)
            run.rewards.append(float(reward))
            run.fills.append(int(info["fills"]))
            run.refused.append(int(info["refused"]))
            run.ignored.append(int(info["ignored"]))
            run.inventory.append(int(env.unwrapped.inventory))
            run.cash.append(float(env.unwrapped.cash))
            run.fill_rows.append(env.unwrapped.fills().tolist())
        env.close()
    vec = sekai.make_vec("LobsterReplay-v0", WINDOWS, **options)
    assert type(vec).__name__ == "LobsterReplayVecEnv"
    starts = np.arange(WINDOWS) % n_starts
    observations, _ = vec.reset(seed=0, options=[{"start": int(s)} for s in starts])
    assert np.array_equal(observations, np.stack([resets[s] for s in starts]))
    for step, action in enumerate(actions):
        result = vec.step(np.tile(action, (WINDOWS, 1)))
        runs = [singles[s] for s in starts]

        def each(name: str, runs: list[Run] = runs, step: int = step) -> list[Any]:
            return [getattr(run, name)[step] for run in runs]

        assert np.array_equal(result.observations, np.stack(each("observations"))), step
        assert result.rewards.tolist() == each("rewards"), step
        for key in ("fills", "refused", "ignored"):
            assert [info[key] for info in result.infos] == each(key), (step, key)
        assert vec.inventory.tolist() == each("inventory"), step
        assert vec.cash.tolist() == each("cash"), step
    vec.close()
    return singles


def test_a_new_order_on_the_other_side_at_the_agents_price_fills_it(tmp_path):
    """The agent improves both quotes to $100.01 and $100.02. A sell at $100.02 and a buy at
    $100.01 (each at the agent's other quote) fill nothing; then a sell at $100.01, at the
    agent's bid, fills it, and a buy at $100.02, at its ask, fills that."""
    files = lobster_files(
        tmp_path,
        TIGHT,
        [
            FIRST,
            (0.4, SUBMIT, 2, 10, 10_002, SELLS),  # at the agent's ask: behind it, not a fill
            (0.6, SUBMIT, 3, 10, 10_001, BUYS),  # at the agent's bid: behind it
            (0.8, DELETE, 2, 10, 10_002, SELLS),
            (0.9, DELETE, 3, 10, 10_001, BUYS),
            (1.5, SUBMIT, 4, 7, 10_001, SELLS),  # a sell at the agent's bid: it fills
            (1.6, DELETE, 4, 7, 10_001, SELLS),
            (1.7, SUBMIT, 5, 7, 10_002, BUYS),  # a buy at the agent's ask: it fills
            (1.9, DELETE, 5, 7, 10_002, BUYS),
            LAST,
        ],
    )
    runs = replay_day(files, [[IMPROVE, IMPROVE, NONE], [KEEP, KEEP, NONE], [KEEP, KEEP, NONE]])
    start_0, start_1 = runs[0], runs[1]
    assert start_0.quotes(0) == (ORDER_SIZE, ORDER_SIZE)  # resting at $100.01 and $100.02
    assert start_0.observations[0][BID_PRICE] == pytest.approx(100.01)
    assert start_0.observations[0][ASK_PRICE] == pytest.approx(100.02)
    assert start_0.fills == [0, 2, 0]
    # both filled whole, as makers at their own prices
    assert start_0.fill_rows[1] == [[0, BUY, 10_001, 5, 1], [0, SELL, 10_002, 5, 1]]
    assert start_0.quotes(1) == (0, 0) and start_0.inventory == [0, 0, 0]
    assert start_0.cash[1] == pytest.approx(10_000.0 + 5 * 0.01)
    # from 9:30:01 the same: filled within the step
    assert start_1.fills[0] == 2 and start_1.fill_rows[0] == start_0.fill_rows[1]
    # from 9:30:02 on nothing comes to the quotes
    assert runs[2].fills == runs[3].fills == runs[4].fills == [0, 0, 0]


def test_a_visible_execution_at_a_worse_price_than_the_agents_fills_it(tmp_path):
    """The agent joins the best bid ($100.00, 200 lots ahead) and the best ask ($100.03, 100
    ahead). Executions (type 4) at its prices of the lots ahead move it up, no fill; once
    nothing is left ahead, an execution at $99.99 (a sell below its bid) fills its bid and one
    at $100.04 (a buy above its ask) fills its ask."""
    files = lobster_files(
        tmp_path,
        TIGHT,
        [
            FIRST,
            (0.3, EXECUTE, 91, 30, 10_000, BUYS),  # legacy ahead of the bid trades
            (0.5, EXECUTE, 92, 40, 10_003, SELLS),  # legacy ahead of the ask trades
            (1.2, DELETE, 93, 170, 10_000, BUYS),  # the rest ahead of the bid goes
            (1.3, EXECUTE, 94, 30, 9_999, BUYS),  # a sell at $99.99, below the bid: fills it
            (1.4, DELETE, 95, 60, 10_003, SELLS),  # the rest ahead of the ask goes
            (1.5, EXECUTE, 96, 30, 10_004, SELLS),  # a buy at $100.04, above the ask: fills it
            LAST,
        ],
    )
    runs = replay_day(files, [[JOIN, JOIN, NONE], [KEEP, KEEP, NONE], [KEEP, KEEP, NONE]])
    start_0 = runs[0]
    assert start_0.ahead()[0] == 170 and start_0.observations[0][BID_AHEAD + 2] == 60
    assert start_0.fills == [0, 2, 0]
    assert start_0.fill_rows[1] == [[0, BUY, 10_000, 5, 1], [0, SELL, 10_003, 5, 1]]
    assert start_0.quotes(1) == (0, 0) and start_0.inventory[1] == 0
    assert start_0.cash[1] == pytest.approx(10_000.0 + 5 * 0.03)
    # from 9:30:01: behind 170 and 60, then the same fills
    assert runs[1].fills[0] == 2 and runs[1].fill_rows[0] == start_0.fill_rows[1]
    assert runs[2].fills == [0, 0, 0] and runs[2].quotes(0) == (ORDER_SIZE, ORDER_SIZE)


def test_a_post_only_quote_at_the_other_sides_best_when_it_arrives_is_dropped(tmp_path):
    """With 50 ms of entry latency the agent improves both quotes on a $100.00 / $100.03 book:
    a bid at $100.01, an ask at $100.02. Within those 50 ms another order moves the other
    side's best: to the agent's price, and its quote there is dropped; to one tick from it,
    and its quote rests."""
    files = lobster_files(
        tmp_path,
        TIGHT,
        [
            FIRST,
            (0.02, SUBMIT, 2, 10, 10_001, SELLS),  # the best ask at the agent's bid: dropped
            (0.50, DELETE, 2, 10, 10_001, SELLS),
            (1.02, SUBMIT, 3, 10, 10_002, SELLS),  # one tick above the agent's bid: it rests
            (1.50, DELETE, 3, 10, 10_002, SELLS),
            (2.02, SUBMIT, 4, 10, 10_002, BUYS),  # the best bid at the agent's ask: dropped
            (2.50, DELETE, 4, 10, 10_002, BUYS),
            (3.02, SUBMIT, 5, 10, 10_001, BUYS),  # one tick below the agent's ask: it rests
            (3.50, DELETE, 5, 10, 10_001, BUYS),
            LAST,
        ],
    )
    actions = [[IMPROVE, IMPROVE, NONE], [KEEP, KEEP, NONE], [KEEP, KEEP, NONE]]
    runs = replay_day(files, actions, entry_latency=0.05)
    # the lots of the agent's bid and ask after the first step, by start
    quotes = {start: runs[start].quotes(0) for start in range(4)}
    assert quotes == {
        0: (0, ORDER_SIZE),
        1: (ORDER_SIZE, ORDER_SIZE),
        2: (ORDER_SIZE, 0),
        3: (ORDER_SIZE, ORDER_SIZE),
    }
    assert runs[0].observations[0][BID_PRICE] == 0  # no bid
    assert runs[2].observations[0][ASK_PRICE] == 0  # no ask
    assert all(runs[start].fills[0] == 0 for start in range(4))


def test_an_instruction_that_reaches_a_halted_book_is_refused(tmp_path):
    """With 50 ms of entry latency the agent decides on a book that trades, and the day halts
    within those 50 ms (a halt, then quoting: still halted) until a resume. Its new quote and
    market order reach the halted book and are refused, counted in info["refused"]; a cancel
    still goes through. After the resume the same instructions are done."""
    files = lobster_files(
        tmp_path,
        TIGHT,
        [
            FIRST,
            (1.01, HALT, 0, 0, HALTED, SELLS),
            (1.02, HALT, 0, 0, QUOTING, SELLS),
            (1.50, HALT, 0, 0, RESUMED, SELLS),
            LAST,
        ],
    )
    actions = [[JOIN, KEEP, MARKET_BUY], [CANCEL, KEEP, MARKET_BUY], [KEEP, KEEP, NONE]]
    runs = replay_day(files, actions, entry_latency=0.05)
    # from 9:30:00: the first instructions are done (a bid of 5 rests, 5 bought at $100.03);
    # at 9:30:01 the cancel goes through, the market buy is refused
    start_0 = runs[0]
    assert start_0.fills == [1, 0, 0] and start_0.fill_rows[0] == [[0, BUY, 10_003, 5, 0]]
    assert start_0.quotes(0) == (ORDER_SIZE, 0) and start_0.quotes(1) == (0, 0)
    assert start_0.refused == [0, 1, 1] and start_0.inventory == [5, 5, 5]
    # from 9:30:01: the quote and the market order are refused; after the resume, the market
    # buy is done (the cancel, with no bid resting, is masked: ignored)
    start_1 = runs[1]
    assert start_1.fills == [0, 1, 0] and start_1.refused == [1, 1, 1]
    assert start_1.quotes(0) == (0, 0) and start_1.inventory == [0, 5, 5]
    assert start_1.ignored == [0, 1, 0]
    # from 9:30:02, no halt: everything done
    assert runs[2].refused == [0, 0, 0] and runs[2].inventory == [5, 10, 10]


def test_the_opening_books_legacy_volume_is_ahead_of_an_agent_that_joins_at_the_open(tmp_path):
    """The opening book holds 200 lots bid at $100.00 (legacy volume: placed before the day).
    With 50 ms of entry latency the agent joins that bid at the open; within those 50 ms five
    better bids arrive, so $100.00 lies below the top levels recorded per message when its
    order arrives. The 200 lots are ahead of it, and after 150 of them trade, 50. At 9:30:03
    the same from the level's history: after the 150 traded, 50 ahead."""
    burst = [(0.01 + 0.005 * i, SUBMIT, 2 + i, 10, 10_001 + i, BUYS) for i in range(5)]
    files = lobster_files(
        tmp_path,
        {BUY: {10_000: 200, 9_999: 300}, SELL: {10_010: 100, 10_011: 200}},
        [
            FIRST,
            *burst,  # five bids above the agent's within its latency
            *[(0.3, DELETE, i, 10, tick, BUYS) for _, _, i, _, tick, _ in burst],
            (1.5, EXECUTE, 90, 150, 10_000, BUYS),  # 150 of the opening lots trade
            *[(3.0 + s, kind, i + 10, *rest) for s, kind, i, *rest in burst],  # again at 9:30:03
            *[(3.3, DELETE, i + 10, 10, tick, BUYS) for _, _, i, _, tick, _ in burst],
            LAST,
        ],
    )
    runs = replay_day(
        files, [[JOIN, KEEP, NONE], [KEEP, KEEP, NONE], [KEEP, KEEP, NONE]], entry_latency=0.05
    )
    assert runs[0].ahead() == [200, 50, 50]
    assert runs[1].ahead() == [50, 50, 50]  # joined at 9:30:01 behind 200, then 150 traded
    assert runs[3].ahead() == [50, 50, 50]  # below the top levels again when it arrives
    assert all(run.fills == [0, 0, 0] for run in runs.values())
    assert all(run.observations[0][BID_PRICE] == pytest.approx(100.00) for run in runs.values())


@pytest.mark.parametrize("name", ["entry_latency", "data_latency"])
def test_a_negative_latency_is_a_value_error_naming_it(name):
    match = rf"{name} must be .*at least 0"
    with pytest.raises(ValueError, match=match):
        sekai.make("LobsterReplay-v0", **{name: -0.01})
    with pytest.raises(ValueError, match=match):
        sekai.make_vec("LobsterReplay-v0", 4, **{name: -0.01})
    with pytest.raises(ValueError, match=match):  # one latency per agent
        sekai.make("LobsterReplayMarket-v0", **{name: [0.0, -0.01]})
