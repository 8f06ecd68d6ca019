"""What every in-process backend shares: results, seeding, options, autoreset, attributes, closing.

Each test runs on SyncVecEnv and AsyncVecEnv (ProcVecEnv has its own tests in proc/).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from vector_envs import DictObsEnv, WalkEnv

import sekai
from sekai.vector import (
    AsyncVecEnv,
    SyncVecEnv,
    VecEnv,
    VecEnvClosed,
    VecResetResult,
    VecStepResult,
    stack_infos,
)

BACKENDS = [SyncVecEnv, AsyncVecEnv]


@pytest.fixture(params=BACKENDS, ids=["sync", "async"])
def backend(request: pytest.FixtureRequest) -> type[VecEnv]:
    return request.param


def walk_envs(backend: type[VecEnv], n: int = 3, length: int = 3, **kwargs) -> VecEnv:
    return backend([lambda: WalkEnv(length) for _ in range(n)], **kwargs)


def test_results_have_the_spec_dtypes_and_shapes(backend):
    with walk_envs(backend) as vec:
        reset = vec.reset(seed=0)
        assert isinstance(reset, VecResetResult)
        assert reset.observations.shape == (3, 2) and reset.observations.dtype == np.float32
        assert reset.dones.tolist() == [False] * 3
        assert [info["start"] for info in reset.infos] == [0, 0, 0]
        step = vec.step(np.array([0, 1, 2]))
        assert isinstance(step, VecStepResult)
        assert step.rewards.dtype == np.float64 and step.rewards.tolist() == [0.0, 1.0, 2.0]
        assert step.terminated.dtype == bool and step.truncated.dtype == bool
        assert step.terminated.shape == step.truncated.shape == (3,)
        # a list, or a sequence building each dict on access (ProcVecEnv, native envs)
        assert isinstance(step.infos, Sequence) and list(step.infos) == [{"t": 1}] * 3
        observations, infos = vec.reset()
        assert observations.shape == (3, 2) and len(infos) == 3


def test_repr_len_and_spaces(backend):
    with walk_envs(backend, n=4) as vec:
        assert repr(vec) == f"{backend.__name__}(num_envs=4)"
        assert len(vec) == vec.num_envs == 4
        assert vec.observation_space == WalkEnv().observation_space
        assert vec.batch_observation_space.shape == (4, 2)
        assert vec.action_space == sekai.Discrete(3)
        assert vec.batch_action_space == sekai.MultiDiscrete([3, 3, 3, 3])
        assert vec.unwrapped is vec


def test_dict_spaces_batch_as_dicts_of_arrays(backend):
    with backend([DictObsEnv, DictObsEnv]) as vec:
        vec.reset(seed=0)
        actions = {
            "move": np.array([[1.0, 0.0], [0.0, -1.0]], np.float32),
            "mode": np.array([1, 2]),
        }
        result = vec.step(actions)
        assert result.observations["position"].tolist() == [[1.0, 0.0], [0.0, -1.0]]
        assert result.observations["mode"].tolist() == [1, 2]
        as_list = [{"move": np.zeros(2), "mode": 0}, {"move": np.ones(2), "mode": 1}]
        assert vec.step(as_list).observations["mode"].tolist() == [0, 1]


def test_actions_as_array_or_list_and_wrong_counts(backend):
    with walk_envs(backend) as vec:
        vec.reset(seed=0)
        assert vec.step([2, 1, 0]).rewards.tolist() == [2.0, 1.0, 0.0]
        with pytest.raises(ValueError, match="one action per sub-env"):
            vec.step(np.array([1, 1]))
        with pytest.raises(ValueError, match="one action per sub-env"):
            vec.step([1, 1, 1, 1])


@pytest.mark.parametrize("actions", [1, np.int64(1), np.array(1)])
def test_a_single_action_instead_of_a_batch_names_the_problem(backend, actions):
    with walk_envs(backend) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match="one action per sub-env"):
            vec.step(actions)


class _ArrayRewardEnv(WalkEnv):
    """Returns its reward and flag as arrays of shape (1,), a common porting mistake."""

    def step(self, action):
        result = super().step(action)
        return result._replace(reward=np.array([result.reward]), terminated=np.array([False]))


def test_a_sub_env_returning_array_rewards_is_an_error_not_a_2d_batch(backend):
    with backend([_ArrayRewardEnv, _ArrayRewardEnv]) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match="scalar reward"):
            vec.step([1, 1])  # would give rewards of shape (2, 1) and dones of shape (2, 2)


def test_an_int_seed_spawns_independent_child_seeds(backend):
    with walk_envs(backend) as vec:
        noise = vec.reset(seed=7).observations[:, 1]
        assert len(set(noise.tolist())) == 3  # not one seed shared by all sub-envs
        assert vec.reset(seed=7).observations[:, 1].tolist() == noise.tolist()
        children = np.random.SeedSequence(7).spawn(3)
        for i, child in enumerate(children):
            seed = int(child.generate_state(1, np.uint64)[0])
            assert WalkEnv().reset(seed=seed).observation[1] == noise[i]
        assert vec.reset(seed=8).observations[:, 1].tolist() != noise.tolist()


def test_a_list_of_seeds_seeds_each_sub_env(backend):
    with walk_envs(backend) as vec:
        noise = vec.reset(seed=[1, 2, None]).observations[:, 1]
        assert noise[0] == WalkEnv().reset(seed=1).observation[1]
        assert noise[1] == WalkEnv().reset(seed=2).observation[1]
        with pytest.raises(ValueError, match="one entry per sub-env"):
            vec.reset(seed=[1, 2])
        with pytest.raises(TypeError, match="int or None"):
            vec.reset(seed=[1, 2, "3"])
        with pytest.raises(TypeError, match="seed must be"):
            vec.reset(seed=1.5)


def test_negative_seeds_are_rejected_before_any_sub_env_is_reset(backend):
    with walk_envs(backend) as vec:
        vec.reset(seed=[1, 2, 3])
        for seed in (-1, [1, -2, 3]):
            with pytest.raises(ValueError, match="non-negative"):
                vec.reset(seed=seed)
        assert vec.get_attr("resets") == [1, 1, 1]


def test_no_seed_continues_each_stream(backend):
    with walk_envs(backend) as vec:
        vec.reset(seed=3)
        continued = vec.reset().observations[:, 1]
    with walk_envs(backend) as vec:
        vec.reset(seed=3)
        assert vec.reset(seed=None).observations[:, 1].tolist() == continued.tolist()


def test_options_one_dict_for_all_or_one_per_sub_env(backend):
    with walk_envs(backend) as vec:
        assert vec.reset(options={"start": 5}).observations[:, 0].tolist() == [5, 5, 5]
        result = vec.reset(options=[{"start": 1}, None, {"start": 3}])
        assert result.observations[:, 0].tolist() == [1, 0, 3]
        assert [env.last_options for env in vec.unwrapped.envs] == [
            {"start": 1},
            None,
            {"start": 3},
        ]
        with pytest.raises(ValueError, match="one dict per sub-env"):
            vec.reset(options=[{}, {}])
        with pytest.raises(TypeError, match="options must be"):
            vec.reset(options="start")


def test_same_step_autoreset_reports_the_finished_episode(backend):
    with walk_envs(backend, n=2, length=2) as vec:
        vec.reset(seed=0)
        vec.step([1, 1])
        result = vec.step([2, 0])
        assert result.terminated.tolist() == [True, True] and result.dones.all()
        assert result.rewards.tolist() == [2.0, 0.0]  # the finished episode's last reward
        assert result.observations[:, 0].tolist() == [0, 0]  # the new episode's first obs
        info = result.infos[0]
        assert sorted(info) == ["final_info", "final_observation", "reset_info", "t"]
        assert info["final_observation"][0] == 2 and info["final_info"] == {"t": 2}
        assert info["reset_info"] == {"start": 0}
        assert vec.step([1, 1]).observations[:, 0].tolist() == [1, 1]


def test_a_sub_env_already_in_autoreset_is_not_reset_twice(backend):
    with backend([lambda: sekai.AutoReset(WalkEnv(1))]) as vec:
        vec.reset(seed=0)
        resets_before = vec.envs[0].unwrapped.resets
        result = vec.step([1])
        assert vec.envs[0].unwrapped.resets == resets_before + 1
        assert "final_observation" in result.infos[0]
        assert "final_observation" not in result.infos[0]["final_info"]


def test_next_step_autoreset_refuses_a_sub_env_that_already_resets_itself(backend):
    # its AutoReset resets in the same step, the next-step layer would reset it once more
    env = WalkEnv(2)
    with pytest.raises(ValueError, match="AutoReset"):
        backend([lambda: sekai.AutoReset(env)], autoreset="next_step")
    assert env.closed


def test_autoreset_false_leaves_finished_sub_envs_alone(backend):
    with walk_envs(backend, n=2, length=1, autoreset=False) as vec:
        vec.reset(seed=0)
        result = vec.step([1, 1])
        assert result.terminated.all()
        assert result.observations[:, 0].tolist() == [1, 1]
        assert result.infos == [{"t": 1}, {"t": 1}]
        assert [env.resets for env in vec.envs] == [1, 1]


def test_next_step_autoreset_resets_on_the_following_step(backend):
    with walk_envs(backend, n=2, length=2, autoreset="next_step") as vec:
        vec.reset(seed=0)
        vec.step([1, 1])
        ended = vec.step([1, 1])
        assert ended.terminated.all() and ended.observations[:, 0].tolist() == [2, 2]
        assert "final_observation" not in ended.infos[0]
        restarted = vec.step([2, 2])  # actions ignored, reward 0, the reset obs
        assert restarted.rewards.tolist() == [0.0, 0.0]
        assert not restarted.dones.any()
        assert restarted.observations[:, 0].tolist() == [0, 0]
        assert restarted.infos == [{"start": 0}, {"start": 0}]
        assert vec.step([2, 1]).rewards.tolist() == [2.0, 1.0]


def test_bad_autoreset_and_factories_are_rejected(backend):
    with pytest.raises(ValueError, match="autoreset must be"):
        walk_envs(backend, autoreset="same_step")
    with pytest.raises(ValueError, match="at least one"):
        backend([])
    with pytest.raises(TypeError, match="callables"):
        backend([WalkEnv()])
    with pytest.raises(TypeError, match=r"must return a sekai\.Env"):
        backend([lambda: "not an env"])


def test_a_factory_that_returns_the_same_env_twice_is_rejected(backend):
    shared = WalkEnv()  # two "sub-envs" stepping one env would silently double its steps
    with pytest.raises(ValueError, match="same env object"):
        backend([lambda: shared, lambda: WalkEnv(), lambda: shared])
    assert shared.closed


class _WideWalkEnv(WalkEnv):
    def __init__(self) -> None:
        super().__init__()
        self.observation_space = sekai.Box(-np.inf, np.inf, shape=(3,))


def test_sub_envs_with_different_spaces_are_rejected_and_closed(backend):
    built = [WalkEnv(), _WideWalkEnv()]
    with pytest.raises(ValueError, match="same observation_space"):
        backend([lambda: built[0], lambda: built[1]])
    assert built[0].closed and built[1].closed


def test_get_set_attr_and_call_reach_through_wrapper_stacks(backend):
    factories = [lambda: sekai.TimeLimit(WalkEnv(4), 10), lambda: sekai.TimeLimit(WalkEnv(5), 20)]
    with backend(factories) as vec:
        assert vec.get_attr("length") == [4, 5]
        assert vec.get_attr("max_episode_steps") == [10, 20]
        vec.set_attr("max_episode_steps", 7)  # the TimeLimit layer has it
        assert [env.env.max_episode_steps for env in vec.envs] == [7, 7]
        vec.set_attr("length", [2, 3])  # the base env has it
        assert [env.unwrapped.length for env in vec.envs] == [2, 3]
        assert vec.call("scaled_length", 10) == [20, 30]
        assert vec.call("length") == [2, 3]  # not callable: read
        with pytest.raises(ValueError, match="list of 2 values"):
            vec.set_attr("length", [1, 2, 3])
        with pytest.raises(AttributeError):
            vec.get_attr("no_such_attribute")


def test_close_is_idempotent_closes_sub_envs_and_blocks_commands(backend):
    vec = walk_envs(backend)
    envs = [env.unwrapped for env in vec.envs]
    with vec:
        vec.reset(seed=0)
    assert vec.closed and all(env.closed for env in envs)
    vec.close()
    for command in (lambda: vec.reset(), lambda: vec.step([0, 0, 0]), lambda: vec.get_attr("t")):
        with pytest.raises(VecEnvClosed, match=r"^This VecEnv has been closed\.$"):
            command()


class _FailingClose(WalkEnv):
    def close(self) -> None:
        super().close()
        raise OSError("cannot close")


def test_a_failing_sub_env_close_does_not_stop_the_others(backend):
    vec = backend([_FailingClose, WalkEnv, _FailingClose])
    envs = [env.unwrapped for env in vec.envs]
    with pytest.raises(OSError, match="cannot close"):
        vec.close()
    assert vec.closed and all(env.closed for env in envs)


def test_stack_infos_keeps_the_keys_every_sub_env_has():
    infos = [{"a": 1, "b": [1, 2]}, {"a": 2, "b": [3]}, {"a": 3, "b": [4, 5], "c": 0}]
    stacked = stack_infos(infos)
    assert sorted(stacked) == ["a", "b"]
    assert stacked["a"].tolist() == [1, 2, 3]
    assert stacked["b"].dtype == object and stacked["b"][1] == [3]
    assert stack_infos([]) == {}


def test_sync_and_async_give_identical_trajectories():
    def rollout(backend: type[VecEnv]) -> list[np.ndarray]:
        with walk_envs(backend, n=4, length=5) as vec:
            trajectory = [vec.reset(seed=123).observations]
            for step in range(12):
                result = vec.step(np.array([step % 3, 1, 2, 0]))
                trajectory += [result.observations, result.rewards, result.dones]
        return trajectory

    for a, b in zip(rollout(SyncVecEnv), rollout(AsyncVecEnv), strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_failing_factory_closes_the_sub_envs_built_before_it(backend):
    built: list[WalkEnv] = []

    def build() -> WalkEnv:
        built.append(WalkEnv())
        return built[-1]

    def fail() -> WalkEnv:
        raise RuntimeError("factory failed")

    with pytest.raises(RuntimeError, match="factory failed"):
        backend([build, build, fail])
    assert len(built) == 2 and all(env.closed for env in built)
