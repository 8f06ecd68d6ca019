"""Vector wrappers: hooks, terminal observations, statistics, normalisation, on every backend."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from vector_envs import CountingDriftVecEnv, CountingRows, DictObsEnv, DriftVecEnv, WalkEnv

import sekai
from sekai.vector import (
    AsyncVecEnv,
    SyncVecEnv,
    VecActionWrapper,
    VecEnv,
    VecEnvClosed,
    VecNormalizeObservation,
    VecNormalizeReward,
    VecObservationWrapper,
    VecRecordEpisodeStatistics,
    VecTransformObservation,
    VecTransformReward,
    VecWrapper,
)


def walks(n: int = 2, length: int = 2, backend: type[VecEnv] = SyncVecEnv, **kwargs) -> VecEnv:
    return backend([lambda: WalkEnv(length) for _ in range(n)], **kwargs)


class Double(VecObservationWrapper):
    def observation(self, batch):
        return batch * 2


def test_a_plain_wrapper_passes_everything_through():
    inner = walks(3)
    vec = VecWrapper(inner)
    assert repr(vec) == "VecWrapper(SyncVecEnv(num_envs=3))" and len(vec) == 3
    assert vec.unwrapped is inner and vec.envs is inner.envs  # public attributes read through
    assert vec.observation_space is inner.observation_space
    assert vec.batch_action_space is inner.batch_action_space
    assert vec.spec is None and vec.autoreset is True
    assert vec.reset(seed=0).observations.shape == (3, 2)
    assert vec.get_attr("length") == [2, 2, 2]
    vec.set_attr("length", 5)
    assert vec.call("scaled_length", 2) == [10, 10, 10]
    with pytest.raises(AttributeError):
        vec._private  # noqa: B018 - private names are not forwarded
    vec.close()
    assert vec.closed and inner.closed
    with pytest.raises(VecEnvClosed):
        vec.step([0, 0, 0])
    with pytest.raises(TypeError, match="needs a VecEnv"):
        VecWrapper(WalkEnv())


@pytest.mark.parametrize(
    ("wrapper", "advice"),
    [
        (sekai.RecordEpisodeStatistics, "use sekai.VecRecordEpisodeStatistics, its vector version"),
        (lambda env: sekai.TimeLimit(env, 3), "with make_vec(..., wrappers=[TimeLimit])"),
    ],
)
def test_a_single_env_wrapper_refuses_a_vec_env_and_names_what_to_use(wrapper, advice):
    with pytest.raises(TypeError, match="wraps a single env, got the VecEnv SyncVecEnv") as error:
        wrapper(walks(length=2))
    assert advice in str(error.value)


def test_observation_wrappers_transform_terminal_observations_too():
    vec = Double(walks(length=2))
    assert vec.reset(seed=0).observations[:, 0].tolist() == [0, 0]
    assert vec.step([1, 1]).observations[:, 0].tolist() == [2, 2]
    result = vec.step([1, 1])
    assert result.dones.all()
    assert result.infos[0]["final_observation"][0] == 4  # step 2, doubled
    assert result.infos[0]["final_info"] == {"t": 2}


def test_final_observation_defaults_to_a_batch_of_one():
    seen_shapes = []

    class Recording(VecObservationWrapper):
        def observation(self, batch):
            seen_shapes.append(batch.shape)
            return batch + 1

    vec = Recording(walks(n=3, length=1))
    vec.reset(seed=0)
    result = vec.step([0, 0, 0])
    assert seen_shapes == [(3, 2), (3, 2), (1, 2), (1, 2), (1, 2)]  # reset, step, 3 terminals
    assert result.infos[2]["final_observation"][0] == 2


def test_transform_observation_with_a_new_space_and_transform_reward():
    space = sekai.Box(-np.inf, np.inf, shape=(1,))
    vec = VecTransformObservation(walks(length=1), lambda batch: batch[:, :1] * 10, space)
    assert vec.observation_space == space
    assert vec.batch_observation_space == sekai.Box(-np.inf, np.inf, shape=(2, 1))
    vec.reset(seed=0)
    result = vec.step([1, 1])
    assert result.infos[0]["final_observation"].tolist() == [10.0]
    vec = VecTransformReward(walks(), lambda rewards: rewards - 1)
    vec.reset(seed=0)
    rewards = vec.step([2, 0]).rewards
    assert rewards.tolist() == [1.0, -1.0] and rewards.dtype == np.float64
    with pytest.raises(TypeError, match="callable"):
        VecTransformReward(walks(), 3)


def test_action_wrapper():
    class Flip(VecActionWrapper):
        def action(self, actions):
            return 2 - np.asarray(actions)

    vec = Flip(walks())
    vec.reset(seed=0)
    assert vec.step([0, 2]).rewards.tolist() == [2.0, 0.0]


def test_record_episode_statistics_on_sync_and_native():
    stats = VecRecordEpisodeStatistics(walks(n=2, length=3))
    stats.reset(seed=0)
    stats.step([1, 2])
    stats.step([1, 2])
    result = stats.step([0, 2])
    episode = result.infos[1]["episode"]
    assert (episode.return_, episode.length, episode.extra) == (6.0, 3, {"env_index": 1})
    assert result.infos[0]["episode"].return_ == 2.0 and episode.time >= 0
    assert stats.tracker.summary()["num_episodes"] == 2
    stats.step([1, 1])
    stats.step([1, 1])
    assert stats.step([1, 1]).infos[0]["episode"].return_ == 3.0  # counters restarted

    native = VecRecordEpisodeStatistics(DriftVecEnv(4, max_episode_steps=3, bound=1e9))
    native.reset(seed=0)
    for _ in range(3):
        result = native.step(np.ones(4, int))
    assert [info["episode"].length for info in result.infos] == [3, 3, 3, 3]
    assert native.tracker.summary()["num_episodes"] == 4


def test_record_episode_statistics_returns_match_the_rewards():
    native = VecRecordEpisodeStatistics(DriftVecEnv(3, max_episode_steps=4, bound=1e9))
    native.reset(seed=1)
    total = np.zeros(3)
    for _ in range(4):
        result = native.step(np.array([1, 0, 1]))
        total += result.rewards
    assert [info["episode"].return_ for info in result.infos] == pytest.approx(total.tolist())


def test_record_episode_statistics_skips_the_next_step_reset():
    stats = VecRecordEpisodeStatistics(walks(n=1, length=2, autoreset="next_step"))
    stats.reset(seed=0)
    stats.step([1])
    assert stats.step([1]).infos[0]["episode"].length == 2
    stats.step([2])  # the reset step: not part of any episode
    stats.step([1])
    assert stats.step([1]).infos[0]["episode"].length == 2


def test_a_shared_tracker():
    tracker = sekai.EpisodeTracker()
    a = VecRecordEpisodeStatistics(walks(n=1, length=1), tracker=tracker)
    b = VecRecordEpisodeStatistics(walks(n=1, length=1), tracker=tracker)
    for vec in (a, b):
        vec.reset(seed=0)
        vec.step([0])
    assert tracker.summary()["num_episodes"] == 2 and a.tracker is b.tracker


def test_normalize_observation_shares_statistics_across_sub_envs():
    vec = VecNormalizeObservation(walks(n=4, length=3))
    first = vec.reset(seed=0)
    assert vec.obs_rms.stats[()].count == 4
    assert vec.observation_space == sekai.Box(-np.inf, np.inf, shape=(2,))
    np.testing.assert_allclose(first.observations[:, 0], 0.0, atol=1e-3)  # all start at 0
    vec.step([0, 0, 0, 0])
    vec.step([0, 0, 0, 0])
    result = vec.step([0, 0, 0, 0])  # every sub-env finishes: 4 terminal observations
    assert vec.obs_rms.stats[()].count == 16  # the terminal observations were not added
    final = result.infos[0]["final_observation"]
    raw = vec.venv.envs[0].unwrapped  # the terminal obs had t == 3
    mean, var = vec.obs_rms.stats[()].mean, vec.obs_rms.stats[()].var
    assert raw.length == 3
    assert final[0] == pytest.approx((3 - mean[0]) / np.sqrt(var[0] + 1e-8), rel=1e-5)
    vec.update_running_mean = False
    vec.step([0, 0, 0, 0])
    assert vec.obs_rms.stats[()].count == 16


def test_normalize_observation_clip_and_ewm_options():
    vec = VecNormalizeObservation(walks(n=2), stats="ewm", halflife=10.0, clip=0.5)
    assert vec.observation_space == sekai.Box(-0.5, 0.5, shape=(2,))
    vec.reset(seed=0)
    result = vec.step([0, 0])
    assert np.abs(result.observations).max() <= 0.5
    assert vec.obs_rms.state_dict()[()]["kind"] == "ewm"


def test_normalize_reward_divides_by_the_std_of_discounted_returns():
    vec = VecNormalizeReward(walks(n=2, length=100), gamma=0.5)
    vec.reset(seed=0)
    returns, samples = np.zeros(2), []
    for rewards in ([1.0, 2.0], [2.0, 0.0], [0.0, 1.0]):
        result = vec.step(rewards)
        returns = returns * 0.5 + np.array(rewards)
        samples += returns.tolist()
        x = np.array(samples)  # pooled with one pseudo-sample of mean 0 and variance 1
        variance = (1.0 + (x**2).sum()) / (len(x) + 1) - (x.sum() / (len(x) + 1)) ** 2
        expected = np.array(rewards) / np.sqrt(variance + 1e-8)
        np.testing.assert_allclose(result.rewards, expected, rtol=1e-9)
    assert vec.return_rms.count == 6
    with pytest.raises(ValueError, match="gamma"):
        VecNormalizeReward(walks(), gamma=1.5)


def test_normalize_reward_restarts_returns_of_finished_episodes():
    vec = VecNormalizeReward(walks(n=2, length=1), gamma=1.0)
    vec.reset(seed=0)
    vec.step([2, 2])
    assert vec.discounted_returns.tolist() == [0.0, 0.0]


def test_the_ppo_stack_repr_and_unwrapped():
    inner = walks(n=8)
    vec = VecNormalizeReward(VecNormalizeObservation(VecRecordEpisodeStatistics(inner)))
    assert repr(vec) == (
        "VecNormalizeReward(VecNormalizeObservation(VecRecordEpisodeStatistics("
        "SyncVecEnv(num_envs=8))))"
    )
    assert vec.unwrapped is inner and vec.tracker.summary()["num_episodes"] == 0


def test_wrappers_on_a_native_env_keep_infos_lazy():
    native = CountingDriftVecEnv(500, max_episode_steps=2, bound=1e9)
    vec = Double(VecRecordEpisodeStatistics(native))
    vec.reset(seed=0)
    CountingRows.reads = 0
    result = vec.step(np.ones(500, int))
    assert CountingRows.reads == 0
    assert result.infos[7]["elapsed_steps"] == 1 and CountingRows.reads == 1
    result = vec.step(np.ones(500, int))  # every sub-env finishes: the wrappers read all rows
    assert result.infos[7]["episode"].length == 2
    assert result.infos[7]["final_observation"][0] == pytest.approx(2 * result.infos[7]["x"])


@pytest.mark.parametrize("backend", [SyncVecEnv, AsyncVecEnv])
def test_wrapped_terminal_observations_on_each_backend(backend):
    vec = VecNormalizeObservation(walks(n=2, length=1, backend=backend))
    vec.reset(seed=0)
    result = vec.step([0, 0])
    assert result.dones.all()
    assert result.infos[1]["final_observation"].dtype == np.float32
    vec.close()


class Spy(VecWrapper):
    """Keeps the wrapped env's last step result as it came out."""

    def after_step(self, result):
        self.seen = result
        return result


def test_wrappers_leave_the_wrapped_envs_infos_untouched():
    spy = Spy(walks(n=2, length=1))
    vec = VecRecordEpisodeStatistics(Double(spy))
    vec.reset(seed=0)
    result = vec.step([1, 1])
    assert result.infos[0]["final_observation"][0] == 2 and "episode" in result.infos[0]
    assert spy.seen.infos[0]["final_observation"][0] == 1 and "episode" not in spy.seen.infos[0]


def test_normalize_observation_on_dict_observations():
    vec = VecNormalizeObservation(SyncVecEnv([DictObsEnv] * 3))
    vec.reset(seed=0)
    moves = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, 0.0]], np.float32)
    result = vec.step({"move": moves, "mode": np.array([0, 1, 2])})
    assert result.observations["mode"].tolist() == [0, 1, 2]  # not a Box: passed through
    position = result.observations["position"]
    assert position.dtype == np.float32 and position[:, 0].tolist() == sorted(position[:, 0])
    assert vec.observation_space["mode"] == sekai.Discrete(3)


def test_a_wrapper_that_overrides_step_and_reset_keeps_them_under_async():
    """Written against step/reset instead of the hooks, a vector wrapper must not be skipped
    when it is driven through async_step/async_reset (it then blocks: over an AsyncVecEnv
    inside a running loop that is refused with a RuntimeError rather than skipped)."""

    class TenTimes(VecWrapper):
        def reset(self, *, seed=None, options=None):
            observations, infos = self.venv.reset(seed=seed, options=options)
            return observations, [{**info, "ten": True} for info in infos]

        def step(self, actions):
            result = self.venv.step(actions)
            return result._replace(rewards=result.rewards * 10)

    vec = TenTimes(walks(2))

    async def run():
        reset = await vec.async_reset(seed=0)
        return reset, await vec.async_step([1, 2])

    reset, step = asyncio.run(run())
    assert [info["ten"] for info in reset[1]] == [True, True]
    assert step.rewards.tolist() == [10.0, 20.0]
    vec.close()


def test_record_episode_statistics_refuses_a_tracker_that_is_not_one():
    with pytest.raises(TypeError, match="EpisodeTracker"):  # not at the first episode's end
        VecRecordEpisodeStatistics(walks(2), tracker={})


def test_a_single_env_wrapper_around_a_vec_env_points_at_its_vector_version() -> None:
    with sekai.make_vec("CartPole-v1", 2) as vec:
        with pytest.raises(TypeError, match=r"use sekai\.VecRecordEpisodeStatistics"):
            sekai.RecordEpisodeStatistics(vec)
        with pytest.raises(TypeError, match=r"make_vec\(\.\.\., wrappers=\[ClipReward"):
            sekai.ClipReward(vec, -1.0, 1.0)
