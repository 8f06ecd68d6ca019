"""sekai.vector.backend: the toolkit every backend (and a third-party one) runs sub-envs with."""

from __future__ import annotations

import numpy as np
import pytest
from vector_envs import WalkEnv

from sekai.spaces import Box, Discrete
from sekai.vector.backend import (
    EnvGroup,
    as_array_batch,
    check_same_spaces,
    stack_step_results,
)
from sekai.wrappers import AutoReset


def test_a_group_keeps_its_ranks_and_runs_each_sub_env_with_its_own_argument():
    group = EnvGroup(first_rank=4)
    group.build([lambda: WalkEnv(length=2), lambda: WalkEnv(length=5)], autoreset=True)
    assert group.ranks == range(4, 6)
    assert all(isinstance(env, AutoReset) for env in group.envs)
    group.reset([1, 2], [{"start": 1}, None])
    assert group.get_attr("t") == [1, 0]
    assert group.call("scaled_length", (3,), {}) == [6, 15]
    assert group.call("length", (), {}) == [2, 5]  # a plain attribute is read
    group.set_attr("length", [7, 8])
    assert [result.reward for result in group.step([2, 1])] == [2.0, 1.0]
    assert group.get_attr("length") == [7, 8]


def test_a_failing_factory_closes_the_envs_built_so_far_and_rank_names_it():
    built = WalkEnv()

    def broken():
        raise RuntimeError("no data")

    group = EnvGroup(first_rank=10)
    with pytest.raises(RuntimeError, match="no data"):
        group.build([lambda: built, broken], autoreset=False)
    assert built.closed
    assert group.rank == 11


def test_a_raising_sub_env_is_named_by_rank():
    group = EnvGroup(first_rank=2)
    group.build([WalkEnv, WalkEnv], autoreset=False)
    group.reset([0, 0], [None, None])
    with pytest.raises(TypeError):
        group.call("scaled_length", ("x", "y"), {})
    assert group.rank == 2
    with pytest.raises(ValueError, match="same env object"):
        env = WalkEnv()
        EnvGroup().build([lambda: env, lambda: env], autoreset=False)


def test_a_sub_env_raising_in_step_is_named_by_rank_after_the_ones_before_it_stepped():
    class FailingStep(WalkEnv):
        def step(self, action):
            raise RuntimeError("step failed")

    group = EnvGroup(first_rank=3)
    group.build([WalkEnv, FailingStep, WalkEnv], autoreset=False)
    group.reset([0, 0, 0], [None] * 3)
    with pytest.raises(RuntimeError, match="step failed"):
        group.step([1, 2, 0])
    assert group.rank == 4
    assert group.get_attr("t") == [1, 0, 0]


def test_close_closes_every_sub_env_and_returns_the_first_error():
    class FailingClose(WalkEnv):
        def close(self):
            super().close()
            raise OSError("disk gone")

    group = EnvGroup(first_rank=1)
    group.build([WalkEnv, FailingClose, FailingClose], autoreset=False)
    error = group.close()
    assert isinstance(error, OSError)
    assert group.rank == 2
    assert all(env.closed for env in group.envs)


def test_check_same_spaces_names_the_first_sub_env_that_differs():
    same = (Box(0, 1, (2,)), Discrete(2))
    check_same_spaces([same, same])
    with pytest.raises(ValueError, match=r"same action_space: sub-env 0 has .* sub-env 2 has"):
        check_same_spaces([same, same, (Box(0, 1, (2,)), Discrete(3))])


def test_stacking_refuses_a_reward_that_is_not_a_scalar():
    group = EnvGroup()
    group.build([WalkEnv, WalkEnv], autoreset=False)
    group.reset([0, 1], [None, None])
    results = group.step([1, 2])
    stacked = stack_step_results(group.envs[0].observation_space, results)
    np.testing.assert_array_equal(stacked.rewards, [1.0, 2.0])
    bad = [result._replace(reward=np.ones(2)) for result in results]
    with pytest.raises(ValueError, match="scalar reward"):
        stack_step_results(group.envs[0].observation_space, bad)


def test_as_array_batch_gives_one_array_only_when_the_actions_are_one_kind_of_numpy_value():
    batch = np.arange(6.0).reshape(3, 2)
    assert as_array_batch(batch) is batch  # an array is shipped as it is, never copied
    rows = as_array_batch(list(batch))
    assert rows is not None and rows.tolist() == batch.tolist()
    assert as_array_batch(np.array([1, "a"], dtype=object)) is None  # no raw bytes for objects
    assert as_array_batch([np.zeros(2), np.zeros(3)]) is None  # rows of two shapes
    assert as_array_batch([np.float32(1), np.float64(1)]) is None  # scalars of two dtypes
    assert as_array_batch([1, 2]) is None  # Python ints have no dtype to keep
