"""LobsterReplay-v0 on a Parquet event store: days read and replayed when a window needs them,
the tape holding only the days in use, every trajectory the one of the same days given as data."""

from __future__ import annotations

import datetime
from pathlib import Path

import numpy as np
import pytest
from synthetic_formats import SYMBOL, synthetic_day

from sekai.envs.finance.lobster_replay import LobsterReplayEnv
from sekai.finance.lob import store
from sekai.finance.lob.events import DAY
from sekai.finance.lob.replay_model import ReplayModel, build_terms

pytestmark = pytest.mark.needs("pyarrow")
FIRST = datetime.date(2024, 1, 2)
N_DAYS = 4
TERMS = dict(
    orderbook=None,
    symbol=SYMBOL,
    tick=100,
    price_offset=0,
    n_ticks=None,
    step_seconds=1.0,
    episode_steps=20,
    order_size=1,
    max_inventory=5,
    initial_cash=10_000.0,
    book_levels=5,
    last_trades=3,
    maker_fee=0.0,
    taker_fee=0.0,
    entry_latency=0.0,
    data_latency=0.0,
    sampler=None,
)


@pytest.fixture(scope="module")
def days() -> list[np.ndarray]:
    """Four days of the synthetic flow, on 2024-01-02 to 2024-01-05 (seeds 0 to 3)."""
    found = []
    for d in range(N_DAYS):
        events = synthetic_day(seed=d, n_events=1_500)
        events["time"] += d * DAY
        found.append(events)
    return found


@pytest.fixture
def root(tmp_path: Path, days: list[np.ndarray]) -> Path:
    for events in days:
        store.write_events(tmp_path / "store", SYMBOL, events)
    return tmp_path / "store"


def test_the_store_env_replays_one_day_at_a_time_as_the_days_given_as_data(root, days):
    env = LobsterReplayEnv(root, symbol=SYMBOL, step_seconds=1.0, episode_steps=20)
    assert len(env.terms.days) == N_DAYS and env.terms.days.resident == [0]
    for d in (2, 0, 3):
        alone = LobsterReplayEnv(days[d], step_seconds=1.0, episode_steps=20)
        observation, info = env.reset(options={"day": d, "start": 5})
        expected, _ = alone.reset(options={"start": 5})
        assert info["day"] == d and env.terms.days.resident == [d]
        assert np.array_equal(observation, expected)
        rng = np.random.default_rng(d)
        for _ in range(20):
            action = rng.integers(0, [6, 6, 3])  # masked entries are done as keep
            a, b = env.step(action), alone.step(action)
            assert np.array_equal(a.observation, b.observation) and a.reward == b.reward


@pytest.mark.parametrize("impact", [False, True])
def test_the_tape_follows_the_windows_and_their_indices_move_with_their_days(root, days, impact):
    """Windows restart in new days while others are mid-episode: the stored tape swaps days
    in and out and moves the running windows' indices (with impact, the queue positions
    follow); every step equals the eager set's."""
    stored = ReplayModel(build_terms(1, messages=root, days=None, impact=impact, **TERMS), 6)
    eager = ReplayModel(build_terms(1, messages=days, days=None, impact=impact, **TERMS), 6)
    rng, draws = np.random.default_rng(0), np.random.default_rng(1)
    every = np.arange(6)
    first = [{"day": d, "start": 3 * d} for d in (1, 1, 2, 1, 2, 1)]
    infos = [model.reset(every, first, np.random.default_rng(9)) for model in (stored, eager)]
    assert infos[0]["message"].tolist() == infos[1]["message"].tolist()
    seen = set()
    for step in range(80):
        if step % 5 == 4:  # two windows start over in a day drawn now
            indices = np.array([step % 6, (step + 3) % 6])
            options = [{"day": int(draws.integers(N_DAYS)), "start": 0} for _ in indices]
            for model in (stored, eager):
                model.reset(indices, options, np.random.default_rng(step))
        resident = stored.terms.days.resident
        assert resident == sorted(set(stored.day.tolist()))  # the days in use, no more
        seen.add(tuple(resident))
        actions = rng.integers(0, [6, 6, 3], size=(6, 1, 3))
        a = stored.step(actions, ["agent"], strict=False)
        b = eager.step(actions, ["agent"], strict=False)
        assert np.array_equal(a[0], b[0]), step
        assert np.array_equal(stored.observe(), eager.observe()), step
        assert np.array_equal(stored.cash, eager.cash) and np.array_equal(
            stored.inventory, eager.inventory
        )
    assert len(seen) > 3 and any(0 in r for r in seen) and any(3 in r for r in seen)
    assert not impact or stored.deficits.any()


def test_days_choose_a_range_or_a_list(root):
    kwargs = dict(symbol=SYMBOL, step_seconds=1.0, episode_steps=20)
    ranged = LobsterReplayEnv(root, days=("2024-01-03", "2024-01-04"), **kwargs)
    assert ranged.terms.days.dates == [datetime.date(2024, 1, 3), datetime.date(2024, 1, 4)]
    listed = LobsterReplayEnv(root, days=["2024-01-05", FIRST], **kwargs)
    assert listed.terms.days.dates == [datetime.date(2024, 1, 5), FIRST]
    with pytest.raises(ValueError, match=r"no day 2024-01-09 \(the store holds 4 days"):
        LobsterReplayEnv(root, days=["2024-01-09"], **kwargs)
    with pytest.raises(ValueError, match="no day of SEKA in"):
        LobsterReplayEnv(root, days=("2023-01-01", "2023-12-31"), **kwargs)
    with pytest.raises(TypeError, match="days must be None, a list of dates or a"):
        LobsterReplayEnv(root, days="2024-01-03", **kwargs)
    with pytest.raises(ValueError, match="a store holds many symbols: give symbol="):
        LobsterReplayEnv(root, step_seconds=1.0, episode_steps=20)
    with pytest.raises(ValueError, match="days= chooses days of a Parquet store"):
        LobsterReplayEnv(days=["2024-01-03"], step_seconds=1.0, episode_steps=20)


@pytest.mark.needs("sekai-vector")
def test_a_batch_of_1024_windows_runs_on_the_store_and_holds_the_days_in_use(root):
    import sekai

    vec = sekai.make_vec(
        "LobsterReplay-v0", 1024, messages=root, symbol=SYMBOL, step_seconds=1.0, episode_steps=20
    )
    observations, infos = vec.reset(seed=0)
    in_use = sorted({info["day"] for info in infos})
    assert observations.shape == (1024, 41) and in_use == list(range(N_DAYS))
    rng = np.random.default_rng(0)
    for _ in range(45):  # past two episodes: every window starts again, in a day drawn anew
        result = vec.step(rng.integers(0, [6, 6, 3], size=(1024, 3)))
    days = vec.template.terms.days
    assert days.resident == sorted({info["day"] for info in result.infos})
    assert np.isfinite(result.observations).all()
    vec.close()


def test_a_day_that_fails_to_load_leaves_the_tape_as_it_was(root):
    env = LobsterReplayEnv(root, symbol=SYMBOL, step_seconds=1.0, episode_steps=20)
    days = env.terms.days
    env.reset(options={"day": 1, "start": 0})
    before = (days.resident, days.firsts.copy(), days.kinds.copy())
    broken = root / f"symbol={SYMBOL}" / "date=2024-01-04" / "events.parquet"
    broken.write_bytes(b"not parquet")
    with pytest.raises(ValueError, match=r"^day 2: .*date=2024-01-04.*not readable as Parquet"):
        env.reset(options={"day": 2, "start": 0})
    assert days.resident == before[0] and np.array_equal(days.firsts, before[1])
    assert np.array_equal(days.kinds, before[2])
    _, info = env.reset(options={"day": 0, "start": 0})  # the env goes on
    assert info["day"] == 0 and days.resident == [0]
