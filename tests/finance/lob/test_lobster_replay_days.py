"""LobsterReplay-v0 and LobsterReplayMarket-v0 over a set of days: each generated day replayed
on its own and joined, windows confined to their day, the native batch stepping windows of
several days in one call, the sampler, and bad input."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lobster_days import Shipped, generate_day, ship, write_day

import sekai
import sekai.finance.lob.replay_model as replay_model
from sekai.envs.finance.lobster_replay import LobsterReplayEnv
from sekai.envs.finance.lobster_replay_market import LobsterReplayMarket
from sekai.finance import BUY, SELL
from sekai.finance.lob._replay_day import TICK_MARGIN
from sekai.finance.lob._search import search_after
from sekai.finance.lob.lobster import HALT, MESSAGE_DTYPE, SUBMIT, initial_book, replay

KEEP, NONE = 0, 0
CENTS = 100  # LOBSTER price units per tick
SHIFT = 300  # ticks: day 1 trades higher, so the days' grids differ


def _shifted(file: Shipped, ticks: int) -> Shipped:
    """``file`` with every price ``ticks`` ticks higher (halts and empty levels kept)."""
    messages, rows = file.messages.copy(), file.orderbook.copy()
    priced = messages["type"] != HALT
    messages["price"][priced] += ticks * CENTS
    for name in ("ask", "bid"):
        full = rows[f"{name}_size"] > 0
        rows[f"{name}_price"][full] += ticks * CENTS
    return Shipped(messages, rows, file.index, file.unseen_since)


@functools.cache
def days() -> tuple[Shipped, ...]:
    """Three generated days, their times all from 34,200 s: a level-10 file, a level-5 file
    priced SHIFT ticks higher, and a level-10 file."""
    return (
        ship(generate_day(seed=0), 10),
        _shifted(ship(generate_day(seed=1), 5), SHIFT),
        ship(generate_day(seed=3), 10),
    )


KWARGS = dict(step_seconds=2.0, episode_steps=100, maker_fee=-0.002, taker_fee=0.003)


def days_env(**kwargs: object) -> LobsterReplayEnv:
    files = days()
    return LobsterReplayEnv(
        [f.messages for f in files],
        [f.orderbook for f in files],
        **{**KWARGS, **kwargs},  # type: ignore[arg-type]
    )


def _random_action(env: LobsterReplayEnv, rng: np.random.Generator) -> list[int]:
    """A random allowed action; mostly keep and no market order, so that orders rest in the
    queues for many steps (cancels and executions of the orders around them matter)."""
    action = []
    for mask in env.action_mask():
        allowed = np.flatnonzero(mask)
        action.append(0 if mask[0] and rng.random() < 0.85 else int(rng.choice(allowed)))
    return action


def test_the_days_share_one_grid_and_each_day_is_replayed_on_its_own():
    env = days_env()
    joined = env.terms.days
    files = days()
    highest = max(int(f.messages["price"][f.messages["type"] != HALT].max()) for f in files)
    assert joined.n_ticks == highest // CENTS + 1 + TICK_MARGIN
    assert [len(day) for day in joined] == [len(f.messages) for f in files]
    assert all(day.reconciliations > 0 for day in joined)
    # each day's replay lies in the joined tape at its offset, its message indices offset
    for d, day in enumerate(joined):
        first, end = joined.firsts[d], joined.ends[d]
        assert end - first == len(day)
        for name in ("kinds", "sides", "ticks", "lots"):
            assert np.array_equal(getattr(joined, name)[first:end], getattr(day, name)), name
        assert np.array_equal(joined.arrival[first:end], _offset(day.arrival, first))
        assert np.array_equal(joined.top[first : end + 1], day.top)
        assert np.array_equal(joined.halted[first : end + 1], day.halted)
        fixes = slice(joined.fix_starts[first], joined.fix_starts[end])
        assert np.array_equal(joined.fix_starts[first : end + 1] - fixes.start, day.fix_starts)
        for name in ("fix_sides", "fix_ticks", "fix_lots"):
            assert np.array_equal(getattr(joined, name)[fixes], getattr(day, name)), name
        assert np.array_equal(joined.fix_arrival[fixes], _offset(day.fix_arrival, first))
        trades = slice(joined.trade_floors[d], joined.trade_floors[d] + len(day.trades))
        assert np.array_equal(joined.trades[trades], day.trades + first)
        assert np.array_equal(joined.trade_sizes[trades], day.trade_sizes)
    # each day's deep levels as its own replay has them: the lots at (side, tick) before
    # message k, looked up in the joined history at the day's offset
    rng = np.random.default_rng(0)
    for d, day in enumerate(joined):
        keys = rng.integers(0, 2 * joined.n_ticks, 300)
        keys[:100] = day.sides[:100] * joined.n_ticks + day.ticks[:100]  # levels with messages
        for key, k in zip(keys, rng.integers(0, len(day) + 1, len(keys)), strict=True):
            alone = _lots_before(
                day.starts, day.level_messages, day.level_lots, day.opening, key, k
            )
            in_set = _lots_before(
                joined.starts,
                joined.level_messages,
                joined.level_lots,
                joined.opening,
                key,
                joined.firsts[d] + k,
            )
            assert alone == in_set, (d, key, k)


def _offset(indices: np.ndarray, first: int) -> np.ndarray:
    """Message indices moved ``first`` on; -1 (legacy volume) kept."""
    return np.where(indices >= 0, indices + first, indices)


def _lots_before(starts, messages, lots, opening, key, k):  # type: ignore[no-untyped-def]
    lo, hi = starts[key], starts[key + 1]
    j = lo + np.searchsorted(messages[lo:hi], k)
    return int(opening.reshape(-1)[key] if j == lo else lots[j - 1])


def test_a_window_of_a_day_in_the_set_is_that_window_of_the_day_alone():
    """With the set's grid, day d's windows step exactly as those of day d replayed alone:
    random actions, fees, latencies, every observation, reward and fill."""
    env = days_env(entry_latency=0.01, data_latency=0.5)
    n_ticks = env.terms.days.n_ticks
    rng = np.random.default_rng(5)
    for d, file in enumerate(days()):
        alone = LobsterReplayEnv(
            file.messages,
            file.orderbook,
            n_ticks=n_ticks,
            entry_latency=0.01,
            data_latency=0.5,
            **KWARGS,  # type: ignore[arg-type]
        )
        for start in (0, int(env.terms.last_starts[d])):
            obs, info = env.reset(options={"day": d, "start": start})
            obs_alone, info_alone = alone.reset(options={"start": start})
            assert np.array_equal(obs, obs_alone)
            assert info == {**info_alone, "day": d}
            done = False
            while not done:
                action = _random_action(alone, rng)
                result, single = env.step(action), alone.step(action)
                assert np.array_equal(result.observation, single.observation)
                assert result.reward == single.reward
                assert result.info == {**single.info, "day": d}
                assert np.array_equal(env.fills(), alone.fills())
                done = result.truncated
            assert single.truncated


@pytest.mark.needs("sekai-vector")
def test_the_native_batch_steps_windows_of_every_day_in_one_call_as_single_envs_do(
    monkeypatch,
):
    files = days()
    kwargs = dict(
        messages=[f.messages for f in files],
        orderbook=[f.orderbook for f in files],
        entry_latency=0.01,
        data_latency=0.5,
        **KWARGS,
    )
    windows = [(0, 0), (1, 0), (2, 0), (1, 37), (0, 200), (2, 37), (1, 200), (0, 37), (2, 200)]
    options = [{"day": d, "start": s} for d, s in windows]
    vec = sekai.make_vec("LobsterReplay-v0", len(windows), **kwargs)
    assert type(vec).__name__ == "LobsterReplayVecEnv"
    singles = [LobsterReplayEnv(**kwargs) for _ in windows]  # type: ignore[arg-type]
    calls = []  # the windows of each compiled call
    step_windows = replay_model.step_windows

    def counted(tape, stop, *args):  # type: ignore[no-untyped-def]
        calls.append(len(stop))
        step_windows(tape, stop, *args)

    monkeypatch.setattr(replay_model, "step_windows", counted)
    obs, infos = vec.reset(seed=0, options=options)
    for env, option, row in zip(singles, options, obs, strict=True):
        assert np.array_equal(env.reset(options=option)[0], row)
    assert [infos[i]["day"] for i in range(len(windows))] == [d for d, _ in windows]
    rng = np.random.default_rng(3)
    for _ in range(99):
        actions = [_random_action(env, rng) for env in singles]
        result = vec.step(np.array(actions))
        for i, env in enumerate(singles):
            single = env.step(actions[i])
            assert np.array_equal(single.observation, result.observations[i])
            assert single.reward == result.rewards[i]
            assert single.info["fills"] == result.infos[i]["fills"]
            assert single.info["message"] == result.infos[i]["message"]
            assert result.infos[i]["day"] == windows[i][0]
    # every step of the batch is one call over all its windows; the singles' calls have one
    assert calls.count(len(windows)) == 99 and calls.count(1) == 99 * len(windows)
    assert len(calls) == 99 * (len(windows) + 1)
    vec.close()


def test_a_window_started_near_a_days_end_ends_there_truncated():
    env = days_env()
    joined = env.terms.days
    for d in range(len(joined) - 1):
        _, info = env.reset(options={"day": d, "start": int(env.terms.last_starts[d])})
        done, steps = False, 0
        while not done:
            _, _, terminated, done, info = env.step([KEEP, KEEP, NONE])
            steps += 1
            assert info["day"] == d and not terminated
            assert env.model.cursor[0] <= joined.ends[d]
            assert info["timestamp"] <= joined.last_times[d]
        assert steps == env.terms.episode_steps
        # it ends less than a step before the day's last message, having replayed every
        # message of the day up to then, and its book is the day's row there
        day, k = joined[d], info["message"]
        assert day.time[-1] - info["timestamp"] < env.terms.step_seconds
        assert k == np.searchsorted(day.time, info["timestamp"], "right") <= len(day)
        assert env.model.cursor[0] == joined.firsts[d] + k
        row = days()[d].orderbook[k - 1]
        view = env.model.view(0)
        shown = zip(row["bid_price"], row["bid_size"], strict=True)
        bids = [(int(p) // CENTS, int(v)) for p, v in shown if v]
        seen = zip(view.bid_prices[0], view.bid_volumes[0], strict=True)
        assert [(int(t), int(v)) for t, v in seen if v] == bids[:5]


def test_with_no_agent_orders_each_days_book_is_its_files_after_every_step():
    """The book of each day, reconciled with that day's orderbook file: after every step the
    top levels seen equal the file's row and ``lobster.replay``'s book of that day alone."""
    env = days_env(step_seconds=5.0, episode_steps=200, book_levels=5)
    n_ticks = env.terms.days.n_ticks
    compared = 0
    for d, file in enumerate(days()):
        book = initial_book(file.messages, file.orderbook, n_ticks=n_ticks)
        _, info = env.reset(options={"day": d, "start": 0})
        replay(book, file.messages[: info["message"]], orderbook=file.orderbook[: info["message"]])
        replayed, done = info["message"], False
        while not done:
            result = env.step([KEEP, KEEP, NONE])
            done, k = result.truncated, result.info["message"]
            replay(book, file.messages[replayed:k], orderbook=file.orderbook[replayed:k])
            replayed = k
            view = env.model.view(0)
            row = file.orderbook[k - 1]
            for side, ticks, lots, name in (
                (BUY, view.bid_prices[0], view.bid_volumes[0], "bid"),
                (SELL, view.ask_prices[0], view.ask_volumes[0], "ask"),
            ):
                seen = [(int(t), int(v)) for t, v in zip(ticks, lots, strict=True) if v]
                shown = [
                    (int(p) // CENTS, int(v))
                    for p, v in zip(row[f"{name}_price"], row[f"{name}_size"], strict=True)
                    if v
                ][:5]
                assert seen == shown == book.depth(side, 5), (d, k, side)
            compared += 1
        assert replayed > 1000
    assert compared == 3 * 200


def test_one_day_as_a_one_item_list_is_exactly_that_day(tmp_path):
    file = days()[0]
    messages, orderbook = write_day(tmp_path, file)
    one = LobsterReplayEnv(file.messages, file.orderbook, **KWARGS)  # type: ignore[arg-type]
    listed = LobsterReplayEnv([messages], [orderbook], **KWARGS)  # type: ignore[arg-type]
    assert listed.terms.days.n_ticks == one.terms.days.n_ticks
    for ours, theirs in zip(one.model._tape, listed.model._tape, strict=True):
        assert np.array_equal(ours, theirs)
    rng = np.random.default_rng(2)
    for seed in (0, 1):
        a, b = one.reset(seed=seed), listed.reset(seed=seed)
        assert np.array_equal(a.observation, b.observation) and a.info == b.info
        for _ in range(100):
            action = _random_action(one, rng)
            a, b = one.step(action), listed.step(action)
            assert np.array_equal(a.observation, b.observation)
            assert (a.reward, a.truncated, a.info) == (b.reward, b.truncated, b.info)


def test_the_sampler_draws_every_day_reproducibly():
    env = days_env()
    drawn = [env.reset(seed=seed).info for seed in range(30)]
    assert {info["day"] for info in drawn} == {0, 1, 2}
    again = [env.reset(seed=seed).info for seed in range(30)]
    assert [(i["day"], i["timestamp"]) for i in drawn] == [
        (i["day"], i["timestamp"]) for i in again
    ]
    for d in range(3):  # the day chosen, the start drawn in it
        starts = {env.reset(options={"day": d}).info["timestamp"] for _ in range(10)}
        assert len(starts) > 1
        assert env.reset(options={"day": d}).info["day"] == d
    market = LobsterReplayMarket(2, messages=[f.messages for f in days()], **KWARGS)
    _, infos = market.reset(seed=1, options={"day": 2, "start": 5})
    assert infos["agent_0"]["day"] == 2
    assert infos["agent_1"]["timestamp"] == market.terms.days.first_times[2] + 5 * 2.0


@pytest.mark.needs("sekai-compat", "pettingzoo")
def test_a_set_of_days_passes_check_env_and_the_parallel_api_test():
    from pettingzoo.test import parallel_api_test

    from sekai.compat import to_pettingzoo

    files = days()
    sets = dict(messages=[f.messages for f in files], orderbook=[f.orderbook for f in files])
    sekai.check_env(sekai.make("LobsterReplay-v0", **sets, **KWARGS))
    market = sekai.make("LobsterReplayMarket-v0", entry_latency=[0.0, 0.05], **sets, **KWARGS)
    parallel_api_test(to_pettingzoo(market), num_cycles=100)


def _day(rows: list[tuple[float, int, int, int, int, int]]) -> np.ndarray:
    return np.array(rows, MESSAGE_DTYPE)


def test_bad_sets_of_days_get_clear_errors(tmp_path):
    good = _day([(0.0, SUBMIT, 1, 100, 100_000, 1), (9.0, SUBMIT, 2, 100, 100_100, -1)])
    kwargs = dict(step_seconds=1.0, episode_steps=5)
    with pytest.raises(ValueError, match="messages is an empty list"):
        LobsterReplayEnv([], **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a list of 2 days but orderbook is a list of 1"):
        LobsterReplayEnv([good, good], [None], **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="a list of 2 days but orderbook is one"):
        LobsterReplayEnv([good, good], days()[0].orderbook, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="orderbook is a list of 1 but messages is one day"):
        LobsterReplayEnv(good, [None], **kwargs)  # type: ignore[arg-type]
    bad = tmp_path / "bad.csv"
    bad.write_text("0.0,1,1,100,100000,1\n0.5,9,2,100,100100,-1\n9.0,1,3,100,100100,-1\n")
    with pytest.raises(ValueError, match=r"^day 1: .*bad\.csv line 2: .*type"):
        LobsterReplayEnv([good, bad], **kwargs)  # type: ignore[arg-type]
    off_grid = good.copy()
    off_grid["price"][1] += 50
    with pytest.raises(ValueError, match=r"^day 2: event 1: price 100150 is not on the 100"):
        LobsterReplayEnv([good, good, off_grid], **kwargs)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^day 1: messages must be .*MESSAGE_DTYPE, got ndarray"):
        LobsterReplayEnv([good, np.zeros(3)], **kwargs)  # type: ignore[arg-type]
    short = good.copy()
    short["time"][1] = 3.0
    with pytest.raises(ValueError, match=r"day 1 spans 3\.000 s, shorter than one episode"):
        LobsterReplayEnv([good, short], **kwargs)  # type: ignore[arg-type]
    env = LobsterReplayEnv([good, good], **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"with 2 days, say which, options=\{'day'"):
        env.reset(options={"start": 0})
    with pytest.raises(ValueError, match=r"options\['day'\] must be a day in \[0, 1\]"):
        env.reset(options={"day": 2, "start": 0})
    with pytest.raises(ValueError, match=r"options\['start'\] must be a step in \[0, 4\]"):
        env.reset(options={"day": 1, "start": 5})


@settings(max_examples=300, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 40), min_size=1, max_size=4),
    seed=st.integers(0, 2**32 - 1),
    windows=st.integers(1, 80),
)
def test_a_search_out_from_a_hint_finds_what_a_search_of_the_whole_day_finds(
    lengths, seed, windows
):
    """``search_after`` with any ``near`` (in the day, at its ends, outside it) answers as
    ``np.searchsorted`` over the window's day alone; from 64 windows on it runs in parallel."""
    rng = np.random.default_rng(seed)
    # days of repeated, sorted times (ties are the rule: messages share a timestamp)
    days = [np.sort(rng.integers(0, 20, n)).astype(np.float64) for n in lengths]
    ends = np.cumsum([len(d) + 1 for d in days]) - 1  # one padding message after each day
    firsts = ends - np.array(lengths)
    time = np.full(ends[-1] + 1, np.inf)
    for d, first in zip(days, firsts, strict=True):
        time[first : first + len(d)] = d
    day = rng.integers(0, len(days), windows)
    times = rng.uniform(-2, 22, (windows, 3)).round(0)  # on the ties, and past both ends
    near = rng.integers(-3, len(time) + 3, windows)
    found = search_after(time, firsts, ends, day, times, near)
    for w in range(windows):
        expected = firsts[day[w]] + np.searchsorted(days[day[w]], times[w], "right")
        assert found[w].tolist() == expected.tolist()
    assert (search_after(time, firsts, ends, day, times, None) == found).all()
