"""RecordEpisodeStatistics, EpisodeStats and EpisodeTracker."""

from __future__ import annotations

import dataclasses
import math

import pytest
from wrapper_envs import CountingEnv

from sekai.wrappers import AutoReset, EpisodeStats, EpisodeTracker, RecordEpisodeStatistics


def test_info_episode_appears_only_when_an_episode_ends():
    env = RecordEpisodeStatistics(CountingEnv(terminate_after=3))
    env.reset()
    first, second, last = (env.step(a) for a in (1.0, 2.0, 4.0))
    assert "episode" not in first.info and "episode" not in second.info
    stats = last.info["episode"]
    assert isinstance(stats, EpisodeStats)
    assert (stats.return_, stats.length, stats.extra) == (7.0, 3, {})
    assert stats.time >= 0.0
    assert last.info["count"] == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.length = 4


def test_counters_restart_on_reset_and_under_an_inner_autoreset():
    env = RecordEpisodeStatistics(AutoReset(CountingEnv(terminate_after=2)))
    env.reset()
    lengths = [
        result.info["episode"].length
        for result in (env.step(1.0) for _ in range(6))
        if "episode" in result.info
    ]
    assert lengths == [2, 2, 2]
    env.step(1.0)
    env.reset()
    assert env.episode_length == 0 and env.episode_return == 0.0


def test_tracker_summary_over_the_last_deque_size_episodes():
    tracker = EpisodeTracker(deque_size=2)
    for ret, length in ((1.0, 10), (2.0, 20), (4.0, 40)):
        tracker.add(EpisodeStats(ret, length, 0.1))
    summary = tracker.summary()
    assert summary["num_episodes"] == 3
    assert (summary["return_mean"], summary["return_std"]) == (3.0, 1.0)
    assert (summary["return_min"], summary["return_max"]) == (2.0, 4.0)
    assert (summary["length_mean"], summary["length_min"], summary["length_max"]) == (30, 20, 40)


def test_empty_tracker_summary_is_nan_with_zero_episodes():
    summary = EpisodeTracker().summary()
    assert summary["num_episodes"] == 0
    assert math.isnan(summary["return_mean"]) and math.isnan(summary["length_max"])


def test_a_tracker_can_be_shared_between_envs():
    tracker = EpisodeTracker()
    envs = [RecordEpisodeStatistics(CountingEnv(terminate_after=1), tracker) for _ in range(3)]
    for env in envs:
        env.reset()
        env.step(2.0)
    assert tracker.summary()["num_episodes"] == 3
    assert all(env.tracker is tracker for env in envs)


def test_deque_size_and_tracker_are_validated():
    with pytest.raises(ValueError, match="deque_size must be at least 1"):
        RecordEpisodeStatistics(CountingEnv(), deque_size=0)
    with pytest.raises(TypeError, match="EpisodeTracker"):  # not at the first episode's end
        RecordEpisodeStatistics(CountingEnv(), tracker=[])


def test_episode_stats_answer_gymnasiums_keys() -> None:
    stats = EpisodeStats(return_=3.5, length=7, time=0.25)
    assert (stats["r"], stats["l"], stats["t"]) == (3.5, 7, 0.25)
    with pytest.raises(KeyError, match=r"'return'.*'r', 'l' and 't'.*stats\.return_"):
        stats["return"]


def test_gymnasiums_episode_return_reads_from_a_finished_episode() -> None:
    import sekai

    env = RecordEpisodeStatistics(sekai.make("CartPole-v1"))
    env.reset(seed=0)
    while not (result := env.step(0)).done:
        pass
    episode = result.info["episode"]
    assert episode["r"] == episode.return_ and episode["l"] == episode.length > 0
