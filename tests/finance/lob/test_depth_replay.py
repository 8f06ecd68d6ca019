"""DepthReplay-v0 (docs/limit-order-book.md, "Depth-only data"): its fills on hand-made days,
the single env against the native batch, its readers, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from depth_files import FOLDER, depth_day

import sekai
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.depth import (
    DEPTH_DTYPE,
    TRADE_DTYPE,
    levels_to_depth,
    lobster_depth,
    read_l2_csv,
    read_trades_csv,
)
from sekai.finance.lob.lobster import MESSAGE_DTYPE, orderbook_dtype
from sekai.finance.lob.queue_models import PowerProbQueue

S = 1_000_000_000  # ns
AHEAD = 4 * 5 + 7  # the observation's lots ahead of the bid
L2, TRADES = FOLDER / "SEKA_l2.csv", FOLDER / "SEKA_trades.csv"


def rows(dtype, *items):
    return np.array([(int(t * S), side, price, size) for t, side, price, size in items], dtype)


BOOK = [(0.0, BUY, 100_000, 5), (0.0, SELL, 100_100, 5)]  # 5 lots bid at $10.00, 5 at $10.01


def replay(updates, trades, actions, **kwargs):
    """The env stepped on ``actions`` from the day's start: per step, its fills and the bid's
    lots ahead."""
    env = sekai.make(
        "DepthReplay-v0",
        depth=rows(DEPTH_DTYPE, *BOOK, *updates, (9.0, SELL, 100_100, 5)),
        trades=rows(TRADE_DTYPE, *trades),
        episode_steps=6,
        **kwargs,
    )
    env.reset(options={"start": 0})
    fills, ahead = [], []
    for action in actions:
        observation, *_ = env.step(action)
        fills.append(env.unwrapped.fills()[:, 1:4].tolist())
        ahead.append(int(observation[AHEAD]))
    return fills, ahead


JOIN, KEEP = [3, 0, 0], [0, 0, 0]


def test_trades_at_the_price_fill_what_goes_beyond_the_queue():
    trades = [(1.5, SELL, 100_000, 3), (2.5, SELL, 100_000, 4), (3.5, SELL, 99_900, 1)]
    fills, ahead = replay([], trades, [JOIN, KEEP, KEEP, KEEP], order_size=3)
    # 5 ahead; 3 traded: 2 ahead; 4 traded: 2 fill; a trade below the bid fills the last lot
    assert fills == [[], [], [[BUY, 1000, 2]], [[BUY, 1000, 1]]]
    assert ahead == [5, 2, 0, 0]


def test_a_trade_comes_before_the_level_update_of_its_timestamp():
    # 3 lots trade at the bid and the level shows 2 left, both at 1.5 s: the trade moves the
    # agent up to 2 ahead and the update changes nothing (the other way round, the update
    # would cap it at 2 and the trade fill 1 lot)
    updates, trades = [(1.5, BUY, 100_000, 2)], [(1.5, SELL, 100_000, 3)]
    fills, ahead = replay(updates, trades, [JOIN, KEEP], order_size=3)
    assert fills == [[], []] and ahead == [5, 2]


def test_the_other_side_reaching_the_price_fills_all_that_remains():
    updates = [(1.5, SELL, 100_000, 2)]  # an ask at the agent's bid
    fills, _ = replay(updates, [], [JOIN, KEEP], order_size=3)
    assert fills == [[], [[BUY, 1000, 3]]]


@pytest.mark.parametrize(("model", "after"), [("risk_averse", 5), (PowerProbQueue(1), 3)])
def test_level_changes_move_the_queue_as_the_model_says(model, after):
    # the level grows to 10 (5 behind the agent), then drops to 6: power 1 splits the 4 lots
    # by 5 ahead to 5 behind, 5 - 2 = 3; risk-averse only caps at 6
    updates = [(1.2, BUY, 100_000, 10), (1.7, BUY, 100_000, 6)]
    _, ahead = replay(updates, [], [JOIN, KEEP], queue_model=model)
    assert ahead == [5, after]


@pytest.mark.needs("sekai-vector")
def test_the_single_env_and_the_native_batch_agree_exactly():
    kwargs = dict(depth=L2, trades=TRADES, queue_model="log", step_seconds=1.0, episode_steps=40,
                  entry_latency=0.3, data_latency=0.2, max_inventory=3)  # fmt: skip
    starts = [0, 17, 55, 90]
    vec = sekai.make_vec("DepthReplay-v0", len(starts), **kwargs)
    singles = [sekai.make("DepthReplay-v0", **kwargs) for _ in starts]
    observations, _ = vec.reset(seed=0, options=[{"start": s} for s in starts])
    for env, s, observation in zip(singles, starts, observations, strict=True):
        np.testing.assert_array_equal(env.reset(options={"start": s})[0], observation)
    rng = np.random.default_rng(0)
    filled = 0
    for _ in range(39):  # the 40th step ends the episodes: the batch resets them
        actions = rng.integers(0, [6, 6, 3], (len(starts), 3))
        observations, rewards, _, _, infos = vec.step(actions)
        for j, env in enumerate(singles):
            observation, reward, _, _, info = env.step(actions[j])
            np.testing.assert_array_equal(observation, observations[j])
            assert reward == rewards[j] and info["fills"] == infos[j]["fills"]
            filled += info["fills"]
    assert filled > 20


def test_the_shipped_files_read_back_as_the_day():
    depth, trades = depth_day()
    np.testing.assert_array_equal(read_l2_csv(L2), depth)
    np.testing.assert_array_equal(read_trades_csv(TRADES), trades)


def test_levels_to_depth_keeps_a_level_that_falls_off_the_shown_depth():
    book = np.zeros(3, orderbook_dtype(2))
    book["bid_price"] = [[100, 99], [101, 100], [101, 0]]
    book["bid_size"] = [[5, 4], [1, 5], [1, 0]]
    updates = levels_to_depth(np.array([1, 2, 3]), book)
    assert updates[["time", "side", "price", "size"]].tolist() == [
        (1, BUY, 100, 5), (1, BUY, 99, 4),
        (2, BUY, 101, 1),  # 99 fell off the two levels shown: it keeps its 4 lots
        (3, BUY, 100, 0),  # one level shown: the side is whole, 100 is gone
    ]  # fmt: skip


def test_lobster_depth_takes_the_executions_as_trades():
    messages = np.array(
        [(0.0, 1, 1, 5, 100_000, 1), (1.0, 4, 1, 2, 100_000, 1), (2.0, 5, 0, 3, 100_100, -1)],
        MESSAGE_DTYPE,
    )
    book = np.zeros(3, orderbook_dtype(1))
    book["bid_price"], book["bid_size"] = [[100_000]] * 3, [[5], [3], [3]]
    updates, trades = lobster_depth(messages, book)
    assert updates.tolist() == [(0, BUY, 100_000, 5), (S, BUY, 100_000, 3)]
    # the taker: a seller hit the bid, a buyer took hidden volume at the ask
    assert trades.tolist() == [(S, SELL, 100_000, 2), (2 * S, BUY, 100_100, 3)]


@pytest.mark.needs("databento-dbn")
def test_mbp10_trades_leave_out_those_without_an_aggressor(tmp_path):
    from synthetic_formats import derive_mbp10

    from sekai.finance.lob.databento import _records, read_dbn_trades

    mbo = FOLDER.parent / "synthetic" / "SEKA.mbo.dbn.zst"
    path = derive_mbp10(mbo, tmp_path / "SEKA.mbp-10.dbn")
    _, records = _records(path, "mbp-10")
    taken = (records["action"] == b"T") & (records["side"] != b"N")
    trades = read_dbn_trades(path)
    assert len(trades) == taken.sum() > 0
    np.testing.assert_array_equal(trades["size"], records["size"][taken])
    np.testing.assert_array_equal(trades["side"], np.where(records["side"][taken] == b"B", 0, 1))
    env = sekai.make("DepthReplay-v0", depth=path, step_seconds=1.0, episode_steps=60)
    observation, _ = env.reset(seed=0)  # its level rows as updates, its own trades
    assert len(env.unwrapped.terms.days.trades) == len(trades) and observation[0] > 0


def test_a_crossed_book_names_the_file_and_line(tmp_path):
    path = tmp_path / "l2.csv"
    path.write_text(
        "time,side,price,size\n1,bid,10.00,5\n1,ask,10.01,5\n2,bid,10.01,1\n2,ask,10.01,0\n"
        "2,ask,10.02,5\n3,bid,10.02,1\n"
    )
    # line 4 crosses for a moment only: at the end of its timestamp the ask is gone
    with pytest.raises(ValueError, match=r"l2.csv line 7: the book is crossed at the end of"):
        read_l2_csv(path)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("time,side,price\n", "line 1: the header must be"),
        ("time,side,price,size\n1,bid,10.00,5\n0,bid,10.00,4\n", "line 3: time goes backwards"),
        ("time,side,price,size\n1,buy,10.00,5\n", "line 2: side must be bid or ask"),
        ("time,side,price,size\n1,bid,10.00001,5\n", "line 2: price 10.00001 is not"),
        ("time,side,price,size\n1,bid,10.00,-1\n", "line 2: size -1 must be >= 0"),
    ],
)
def test_bad_l2_lines_are_named(tmp_path, text, problem):
    path = tmp_path / "l2.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=problem):
        read_l2_csv(path)


def test_bad_env_input_is_named():
    with pytest.raises(ValueError, match="queue_model must be a QueueModel or one of"):
        sekai.make("DepthReplay-v0", depth=L2, trades=TRADES, queue_model="fifo")
    with pytest.raises(ValueError, match="PowerProbQueue: the exponent n must be"):
        sekai.make("DepthReplay-v0", depth=L2, trades=TRADES, queue_model=PowerProbQueue(-2))
    with pytest.raises(ValueError, match="trades= is needed"):
        sekai.make("DepthReplay-v0", depth=L2)
    with pytest.raises(TypeError, match="trades must be a file's path or an array"):
        sekai.make("DepthReplay-v0", depth=L2, trades=[1, 2])
