"""ReplayExecution-v0: selling a block inside the replayed day. The shortfall is the block's
arrival value less what the fills brought in; the market orders walk the book best first; with
impact a block sold in two parts at the same moment costs what it costs at once, without impact
the second part meets the levels again; the single env and the native batch agree."""

from __future__ import annotations

import numpy as np
import pytest

import sekai
from sekai.finance import SELL

STARTS = [0, 40, 400, 1000]


def sell(env, fraction):
    return env.step(np.array([fraction], np.float32))


def test_the_env_passes_check_env():
    sekai.check_env(sekai.make("ReplayExecution-v0"))


@pytest.mark.parametrize("start", STARTS)
def test_an_episode_shortfall_is_the_arrival_value_less_the_fills(start):
    """Whatever the schedule, the rewards add up to minus the shortfall: lots sold at the
    arrival mid less the fills' proceeds, every fill a taker's sell at a tick of the grid."""
    env = sekai.make("ReplayExecution-v0", block=12, step_seconds=3.0, episode_steps=8)
    _, info = env.reset(options={"start": start})
    arrival, price = info["arrival_mid"], env.unwrapped.terms.market.price
    total, proceeds, sold, done = 0.0, 0.0, 0, False
    for fraction in (0.3, 0.0, 0.5, 1.0, 0.2, 0.2, 0.2, 0.2):
        _, reward, done, truncated, info = sell(env, fraction)
        step_sold = 0
        for _, side, tick, lots, maker in env.unwrapped.model.model.fill_log(0).tolist():
            assert (side, maker) == (SELL, 0)
            proceeds += lots * price(tick)
            step_sold += lots
        sold += step_sold
        assert info["sold"] == step_sold and info["remaining"] == 12 - sold
        total += reward
        assert not truncated
        if done:
            break
    assert done and info["remaining"] == 0 and info["unsold"] == 0 and sold == 12
    assert total == pytest.approx(proceeds - 12 * arrival, abs=1e-9)
    assert info["shortfall"] == pytest.approx(-total, abs=1e-9)
    assert env.unwrapped.proceeds == pytest.approx(proceeds, abs=1e-9)


def test_a_market_order_walks_the_bids_best_first():
    """Selling the whole block at once takes the levels the observation showed, best first,
    each at its price, up to the block."""
    env = sekai.make("ReplayExecution-v0", block=7, book_levels=10)
    obs, info = env.reset(options={"start": 100})
    levels = env.unwrapped.terms.market.book_levels
    shares = np.rint(obs[4 : 4 + levels] * 7).astype(int)
    behind = np.concatenate([[0], obs[4 + levels : 3 + 2 * levels]]).astype(int)
    best_bid = round((info["mid_price"] * 1e4 - obs[3] * 100 / 2) / 100)  # the grid's ticks
    _, _, done, _, info = sell(env, 1.0)
    fills = env.unwrapped.model.model.fill_log(0)
    expected, left = [], 7
    for lots, below in zip(shares, behind, strict=True):
        if left == 0:
            break
        expected.append((best_bid - below, min(lots, left)))
        left -= min(lots, left)
    assert [(int(t), int(n)) for t, n in fills[:, 2:4]] == expected
    assert done and info["sold"] == 7


def test_the_last_step_sells_what_is_left_and_an_early_sale_ends_the_episode():
    env = sekai.make("ReplayExecution-v0", block=10, episode_steps=10)
    env.reset(seed=3)
    for step in range(10):
        _, _, done, _, info = sell(env, 1 / (10 - step))  # TWAP: one lot a step
        assert info["sold"] == 1
        assert done == (step == 9)
    env.reset(seed=3)
    for _ in range(9):
        _, _, done, _, info = sell(env, 0.0)
        assert not done and info["sold"] == 0
    _, _, done, _, info = sell(env, 0.0)
    assert done and info["sold"] == 10 and info["remaining"] == 0
    env.reset(seed=3)
    _, _, done, _, info = sell(env, 1.0)
    assert done and info["remaining"] == 0


def test_lots_the_levels_cannot_take_are_valued_at_the_deepest_bid_left():
    """A block larger than the ten levels shown: what is left after the walk is charged at
    the deepest bid the window's book still shows, and the shortfall says so."""
    env = sekai.make("ReplayExecution-v0", block=500, book_levels=3, episode_steps=1)
    _, info = env.reset(options={"start": 50})
    arrival = info["arrival_mid"]
    _, reward, done, _, info = sell(env, 1.0)
    unsold = info["unsold"]
    assert done and unsold > 0 and info["remaining"] == unsold
    price = env.unwrapped.terms.market.price
    model = env.unwrapped.model.model
    top = model._top(model.cursor)[0, 0, :, 0]
    deepest = price(top[top >= 0].min())
    proceeds = env.unwrapped.proceeds
    assert reward == pytest.approx(proceeds - 500 * arrival + unsold * deepest, abs=1e-9)
    assert deepest < price(top[0])


@pytest.mark.parametrize("start", [400, 1000, 2000, 3000])
def test_with_impact_a_block_sold_in_two_parts_at_once_costs_what_it_costs_whole(start):
    """No message between the two parts (steps of a microsecond), in books deep enough for
    the block (the day starts from an empty book): with impact, the second
    part meets the levels the first left, so the two cost exactly the whole block at once;
    without impact it meets the same levels again and pays less."""
    kwargs = dict(block=8, step_seconds=1e-6, episode_steps=3, book_levels=10)
    totals = {}
    for impact, schedule in ((True, (0.5, 1.0)), (True, (1.0,)), (False, (0.5, 1.0))):
        env = sekai.make("ReplayExecution-v0", impact=impact, **kwargs)
        env.reset(options={"start": start * 1_000_000})
        total = 0.0
        for fraction in schedule:
            _, reward, done, _, _ = sell(env, fraction)
            total += reward
        assert done
        totals[impact, len(schedule)] = total
    assert totals[True, 2] == pytest.approx(totals[True, 1], abs=1e-9)
    assert totals[False, 2] > totals[True, 2]


@pytest.mark.needs("sekai-vector")
def test_the_single_env_and_the_native_batch_agree_exactly():
    kwargs = dict(block=10, step_seconds=2.0, episode_steps=20)
    vec = sekai.make_vec("ReplayExecution-v0", len(STARTS), **kwargs)
    singles = [sekai.make("ReplayExecution-v0", **kwargs) for _ in STARTS]
    options = [{"start": s} for s in STARTS]
    observations, _ = vec.reset(options=options)
    for env, option, row in zip(singles, options, observations, strict=True):
        np.testing.assert_array_equal(env.reset(options=option)[0], row)
    rng = np.random.default_rng(0)
    running = np.ones(len(STARTS), bool)
    for _ in range(20):
        fractions = rng.random((len(STARTS), 1)).astype(np.float32) * 0.4
        result = vec.step(fractions)
        for i, env in enumerate(singles):
            if not running[i]:
                continue
            obs, reward, done, _, info = env.step(fractions[i])
            running[i] = not done
            assert reward == result.rewards[i]
            assert done == result.terminated[i]
            if not done:
                np.testing.assert_array_equal(obs, result.observations[i])
            assert info["shortfall"] == result.infos[i]["shortfall"]


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="block"):
        sekai.make("ReplayExecution-v0", block=0)
    with pytest.raises(TypeError, match="impact"):
        sekai.make("ReplayExecution-v0", impact="yes")
    env = sekai.make("ReplayExecution-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"outside \[0.0, 1.0\]"):
        sell(env, 1.5)
    with pytest.raises(ValueError, match="shape"):
        env.step(np.array([0.1, 0.2], np.float32))
