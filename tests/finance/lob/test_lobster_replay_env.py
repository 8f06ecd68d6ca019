"""LobsterReplay-v0 and LobsterReplayMarket-v0: agent orders in the real FIFO queues of a
replayed day (hand-made message files), latency, the replayed book, the native batch, the
accounts, and the env contracts."""

from __future__ import annotations

import functools
import itertools
import pickle
from pathlib import Path

import numpy as np
import pytest
from lobster_days import N_TICKS, generate_day, ship

import sekai
from sekai.envs.finance.lobster_replay import LobsterReplayEnv
from sekai.envs.finance.lobster_replay_market import LobsterReplayMarket
from sekai.finance import BUY, SELL, OrderBook
from sekai.finance.lob.book import LEGACY
from sekai.finance.lob.lobster import (
    DELETE,
    EXECUTE,
    HALT,
    MESSAGE_DTYPE,
    PARTIAL_CANCEL,
    SUBMIT,
    initial_book,
    orderbook_dtype,
    replay,
    write_messages,
)
from sekai.finance.lob.replay_model import ReplayModel

KEEP, CANCEL, JOIN, TWO_BEHIND = 0, 1, 3, 5  # bid/ask instructions (LimitOrderBookMarket's)
NONE = 0  # no market order
BID_AHEAD = 4 * 5 + 7  # the observation's bid lots ahead, with book_levels=5
BUYS, SELLS = 1, -1  # LOBSTER directions
CENTS = 100  # LOBSTER price units per tick


def messages_file(tmp_path: Path, rows: list[tuple[float, int, int, int, int, int]]) -> Path:
    """A LOBSTER message file of ``rows`` (time, type, id, size, price in cents (a halt's:
    -1, 0 or 1), direction)."""
    messages = np.array(
        [
            (t, kind, i, size, cents if kind == HALT else cents * CENTS, d)
            for t, kind, i, size, cents, d in rows
        ],
        MESSAGE_DTYPE,
    )
    path = tmp_path / "messages.csv"
    write_messages(path, messages)
    return path


OPENING = [  # 300 lots bid at $10.00 in two orders, an ask at $10.01
    (0.0, SUBMIT, 1, 100, 1000, BUYS),
    (0.0, SUBMIT, 2, 200, 1000, BUYS),
    (0.0, SUBMIT, 3, 100, 1001, SELLS),
]


def queue_env(path: Path, **kwargs: object) -> LobsterReplayEnv:
    options = {"step_seconds": 1.0, "episode_steps": 8, "order_size": 5, **kwargs}
    return LobsterReplayEnv(path, **options)  # type: ignore[arg-type]


def test_an_order_behind_300_lots_fills_only_once_300_lots_have_gone_ahead(tmp_path):
    path = messages_file(
        tmp_path,
        [
            *OPENING,
            (1.5, EXECUTE, 1, 100, 1000, BUYS),  # 100 traded ahead
            (2.5, PARTIAL_CANCEL, 2, 150, 1000, BUYS),  # 150 cancelled ahead
            (2.6, SUBMIT, 4, 50, 1000, BUYS),  # behind the agent
            (3.5, EXECUTE, 2, 40, 1000, BUYS),  # 40 traded ahead
            (4.5, DELETE, 2, 10, 1000, BUYS),  # the last 10 ahead cancelled
            (5.5, EXECUTE, 4, 3, 1000, BUYS),  # behind: the agent trades first
            (9.0, DELETE, 3, 100, 1001, SELLS),
        ],
    )
    env = queue_env(path)
    obs, _ = env.reset(options={"start": 0})
    obs, *_ = env.step([JOIN, KEEP, NONE])
    ahead, fills = [obs[BID_AHEAD]], [len(env.fills())]
    for _ in range(5):
        obs, *_ = env.step([KEEP, KEEP, NONE])
        ahead.append(obs[BID_AHEAD])
        fills.append(len(env.fills()))
    assert ahead == [300, 200, 50, 10, 0, 0]
    assert fills == [0, 0, 0, 0, 0, 1]
    assert env.fills().tolist() == [[0, BUY, 1000, 3, 1]]  # agent 0 bought 3 at the tick, maker
    assert env.inventory == 3 and env.cash == pytest.approx(10_000.0 - 3 * 10.00)


def test_legacy_volume_a_reconciliation_adds_at_the_agents_level_is_ahead_of_it(tmp_path):
    """A level-1 file: when the bids at $10.00 go, the file shows 50 lots at $9.98 that no
    message announced; the reconciliation rests them as legacy, ahead of the agent there.
    Later the file shows less than the book holds: legacy goes first (the agent moves up),
    then the newest order (behind it: no move)."""
    rows = [  # (message, (best ask cents, lots), (best bid cents, lots)) for a level-1 file
        (OPENING[0], (0, 0), (1000, 100)),
        (OPENING[1], (0, 0), (1000, 300)),
        (OPENING[2], (1001, 100), (1000, 300)),
        ((1.5, DELETE, 1, 100, 1000, BUYS), (1001, 100), (1000, 200)),
        ((1.6, DELETE, 2, 200, 1000, BUYS), (1001, 100), (998, 50)),  # 50 lots unannounced
        ((2.5, EXECUTE, 77, 30, 998, BUYS), (1001, 100), (998, 20)),  # legacy: ahead
        ((3.5, SUBMIT, 5, 40, 998, BUYS), (1001, 100), (998, 60)),  # behind the agent
        ((4.5, SUBMIT, 6, 10, 1001, SELLS), (1001, 110), (998, 10)),  # 50 lots fewer
        ((9.0, DELETE, 3, 100, 1001, SELLS), (1001, 10), (998, 10)),
    ]
    path = messages_file(tmp_path, [message for message, _, _ in rows])
    orderbook = np.array(
        [([a * CENTS], [av], [b * CENTS], [bv]) for _, (a, av), (b, bv) in rows],
        orderbook_dtype(1),
    )
    env = queue_env(path, orderbook=orderbook)
    assert env.terms.days[0].reconciliations == 2
    env.reset(options={"start": 0})
    obs, *_ = env.step([TWO_BEHIND, KEEP, NONE])  # at $9.98, nothing there yet
    ahead = [obs[BID_AHEAD]]
    for _ in range(4):
        obs, *_ = env.step([KEEP, KEEP, NONE])
        ahead.append(obs[BID_AHEAD])
    assert ahead == [0, 50, 20, 20, 0]
    assert env.model.orders[0, 0, BUY, 0] == 998 and not env.fills().size


def test_an_execution_of_an_order_placed_after_the_agents_fills_the_agent_first(tmp_path):
    path = messages_file(
        tmp_path,
        [
            *OPENING,
            (0.2, SUBMIT, 4, 50, 1000, BUYS),  # joins behind the agent
            (0.4, EXECUTE, 4, 2, 1000, BUYS),  # so the agent, 300 lots back, traded first
            (9.0, DELETE, 3, 100, 1001, SELLS),
        ],
    )
    env = queue_env(path, maker_fee=-0.002)
    env.reset(options={"start": 0})
    obs, reward, *_ = env.step([JOIN, KEEP, NONE])
    assert env.fills().tolist() == [[0, BUY, 1000, 2, 1]]
    assert obs[BID_AHEAD] == 0  # everything ahead must have gone for that execution
    assert env.inventory == 2
    assert env.cash == pytest.approx(10_000.0 - 2 * 10.00 + 2 * 0.002)  # a maker rebate
    assert reward == pytest.approx(2 * 0.002 + 2 * (10.005 - 10.00))  # marked at the mid


def test_a_latency_of_50_ms_shifts_the_queue_position_by_the_messages_in_between(tmp_path):
    path = messages_file(
        tmp_path,
        [
            *OPENING,
            (1.01, PARTIAL_CANCEL, 1, 30, 1000, BUYS),  # in between: 30 lots ahead go
            (1.02, SUBMIT, 4, 60, 1000, BUYS),  # in between: 60 lots join before the slow one
            (1.05, SUBMIT, 5, 7, 1000, BUYS),  # at 50 ms exactly: still before the slow one
            (1.30, EXECUTE, 4, 20, 1000, BUYS),
            (9.0, DELETE, 3, 100, 1001, SELLS),
        ],
    )
    env = LobsterReplayMarket(
        2,
        messages=path,
        entry_latency=[0.0, 0.05],
        step_seconds=1.0,
        episode_steps=8,
        order_size=5,
    )
    env.reset(options={"start": 1})
    env.step({"agent_0": [JOIN, KEEP, NONE], "agent_1": [JOIN, KEEP, NONE]})
    orders = env.model.orders[0, :, BUY]  # (tick, size, lots ahead, joined at) per agent
    # the fast agent: behind 300, then 30 cancelled ahead; id 4's execution is behind it
    # the slow one: behind 300 - 30 + 60 + 7 = 337, then 20 of id 4 traded ahead of it
    assert orders[:, 2].tolist() == [0, 337 - 20]
    assert orders[0, 1] == 5 - 5 and env.model.inventory[0].tolist() == [5, 0]
    assert orders[:, 3].tolist() == [3, 6]  # joined before message 4, and before message 7


def test_a_market_data_latency_shows_the_book_as_of_that_long_ago(tmp_path):
    path = messages_file(
        tmp_path,
        [
            *OPENING,
            (1.6, EXECUTE, 1, 10, 1000, BUYS),  # a sell of 10 at $10.00
            (1.7, SUBMIT, 4, 50, 1001, SELLS),  # the ask grows to 150
            (9.0, DELETE, 3, 100, 1001, SELLS),
        ],
    )
    env = LobsterReplayMarket(2, messages=path, data_latency=[0.0, 0.5], episode_steps=8)
    env.reset(options={"start": 1})
    observations, *_ = env.step({a: [KEEP, KEEP, NONE] for a in env.possible_agents})
    asks = slice(15, 20)  # the ask lots, with book_levels=5
    last_trade = slice(BID_AHEAD + 4 + 2 * 4, BID_AHEAD + 4 + 2 * 5)  # price, signed size
    now, late = observations["agent_0"], observations["agent_1"]  # at t=2.0, as of t=1.5
    assert now[asks].tolist() == [150, 0, 0, 0, 0] and late[asks].tolist() == [100, 0, 0, 0, 0]
    assert now[last_trade].tolist() == pytest.approx([10.00, -10])  # a seller took 10
    assert late[last_trade].tolist() == [0, 0]  # no trade yet


def test_market_orders_take_the_replayed_levels_without_changing_them(tmp_path):
    path = messages_file(
        tmp_path,
        [
            *OPENING,
            (0.0, SUBMIT, 4, 2, 1002, SELLS),
            (0.0, SUBMIT, 5, 3, 1003, SELLS),
            (9.0, DELETE, 3, 100, 1001, SELLS),
        ],
    )
    env = queue_env(path, order_size=103, max_inventory=200, taker_fee=0.003)
    obs0, _ = env.reset(options={"start": 0})
    obs, *_ = env.step([KEEP, KEEP, 1])  # a market buy of 103
    assert sorted(map(tuple, env.fills().tolist())) == [
        (0, BUY, 1001, 100, 0),
        (0, BUY, 1002, 2, 0),
        (0, BUY, 1003, 1, 0),
    ]
    assert env.cash == pytest.approx(10_000.0 - (100 * 10.01 + 2 * 10.02 + 10.03) - 103 * 0.003)
    assert np.array_equal(obs[:20], obs0[:20])  # the replayed book did not move


def test_bad_input_gets_a_clear_error(tmp_path):
    path = messages_file(
        tmp_path,
        [
            *OPENING,
            (0.5, HALT, 0, 0, -1, SELLS),  # halt
            (1.5, HALT, 0, 0, 0, SELLS),  # quoting: still no trading
            (2.5, HALT, 0, 0, 1, SELLS),  # resume
            (9.0, DELETE, 3, 100, 1001, SELLS),
        ],
    )
    env = queue_env(path)
    env.reset(options={"start": 1})  # halted
    bid, ask, market = env.action_mask()
    assert bid.tolist() == ask.tolist() == [1, 0, 0, 0, 0, 0]  # keep only
    assert market.tolist() == [1, 0, 0]
    # the single env does a forbidden entry as keep and counts it: every action is valid
    result = env.step([JOIN, KEEP, 1])
    assert result.info["ignored"] == 2 and len(env.fills()) == 0
    assert (env.unwrapped.model.orders[0, 0, :, 0] == -1).all()
    # the multi-agent form refuses it, naming it
    market_env = LobsterReplayMarket(1, messages=path, episode_steps=8)
    market_env.reset(options={"start": 1})
    with pytest.raises(ValueError, match=r"agent_0: the bid instruction 3 \('join'\).*halted"):
        market_env.step({"agent_0": [JOIN, KEEP, NONE]})
    with pytest.raises(ValueError, match=r"actions must be rows of MultiDiscrete"):
        env.step([7, KEEP, NONE])
    with pytest.raises(ValueError, match=r"options\['start'\] must be a step in \[0, 1\]"):
        env.reset(options={"start": 5})
    with pytest.raises(ValueError, match="entry_latency must be below step_seconds"):
        queue_env(path, entry_latency=1.0)
    with pytest.raises(TypeError, match="MESSAGE_DTYPE"):
        LobsterReplayEnv(np.zeros(3))
    off_grid = tmp_path / "off.csv"
    off_grid.write_text("0.0,1,1,100,100050,1\n1.0,1,2,100,100100,-1\n")
    with pytest.raises(ValueError, match="not on the 100-unit grid"):
        LobsterReplayEnv(off_grid)
    sizes = tmp_path / "sizes.csv"
    sizes.write_text("0.0,1,1,0,100000,1\n1.0,1,2,100,100100,-1\n")
    with pytest.raises(ValueError, match="size"):
        LobsterReplayEnv(sizes)


@functools.cache
def shipped_day():  # type: ignore[no-untyped-def]
    return ship(generate_day(seed=0), 10)


@pytest.mark.parametrize(("seed", "levels"), [(0, 10), (1, 5)])
def test_with_the_agent_acting_the_replayed_book_is_the_files_after_every_step(seed, levels):
    """Agent orders are virtual and the day is reconciled with its orderbook file: the book
    the agent sees after every step is the file's row there, and ``lobster.replay``'s with
    the same rows, from the file's opening book."""
    file = shipped_day() if (seed, levels) == (0, 10) else ship(generate_day(seed), levels)
    env = LobsterReplayEnv(
        file.messages,
        file.orderbook,
        n_ticks=N_TICKS,
        step_seconds=5.0,
        episode_steps=200,
        book_levels=levels,
    )
    assert env.terms.days[0].reconciliations > 0
    book = initial_book(file.messages, file.orderbook, n_ticks=N_TICKS)
    env.reset(seed=1, options={"start": 0})
    done, rng, replayed, compared = False, np.random.default_rng(0), 0, 0
    while not done:
        masks = env.action_mask()
        action = [int(rng.choice(np.flatnonzero(m))) for m in masks]
        result = env.step(action)
        done = result.truncated
        k = result.info["message"]
        replay(book, file.messages[replayed:k], orderbook=file.orderbook[replayed:k])
        replayed = k
        view = env.model.view(0)
        row = file.orderbook[k - 1]
        for side, (ticks, lots), name in (
            (BUY, (view.bid_prices[0], view.bid_volumes[0]), "bid"),
            (SELL, (view.ask_prices[0], view.ask_volumes[0]), "ask"),
        ):
            seen = [(int(t), int(v)) for t, v in zip(ticks, lots, strict=True) if v]
            shown = [
                (int(p) // CENTS, int(v))
                for p, v in zip(row[f"{name}_price"], row[f"{name}_size"], strict=True)
                if v
            ]
            assert seen == shown == book.depth(side, levels), (k, side)
        compared += 1
    assert compared == 200 and replayed > 1000


@pytest.mark.needs("sekai-vector")
def test_the_native_batch_equals_the_single_env_on_the_same_windows():
    file = shipped_day()
    kwargs = dict(
        messages=file.messages,
        orderbook=file.orderbook,
        n_ticks=N_TICKS,
        step_seconds=2.0,
        episode_steps=100,
        maker_fee=-0.002,
        taker_fee=0.003,
        entry_latency=0.01,
        data_latency=0.5,
    )
    starts = [0, 37, 37, 200]
    vec = sekai.make_vec("LobsterReplay-v0", len(starts), **kwargs)
    assert type(vec).__name__ == "LobsterReplayVecEnv"
    singles = [LobsterReplayEnv(**kwargs) for _ in starts]  # type: ignore[arg-type]
    obs, _ = vec.reset(seed=0, options=[{"start": s} for s in starts])
    for env, start, row in zip(singles, starts, obs, strict=True):
        assert np.array_equal(env.reset(options={"start": start})[0], row)
    rng = np.random.default_rng(3)
    for _ in range(99):
        actions = []
        for env in singles:
            actions.append([int(rng.choice(np.flatnonzero(m))) for m in env.action_mask()])
        result = vec.step(np.array(actions))
        for i, env in enumerate(singles):
            single = env.step(actions[i])
            assert np.array_equal(single.observation, result.observations[i])
            assert single.reward == result.rewards[i]
            assert single.info["fills"] == result.infos[i]["fills"]
    vec.close()


@pytest.mark.needs("sekai-vector")
@pytest.mark.parametrize(
    "bad",
    [
        [[0, 0, 0], [6, 0, 0]],  # past the bid instruction's range
        [[0, 0, 0], [0, -1, 0]],  # below the ask instruction's
        [[0, 0, 3], [0, 0, 0]],  # past the market order's
        [[0, 0, 0], [0.0, 0.0, 0.0]],  # not integers
        np.zeros((2, 3), bool),  # not integers either
    ],
)
def test_the_native_batch_refuses_a_batch_with_any_row_outside_the_action_space(bad):
    vec = sekai.make_vec("LobsterReplay-v0", 2, episode_steps=5)
    vec.reset(seed=0)
    vec.step(np.array([[0, 0, 0], [5, 5, 2]]))  # the space's corners are rows of it
    with pytest.raises(ValueError, match=r"actions must be rows of MultiDiscrete\(\[6, 6, 3\]\)"):
        vec.step(np.array(bad))
    vec.close()


def test_cash_and_shares_are_conserved_over_100000_random_actions():
    """Every step's fills, booked independently, give the accounts: 100 windows of three
    agents with their own latencies, random allowed actions, until 100,000 were taken."""
    terms = LobsterReplayMarket(
        3,
        entry_latency=[0.0, 0.02, 0.1],
        data_latency=[0.0, 0.3, 0.05],
        step_seconds=0.5,
        episode_steps=400,
        order_size=3,
        max_inventory=12,
        maker_fee=-0.002,
        taker_fee=0.003,
    ).terms
    windows, agents = 100, 3
    model = ReplayModel(terms, windows)
    price = model._price
    rng = np.random.default_rng(0)
    model.reset(np.arange(windows), [None] * windows, rng)
    cash = np.full((windows, agents), 10_000.0)
    shares = np.zeros((windows, agents), np.int64)
    fees = np.zeros((windows, agents))
    taken = fills = 0
    while taken < 100_000:
        actions = np.empty((windows, agents, 3), np.int64)
        for a in range(agents):
            for entry, mask in enumerate(model.masks(a)):  # a random allowed value per entry
                actions[:, a, entry] = np.argmax(rng.random(mask.shape) * mask, axis=1)
        model.step(actions, ["agent_0", "agent_1", "agent_2"], strict=True)
        taken += actions.size // 3
        for w in range(windows):
            for agent, side, tick, lots, maker in model.fill_log(w).tolist():
                sign = 1 if side == BUY else -1
                fee = (-0.002 if maker else 0.003) * lots
                shares[w, agent] += sign * lots
                cash[w, agent] -= sign * price[tick] * lots + fee
                fees[w, agent] += fee
                fills += 1
        assert np.abs(shares).max() <= 12
        assert np.array_equal(shares, model.inventory)
        np.testing.assert_allclose(cash, model.cash, rtol=0, atol=1e-6)
        np.testing.assert_allclose(fees, model.fees, rtol=0, atol=1e-9)
    assert fills > 1000


@pytest.mark.needs("sekai-compat", "pettingzoo")
def test_the_envs_pass_check_env_and_the_parallel_api_test():
    from pettingzoo.test import parallel_api_test

    from sekai.compat import to_pettingzoo

    sekai.check_env(sekai.make("LobsterReplay-v0"))
    market = sekai.make("LobsterReplayMarket-v0", entry_latency=[0.0, 0.05])
    parallel_api_test(to_pettingzoo(market), num_cycles=100)


def test_the_queue_observation_follows_a_random_episode_of_the_default_day():
    env = sekai.make("LobsterReplay-v0")
    obs, _ = env.reset(seed=4)
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(1)
    filled = 0
    for _ in range(300):
        action = [int(rng.choice(np.flatnonzero(m))) for m in env.action_mask()]
        obs, reward, terminated, truncated, info = env.step(action)
        filled += info["fills"]
        bid = env.unwrapped.model.orders[0, 0, BUY]
        assert obs[BID_AHEAD] == (bid[2] if bid[0] >= 0 else 0)
        assert obs[BID_AHEAD - 4] == (bid[1] if bid[0] >= 0 else 0)  # own bid lots
        assert np.isfinite(reward) and not terminated
    assert truncated and filled > 0
    assert env.unwrapped.model.orders[0, 0, SELL, 2] >= 0


def _whole_day() -> np.ndarray:
    """A generated full day, its opening book submitted first (a second before the day), so
    every order's arrival is a message of the stream."""
    day = generate_day(seed=2)
    first = day.messages["time"][0] - 1.0
    opening = [
        (first, SUBMIT, order_id, size, tick * CENTS, BUYS if side == BUY else SELLS)
        for order_id, side, tick, size in day.opening
    ]
    return np.concatenate([np.array(opening, MESSAGE_DTYPE), day.messages])


def _lots_ahead(book: OrderBook, side: int, tick: int, since: int, arrival: dict) -> int:
    """The lots at (side, tick) of the orders that arrived before message ``since``."""
    return sum(o.size for o in book.queue(side, tick) if arrival[o.order_id] < since)


@pytest.mark.parametrize("side", [BUY, SELL])
def test_the_queue_position_is_the_lots_of_the_real_orders_ahead_in_the_fifo_queue(side):
    """Differential, on a generated full day: after every step the agent's lots ahead equal
    the lots of the orders that arrived before it and still rest at its level in
    ``lobster.replay``'s OrderBook; and a fill by an execution at its level of an order
    behind it happens only once nothing is left ahead of it there."""
    messages = _whole_day()
    kinds, ids = messages["type"], messages["order_id"]
    arrival = {int(ids[k]): k for k in np.flatnonzero(kinds == SUBMIT)}
    terms = LobsterReplayMarket(
        1, messages=messages, n_ticks=N_TICKS, step_seconds=1.0, episode_steps=60
    ).terms
    join = np.array([[[JOIN, KEEP, NONE] if side == BUY else [KEEP, JOIN, NONE]]])
    keep = np.zeros((1, 1, 3), np.int64)
    compared = queue_fills = moved_up = 0
    for start in range(0, terms.last_starts[0], 37):
        model = ReplayModel(terms, 1)
        model.reset(np.zeros(1, np.int64), [{"start": start}], np.random.default_rng())
        if not model.masks(0)[side][0, JOIN]:
            continue  # halted
        model.step(join, ["agent_0"], strict=True)
        book = OrderBook(N_TICKS)
        replay(book, messages[: model.cursor[0]])
        tick, _, first_ahead, since = model.orders[0, 0, side].tolist()
        if tick < 0 or model.n_fills[0]:
            continue
        ahead = functools.partial(_lots_ahead, book, side, tick, since, arrival)
        while model.steps[0] < terms.episode_steps:
            assert model.orders[0, 0, side, 2] == ahead(), (start, model.cursor[0])
            compared += 1
            moved_up += ahead() < first_ahead
            replayed = model.cursor[0]
            model.step(keep, ["agent_0"], strict=True)
            for k in range(replayed, model.cursor[0]):
                behind = kinds[k] == EXECUTE and arrival.get(int(ids[k]), -1) >= since
                if behind and messages["price"][k] == tick * CENTS and model.n_fills[0]:
                    assert ahead() == 0, (start, k)
                    queue_fills += 1
                replay(book, messages[k : k + 1])
            if model.orders[0, 0, side, 0] != tick:
                break  # filled whole
    assert compared > 200 and queue_fills > 3 and moved_up > 20


@pytest.mark.parametrize(("seed", "levels"), [(0, 5), (1, 10)])
def test_the_queue_position_follows_the_reconciled_book(seed, levels):
    """Differential, on a generated level-N file with its orderbook: after every step until
    the agent's first fill, its lots ahead equal the legacy volume (which rests at the head)
    plus the lots of the orders that arrived before it, at its level of ``lobster.replay``'s
    reconciled OrderBook; corrections at its level (legacy added and volume cancelled) happen
    along the way."""
    file = ship(generate_day(seed), levels)
    messages, rows = file.messages, file.orderbook
    kinds, ids = messages["type"], messages["order_id"]
    arrival = {int(ids[k]): k for k in np.flatnonzero(kinds == SUBMIT)}
    terms = LobsterReplayMarket(
        1, messages=messages, orderbook=rows, n_ticks=N_TICKS, step_seconds=1.0, episode_steps=40
    ).terms
    day = terms.days[0]
    compared = corrected = 0
    keep = np.zeros((1, 1, 3), np.int64)
    joins = {
        (side, place): np.array([[[place, KEEP, NONE] if side == BUY else [KEEP, place, NONE]]])
        for side, place in itertools.product((BUY, SELL), (JOIN, TWO_BEHIND))
    }
    base, base_cursor = initial_book(messages, rows, n_ticks=N_TICKS), 0  # advanced start by start
    for start in range(0, terms.last_starts[0], 23):
        for (side, place), join in joins.items():
            model = ReplayModel(terms, 1)
            model.reset(np.zeros(1, np.int64), [{"start": start}], np.random.default_rng())
            if not model.masks(0)[side][0, place]:
                continue  # halted
            model.step(join, ["agent_0"], strict=True)
            tick, _, _, since = model.orders[0, 0, side].tolist()
            if tick < 0 or model.n_fills[0]:
                continue
            cursor = int(model.cursor[0])
            replay(base, messages[base_cursor:cursor], orderbook=rows[base_cursor:cursor])
            base_cursor = cursor
            book = pickle.loads(pickle.dumps(base, pickle.HIGHEST_PROTOCOL))  # a copy, fast
            while model.steps[0] < terms.episode_steps and not model.n_fills[0]:
                if model.orders[0, 0, side, 0] != tick:
                    break
                ahead = sum(
                    o.size
                    for o in book.queue(side, tick)
                    if o.owner == LEGACY or arrival[o.order_id] < since
                )
                assert model.orders[0, 0, side, 2] == ahead, (start, side, cursor)
                compared += 1
                model.step(keep, ["agent_0"], strict=True)
                new = int(model.cursor[0])
                at = slice(day.fix_starts[since], day.fix_starts[new])
                corrected += bool(((day.fix_sides[at] == side) & (day.fix_ticks[at] == tick)).any())
                replay(book, messages[cursor:new], orderbook=rows[cursor:new])
                cursor = new
    assert compared > 200 and corrected > 10
