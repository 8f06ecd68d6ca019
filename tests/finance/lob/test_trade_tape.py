"""The trade tape of LimitOrderBookMarket (``env.book.trades``) and LimitOrderBookVecEnv
(``vec.trades(i)``): every trade with its price, size, owners, taker side and session time; the
background flow's market orders on it at the model's rates; the same tape for the single env and
each book of the batch; cleared on reset."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from sekai.envs.finance import LimitOrderBookMarket
from sekai.envs.finance.limit_order_book_vec import LimitOrderBookVecEnv
from sekai.finance import BUY, PUBLIC, SELL, ContStoikovTalreja, FlowEvents, OrderBook
from sekai.finance.lob.flow import LIMIT, MARKET, apply_event, seed_book, simulate_flow
from sekai.finance.lob.level_books import _TAPE_ROWS, BookTrade

FIELDS = ("price", "size", "taker_side", "taker_owner", "maker_owner", "time")
KWARGS = {"decision_intervals": [1.0, 2.0, 3.0], "session_length": 30.0, "order_size": 2}


def idle(num_envs: int, agents: list[str]) -> dict[str, np.ndarray]:
    return {agent: np.zeros((num_envs, 3), np.int64) for agent in agents}


def as_rows(tape: np.ndarray) -> list[tuple]:
    """A structured tape as BookTrade tuples, to compare with ``env.book.trades``."""
    return [BookTrade(*row) for row in zip(*(tape[name].tolist() for name in FIELDS), strict=True)]


@pytest.mark.parametrize(("market_rate", "seed"), [(0.94, 0), (0.94, 1), (0.5, 2)])
def test_the_flows_market_order_volume_on_the_tape_matches_the_models_rate(
    market_rate: float, seed: int
) -> None:
    """Idle traders, so every trade is the public's. The flow's market orders of each side
    arrive as a Poisson process of rate mu (``market_rate``) per book, one lot each (every
    order of the flow is one lot; see lob.flow): over B books and T seconds the public's
    market buy (sell) volume on the tape is Poisson with mean mu * T * B, and it must lie within
    4 standard deviations, sqrt(mu * T * B), of that mean; in each half of the session as
    well (the tape's times), with mean and deviation halved accordingly."""
    books, seconds = 16, 1000.0
    model = ContStoikovTalreja(market_rate=market_rate)
    vec = LimitOrderBookVecEnv(
        books, 1, flow=model, decision_intervals=[10.0], session_length=seconds
    )
    result = vec.reset(seed=seed)
    while not result.all_done:
        result = vec.step(idle(books, vec.possible_agents))
    tape = np.concatenate([vec.trades(i) for i in range(books)])
    assert (tape["taker_owner"] == PUBLIC).all() and (tape["maker_owner"] == PUBLIC).all()
    assert (tape["size"] == 1).all()
    for side in (BUY, SELL):
        public_market = tape[tape["taker_side"] == side]
        mean = market_rate * seconds * books
        volume = int(public_market["size"].sum())
        assert abs(volume - mean) <= 4 * math.sqrt(mean), (side, volume, mean)
        first_half = int(public_market["size"][public_market["time"] < seconds / 2].sum())
        for half in (first_half, volume - first_half):
            assert abs(half - mean / 2) <= 4 * math.sqrt(mean / 2), (side, half, mean / 2)


def order_book_tape(flow: FlowEvents) -> list[BookTrade]:
    """The flow replayed on an OrderBook (the reference), each trade at its event's time."""
    book = OrderBook(2000)
    seed_book(book, flow.initial_depth, 1000)
    tape = []
    for j in range(len(flow)):
        before = len(book.trades)
        event = (flow.kind[j], flow.side[j], flow.price[j], flow.rank[j])
        apply_event(book, *(int(value) for value in event))
        time = float(flow.time[j])
        tape += [BookTrade(*t[:2], t.taker_side, *t[5:], time) for t in book.trades[before:]]
    return tape


def test_the_live_tape_is_the_order_books_tape_of_the_same_flow() -> None:
    """One decision, then 300 s of live flow in one compiled call: more trades than a tape
    first holds, so the call stops, the tape grows, and the flow goes on where it stopped. The
    tape is the one an OrderBook records for the flow simulate_flow samples with the same seed
    (the same events), each trade at its event's time; so is the replay of that flow."""
    model = ContStoikovTalreja()
    flow = simulate_flow(model, 300.0, seed=9)
    expected = order_book_tape(flow)
    assert len(expected) > 2 * _TAPE_ROWS
    for given in (None, flow):
        env = LimitOrderBookMarket(
            1, flow=given or model, decision_intervals=[300.0], session_length=300.0
        )
        env.reset(seed=9)
        assert env.step({"trader_0": np.zeros(3, np.int64)}).all_done
        assert env.book.trades == expected
        assert env.book.fill_count == len(expected)


def play(singles: list[LimitOrderBookMarket], vec: LimitOrderBookVecEnv, seed: int) -> None:
    """Book i of ``vec`` takes single env i's masked random actions for a session."""
    results = [env.reset(seed=seed) for env in singles]
    vec.reset(seed=seed)
    for i, env in enumerate(singles):
        for j, agent in enumerate(env.possible_agents):
            env.action_space(agent).seed(100 * i + j)
    while not results[0].all_done:
        actions = [
            {a: env.action_space(a).sample(mask=env.action_mask(a)) for a in result.observations}
            for env, result in zip(singles, results, strict=True)
        ]
        results = [env.step(a) for env, a in zip(singles, actions, strict=True)]
        vec.step({agent: np.stack([a[agent] for a in actions]) for agent in actions[0]})


def test_each_book_of_the_batch_keeps_the_single_envs_tape_on_a_given_flow() -> None:
    flow = simulate_flow(ContStoikovTalreja(), 30.0, seed=4)
    singles = [LimitOrderBookMarket(3, flow=flow, **KWARGS) for _ in range(3)]
    vec = LimitOrderBookVecEnv(3, 3, flow=flow, **KWARGS)
    play(singles, vec, seed=0)
    for i, env in enumerate(singles):
        assert as_rows(vec.trades(i)) == env.book.trades
    tapes = [vec.trades(i) for i in range(3)]
    assert any(len(a) != len(b) or (a != b).any() for a, b in itertools.pairwise(tapes))
    traders = np.concatenate(tapes)
    assert (traders["taker_owner"] != PUBLIC).any() and (traders["maker_owner"] != PUBLIC).any()


@pytest.mark.parametrize("seed", [3, 8])
def test_the_single_env_keeps_the_tape_of_a_batch_of_one_on_the_same_seed(seed: int) -> None:
    single, vec = LimitOrderBookMarket(3, **KWARGS), LimitOrderBookVecEnv(1, 3, **KWARGS)
    play([single], vec, seed)
    assert as_rows(vec.trades(0)) == single.book.trades
    assert {trade.taker_owner for trade in single.book.trades} > {PUBLIC}


def test_a_market_order_against_one_resting_order_is_one_trade_at_the_decision_time() -> None:
    """A 3-tick spread with nothing at the inside ticks and no flow: trader_0 improves the ask
    with 3 lots, then trader_1 (due at the same time, acting after it) buys 3 at market: one
    trade of 3 lots, as OrderBook records it, at time 0.0. At t = 1 trader_1 buys again and
    takes the public's 2 lots left on the ask side: two one-lot trades at t = 1.0."""
    none = np.zeros(0, np.int64)
    flow = FlowEvents(none.astype(float), none, none, none, none, initial_depth=(0, 2))
    env = LimitOrderBookMarket(2, flow=flow, order_size=3, session_length=3.0)
    env.reset(seed=0)
    env.step({"trader_0": np.array([0, 2, 0]), "trader_1": np.array([0, 0, 1])})
    assert env.book.trades == [BookTrade(1001, 3, BUY, 2, 1, 0.0)]
    assert env.book.fill_count == 3 and env.inventory.tolist() == [-3, 3]
    env.step({"trader_0": np.array([0, 0, 0]), "trader_1": np.array([0, 0, 1])})
    assert env.book.trades[1:] == [BookTrade(1002, 1, BUY, 2, PUBLIC, 1.0)] * 2
    assert [tuple(fill) for fill in env.book.fills] == [(1001, BUY, 2, 1)] * 3 + [
        (1002, BUY, 2, PUBLIC)
    ] * 2


def test_reset_clears_the_tape_and_the_next_session_writes_it_afresh() -> None:
    vec = LimitOrderBookVecEnv(2, 1, decision_intervals=[200.0], session_length=200.0)
    vec.reset(seed=5)
    vec.step(idle(2, vec.possible_agents))
    first = [vec.trades(i) for i in range(2)]
    assert min(len(tape) for tape in first) > _TAPE_ROWS  # the tapes grew
    # the kernels keep the longest tape's length, which says where room must be made
    assert vec.books._most_trades[0] == max(len(tape) for tape in first)
    vec.reset(seed=5)
    assert [len(vec.trades(i)) for i in range(2)] == [0, 0]
    assert vec.books._most_trades[0] == 0
    assert vec.books.book(0).trades == [] and vec.books.book(0).fill_count == 0
    vec.step(idle(2, vec.possible_agents))
    for i in range(2):
        assert np.array_equal(vec.trades(i), first[i])
    assert vec.trades(0).dtype.names == ("time", *FIELDS[:-1])


def test_trades_names_a_bad_book() -> None:
    vec = LimitOrderBookVecEnv(2, 1, session_length=2.0)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=r"book must be in \[0, 2\), got 2"):
        vec.trades(2)
    with pytest.raises(TypeError, match=r"book must be an int, got 1\.0"):
        vec.trades(1.0)  # type: ignore[arg-type]


def test_a_kernel_given_no_room_loses_no_memory_and_the_tape_says_so() -> None:
    """The kernels write only where the driver made room; called past it (a driver's bug),
    they write nothing out of bounds, and reading the tape raises instead of lying."""
    from sekai.finance.lob import level_books as engine

    books = LimitOrderBookVecEnv(1, 1, session_length=2.0).books
    for k in range(_TAPE_ROWS + 5):  # a public ask, then a public market buy takes a lot
        engine._apply(books._state, 0, LIMIT, SELL, 1001, 0, float(k))
        engine._apply(books._state, 0, MARKET, BUY, -1, 0, float(k))
    assert books.trade_count[0] == _TAPE_ROWS + 5 and books.tape.shape[1] == _TAPE_ROWS
    with pytest.raises(RuntimeError, match=r"book 0's tape lost trades: 133 made, room for 128"):
        books.trades(0)
    with pytest.raises(RuntimeError, match="lost trades"):
        books.book(0).trades  # noqa: B018
