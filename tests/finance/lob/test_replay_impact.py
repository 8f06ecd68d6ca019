"""LobsterReplay-v0 with impact=True: the compiled windows against an order-by-order
reference (impact_reference.py) on both sample-like days, conservation of shares and cash
between the agent and the replayed world, the single env against the native batch, and the
combinations impact refuses."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from impact_reference import RealBook
from lobster_days import N_TICKS, generate_day, ship

import sekai
from sekai.envs.finance.lobster_replay import LobsterReplayEnv
from sekai.finance import BUY, SELL
from sekai.finance.lob.replay_model import ReplayModel


@functools.cache
def l3_day() -> np.ndarray:
    """A generated full L3 day (lobster_days), its messages alone."""
    return generate_day(7, events=40_000).messages


DAYS = {
    "lobster_days": dict(messages="l3", n_ticks=N_TICKS, step_seconds=2.0, order_size=300),
    "default": dict(step_seconds=1.0, order_size=4),
}


def impact_terms(day: str, **kwargs: Any) -> Any:
    options = dict(DAYS[day])
    if options.pop("messages", None) == "l3":
        options["messages"] = l3_day()
    options = {"episode_steps": 60, "max_inventory": 2_000, **options, **kwargs}
    return LobsterReplayEnv(impact=True, **options).terms  # type: ignore[arg-type]


def random_actions(model: ReplayModel, rng: np.random.Generator) -> np.ndarray:
    actions = np.empty((model.num_envs, 1, 3), np.int64)
    for entry, mask in enumerate(model.masks(0)):
        actions[:, 0, entry] = np.argmax(rng.random(mask.shape) * mask, axis=1)
    return actions


@pytest.mark.parametrize("day", sorted(DAYS))
def test_the_windows_agree_with_an_order_by_order_reference(day):
    """A random agent (market orders two steps in three) in consecutive windows of the day,
    over 100,000 messages: every step's fills, the account, the agent's orders (with the lots
    ahead of them) and the top levels of the book equal the reference's."""
    terms = impact_terms(day)
    model = ReplayModel(terms, 1)
    calls: list[tuple[Any, ...]] = []
    step = model._step_windows

    def recorded(stop: np.ndarray, instructions: tuple[Any, ...]) -> None:
        calls.append((int(stop[0]), *(int(x[0, 0]) for x in instructions)))
        step(stop, instructions)

    model._step_windows = recorded  # type: ignore[method-assign]
    real = RealBook(terms.days)
    rng = np.random.default_rng(1)
    levels = terms.days.levels
    last = int(terms.last_starts[0])
    messages = 0
    adapted = dict.fromkeys(("cancel", "execution", "next level", "submission"), 0)
    start = 0
    while messages < 100_000:
        model.reset(np.arange(1), [{"start": start}], rng)
        window = real.window(int(model.cursor[0]), model._terms, model._price, levels, 10_000.0)
        for _ in range(terms.episode_steps):
            model.step(random_actions(model, rng), ["agent"], strict=True)
            stop, entry, bid, ask, market, lots = calls[-1]
            assert lots == terms.market.order_size
            window.step(entry, bid, ask, market, stop)
            assert window.k == model.cursor[0]
            assert model.fill_log(0).tolist() == [list(f) for f in window.fills]
            assert model.inventory[0, 0] == window.inventory
            assert model.cash[0, 0] == window.cash and model.fees[0, 0] == window.fees
            assert np.array_equal(model._top(model.cursor)[0], window.top(levels))
            for side in (BUY, SELL):
                quote = window.quotes[side]
                held = model.orders[0, 0, side]
                if quote is None:
                    assert held[0] == -1
                else:
                    assert held[:2].tolist() == quote[:2]
                    assert held[2] == window.ahead(side)
        messages += int(model.cursor[0]) - int(window.real.k)
        adapted = {key: adapted[key] + window.adapted[key] for key in adapted}
        start = (start + terms.episode_steps + 7) % (last + 1)
    assert min(adapted.values()) > 500, adapted  # every adaptation rule was exercised


@pytest.mark.parametrize("day", sorted(DAYS))
def test_shares_and_cash_are_conserved_and_the_book_never_crosses(day):
    """Over 100,000 messages in 32 windows of random agents: every fill, booked on its own,
    moves the agent's shares and cash by what the world's side of it gave and took (the
    accounts equal the fills' sums), the inventory stays within its cap, no level of any
    window is negative and no window's book is crossed."""
    terms = impact_terms(day, max_inventory=600 if day == "lobster_days" else 40)
    windows = 32
    model = ReplayModel(terms, windows)
    price = model._price
    rng = np.random.default_rng(2)
    model.reset(np.arange(windows), [None] * windows, rng)
    messages = 0
    shares = np.zeros(windows, np.int64)
    cash = np.full(windows, 10_000.0)
    while messages < 100_000:
        before = model.cursor.copy()
        model.step(random_actions(model, rng), ["agent"], strict=True)
        messages += int((model.cursor - before).sum())
        for w in range(windows):
            for _, side, tick, lots, _maker in model.fill_log(w).tolist():
                sign = 1 if side == BUY else -1
                shares[w] += sign * lots
                cash[w] -= sign * price[tick] * lots
        assert np.array_equal(shares, model.inventory[:, 0])
        np.testing.assert_allclose(cash, model.cash[:, 0], rtol=0, atol=1e-6)
        top = model._top(model.cursor)
        assert (top[:, :, :, 1] >= 0).all()
        assert (model.deficits >= 0).all()
        bid, ask = top[:, BUY, 0, 0], top[:, SELL, 0, 0]
        assert not ((bid >= 0) & (ask >= 0) & (bid >= ask)).any()
        done = np.flatnonzero(model.steps >= terms.episode_steps)
        if len(done):
            model.reset(done, [None] * len(done), rng)
            shares[done] = 0
            cash[done] = 10_000.0
    assert np.abs(model.inventory).max() <= terms.market.max_inventory


@pytest.mark.parametrize("day", sorted(DAYS))
def test_a_market_order_removes_exactly_the_lots_it_takes(day):
    """In 64 windows whose books random agents have already changed, a market order (alone,
    no message after it) takes lots from the window's levels, best first: each level it
    traded at loses exactly the lots of that fill, the others none; the agent's shares
    change by the lots the book lost."""
    terms = impact_terms(day)
    windows = 64
    model = ReplayModel(terms, windows)
    rng = np.random.default_rng(4)
    model.reset(np.arange(windows), [None] * windows, rng)
    for _ in range(10):
        model.step(random_actions(model, rng), ["agent"], strict=True)
    keep = np.full((windows, 1), -1, np.int64)
    sides = rng.integers(0, 2, (windows, 1))
    before, shares = model.deficits.copy(), model.inventory[:, 0].copy()
    entry = model.cursor[:, None].copy()
    lots = np.full((windows, 1), model.terms.market.order_size, np.int64)
    model._step_windows(model.cursor.copy(), (entry, keep, keep, sides, lots))
    for w in range(windows):
        taken = np.zeros_like(before[w])
        for _, side, tick, lots, maker in model.fill_log(w).tolist():
            assert maker == 0
            taken[1 - side, tick] += lots
        assert np.array_equal(model.deficits[w] - before[w], taken)
        bought = taken[SELL].sum() - taken[BUY].sum()
        assert model.inventory[w, 0] - shares[w] == bought
    assert (model.deficits != before).any(axis=(1, 2)).sum() > windows // 2


def test_impact_refuses_an_orderbook_and_a_bad_flag():
    file = ship(generate_day(3, events=600), 5)
    with pytest.raises(ValueError, match="impact=True cannot be reconciled with orderbook rows"):
        LobsterReplayEnv(file.messages, file.orderbook, n_ticks=N_TICKS, impact=True)
    with pytest.raises(TypeError, match="impact must be True or False, got 'yes'"):
        LobsterReplayEnv(impact="yes")  # type: ignore[arg-type]


@pytest.mark.needs("sekai-vector")
def test_the_native_batch_equals_the_single_env_with_impact():
    kwargs = dict(episode_steps=50, order_size=5, max_inventory=40, impact=True)
    starts = [0, 37, 37, 900]
    vec = sekai.make_vec("LobsterReplay-v0", len(starts), **kwargs)
    singles = [LobsterReplayEnv(**kwargs) for _ in starts]  # type: ignore[arg-type]
    obs, _ = vec.reset(seed=0, options=[{"start": s} for s in starts])
    for env, start, row in zip(singles, starts, obs, strict=True):
        assert np.array_equal(env.reset(options={"start": start})[0], row)
    rng = np.random.default_rng(3)
    for _ in range(49):
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


def test_a_large_sell_moves_the_book_only_with_impact():
    """Selling 40 lots every 0.2 s for 20 steps from the same start: without impact the best
    bid is the replayed day's; with it the bids sold into are gone, so it is never higher,
    and the mid is lower most steps (the flow has not refilled them)."""
    bids, mids = {}, {}
    for impact in (False, True):
        env = LobsterReplayEnv(
            step_seconds=0.2, episode_steps=20, order_size=40, max_inventory=800, impact=impact
        )
        env.reset(options={"start": 3000})
        model, path, best = env.model, [], []
        for _ in range(20):
            path.append(env.step([0, 0, 2]).info["mid_price"])
            best.append(model._top(model.cursor)[0, BUY, 0, 0])
            assert impact or best[-1] == model.terms.days.best[model.cursor[0], BUY]
        bids[impact], mids[impact] = np.array(best), np.array(path)
        assert model.inventory[0, 0] < -100
    assert (bids[True] <= bids[False]).all() and (bids[True] < bids[False]).sum() >= 10
    assert (mids[True] < mids[False]).sum() >= 10


def test_a_day_of_a_set_with_impact_is_that_day_alone():
    """Each day's queues start empty: a window in day 1 of a set of two days steps exactly as
    the same window of day 1 replayed alone (on the same grid)."""
    days = [generate_day(seed, events=3_000).messages for seed in (4, 5)]
    kwargs = dict(n_ticks=N_TICKS, episode_steps=40, order_size=200, max_inventory=2_000)
    both = LobsterReplayEnv(days, impact=True, **kwargs)  # type: ignore[arg-type]
    alone = LobsterReplayEnv(days[1], impact=True, **kwargs)  # type: ignore[arg-type]
    obs = both.reset(options={"day": 1, "start": 3})[0]
    assert np.array_equal(obs, alone.reset(options={"start": 3})[0])
    rng = np.random.default_rng(5)
    fills = 0
    for _ in range(40):
        action = [int(rng.choice(np.flatnonzero(m))) for m in both.action_mask()]
        result = both.step(action)
        assert np.array_equal(result.observation, alone.step(action).observation)
        assert np.array_equal(both.fills(), alone.fills())
        fills += result.info["fills"]
    assert fills > 10 and both.model.deficits.any()


def test_the_env_with_impact_passes_check_env():
    sekai.check_env(sekai.make("LobsterReplay-v0", impact=True))
