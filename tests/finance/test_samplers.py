"""Episode samplers: ranges, tiling, spawning, date splits and the start option."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import sekai
from sekai.finance import DateRange, EpisodeSampler, RandomStart, SequentialStart
from sekai.finance.history import EpisodeStarts
from sekai.finance.samplers import resolve_sampler


@given(st.integers(0, 50), st.integers(0, 50), st.integers(1, 30), st.integers(1, 20))
def test_sequential_start_stays_in_range_and_steps_by_stride(start, span, stride, draws):
    first, last = 10, 10 + span
    sampler = SequentialStart(start=start, stride=stride)
    starts = sampler.sample(np.random.default_rng(0), first, last, 5, draws)
    assert ((starts >= first) & (starts <= last)).all()
    expected = first + (start + stride * np.arange(draws)) % (span + 1)
    assert starts.tolist() == expected.tolist()


def test_sequential_start_tiles_by_episode_length_and_spawns_fresh_copies():
    sampler = SequentialStart()
    assert sampler.sample(None, 10, 157, 21, 3).tolist() == [10, 31, 52]  # type: ignore[arg-type]
    child = sampler.spawn()
    assert child is not sampler and child.episodes == sampler.episodes
    child.sample(None, 10, 157, 21, 1)  # type: ignore[arg-type]
    assert sampler.episodes == 3


def test_random_start_is_shared_and_covers_the_range():
    sampler = RandomStart()
    assert sampler.spawn() is sampler
    starts = sampler.sample(np.random.default_rng(0), 10, 20, 5, 2000)
    assert starts.min() == 10 and starts.max() == 20 and len(set(starts.tolist())) == 11


def test_date_range_keeps_whole_episodes_inside_the_range(googl):
    length = 21
    train = DateRange(googl.dates, end="2016-01-01")
    test = DateRange(googl.dates, start="2016-01-01", inner=SequentialStart())
    rng = np.random.default_rng(0)
    last = len(googl) - 1 - length
    train_starts = train.sample(rng, 10, last, length, 500)
    assert (googl.dates[train_starts + length] < np.datetime64("2016-01-01")).all()
    test_starts = test.spawn().sample(rng, 10, last, length, 10)
    assert (googl.dates[test_starts] >= np.datetime64("2016-01-01")).all()
    assert np.diff(test_starts).tolist() == [length] * 9
    assert test.spawn() is not test and train.spawn() is train
    with pytest.raises(ValueError, match="no episode of 21 steps fits"):
        DateRange(googl.dates, start="2030-01-01").sample(rng, 10, last, length, 1)


def test_a_date_range_split_drives_the_env(googl):
    env = sekai.make(
        "Trading-v0",
        prices=googl.close,
        episode_length=21,
        sampler=DateRange(googl.dates, start="2017-01-01"),
    )
    for seed in range(5):
        _, info = env.reset(seed=seed)
        assert googl.dates[info["timestamp"]] >= np.datetime64("2017-01-01")


def test_resolve_sampler_names_and_errors():
    assert isinstance(resolve_sampler(None), RandomStart)
    assert isinstance(resolve_sampler("sequential"), SequentialStart)
    with pytest.raises(ValueError, match="'forward'"):
        resolve_sampler("forward")
    with pytest.raises(ValueError, match="stride"):
        SequentialStart(stride=0)


class _Params:
    def __init__(self, sampler: EpisodeSampler) -> None:
        self.sampler = sampler


def test_episode_starts_override_respawn_and_check_a_bad_sampler():
    params = _Params(SequentialStart())
    starts = EpisodeStarts(params, 3)
    rng = np.random.default_rng(0)
    indices = np.arange(3)
    assert starts.draw(indices, [None] * 3, rng, 10, 100, 10).tolist() == [10, 10, 10]
    assert starts.draw(indices, [None, {"start": 50}, None], rng, 10, 100, 10).tolist() == [
        20,
        50,
        20,
    ]
    params.sampler = SequentialStart(start=5)  # a new sampler is spawned again
    assert starts.draw(indices[:1], [None], rng, 10, 100, 10).tolist() == [15]
    with pytest.raises(ValueError, match=r"outside \[10, 100\]"):
        starts.draw(indices[:1], [{"start": 101}], rng, 10, 100, 10)
    with pytest.raises(ValueError, match="unknown reset options"):
        starts.draw(indices[:1], [{"begin": 11}], rng, 10, 100, 10)

    class Broken(EpisodeSampler):
        def sample(self, rng, first, last, episode_length, size):
            return np.full(size, last + 1)

    params.sampler = Broken()
    with pytest.raises(ValueError, match="returned"):
        starts.draw(indices, [None] * 3, rng, 10, 100, 10)
