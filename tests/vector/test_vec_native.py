"""NativeVecEnv: the hooks, seeding, time limit, autoreset, lazy infos and attribute rules."""

from __future__ import annotations

import asyncio
import copy
import pickle

import numpy as np
import pytest
from vector_envs import CountingDriftVecEnv, CountingRows, DriftVecEnv

from sekai.vector import VecEnvClosed, VecResetResult, VecStepResult


def test_the_spec_example_fixes_seeding_and_the_order_of_draws():
    vec = DriftVecEnv(4, max_episode_steps=100)
    result = vec.reset(seed=0)
    expected_x = np.random.default_rng(0).normal(size=4)
    np.testing.assert_allclose(result.observations[:, 0], expected_x.astype(np.float32))
    result = vec.step(np.array([1, 1, 0, 0]))
    assert result.rewards.round(3).tolist() == [-0.572, -0.404, -0.271, -0.3]
    assert result.infos[0]["elapsed_steps"] == 1
    assert repr(vec) == "DriftVecEnv(num_envs=4)" and len(vec) == 4


def test_results_have_the_spec_types():
    vec = DriftVecEnv(3)
    reset = vec.reset(seed=1)
    assert isinstance(reset, VecResetResult) and not reset.dones.any()
    step = vec.step([1, 0, 1])  # a list of per-env actions works too
    assert isinstance(step, VecStepResult)
    assert step.rewards.dtype == np.float64 and step.rewards.shape == (3,)
    assert step.terminated.dtype == bool and step.truncated.dtype == bool
    with pytest.raises(ValueError, match="leading axis of num_envs"):
        vec.step(np.array([1, 0]))
    with pytest.raises(ValueError, match="one action per sub-env"):
        vec.step([1, 0])


def test_seeding_one_generator_for_all_sub_envs():
    a, b = DriftVecEnv(4), DriftVecEnv(4)
    assert a.reset(seed=5).observations.tolist() == b.reset(seed=5).observations.tolist()
    continued = a.reset().observations
    assert continued.tolist() != a.reset(seed=5).observations.tolist()
    listed = DriftVecEnv(4).reset(seed=[1, 2]).observations[:, 0]
    np.testing.assert_allclose(listed, np.random.default_rng([1, 2]).normal(size=4), rtol=1e-6)
    with pytest.raises(TypeError, match="list of ints"):
        a.reset(seed=[1, None])


def test_options_go_to_reset_envs_one_per_index():
    vec = DriftVecEnv(3)
    result = vec.reset(seed=0, options=[{"x": 1.0}, None, {"x": -2.0}])
    assert result.observations[[0, 2], 0].tolist() == [1.0, -2.0]
    indices, options = vec.reset_calls[-1]
    assert indices == [0, 1, 2] and options == [{"x": 1.0}, None, {"x": -2.0}]
    vec.reset(options={"x": 3.0})
    assert vec.reset_calls[-1][1] == [{"x": 3.0}] * 3
    with pytest.raises(ValueError, match="one dict per sub-env"):
        vec.reset(options=[{}, {}])


def test_info_arrays_split_into_one_dict_per_sub_env():
    vec = DriftVecEnv(2, max_episode_steps=10)
    reset = vec.reset(seed=0)
    assert reset.infos[1] == {"start": pytest.approx(float(vec.x[1]))}
    result = vec.step(np.array([1, 0]))
    info = result.infos[1]
    assert list(info) == ["x", "pair", "tag", "elapsed_steps"]  # TimeLimit's key order
    assert type(info["x"]) is float and info["x"] == vec.x[1]  # 1-D rows: Python scalars
    assert info["pair"].tolist() == [vec.x[1], -vec.x[1]]  # other rows stay arrays
    assert info["tag"] == "drift"  # not an array with a leading num_envs axis: repeated
    assert type(info["elapsed_steps"]) is int and info["elapsed_steps"] == 1
    assert len(result.infos) == 2 and result.infos[-1] is info
    assert [i["elapsed_steps"] for i in result.infos] == [1, 1]
    assert result.infos[:1] == [result.infos[0]]
    with pytest.raises(IndexError):
        result.infos[2]


def test_infos_are_built_only_when_read():
    vec = CountingDriftVecEnv(1000)
    vec.reset(seed=0)
    CountingRows.reads = 0
    infos = vec.step(np.ones(1000, int)).infos
    assert CountingRows.reads == 0  # step() itself split nothing
    assert type(infos[3]["x"]) is float and infos[3] is infos[3]
    assert CountingRows.reads == 1  # one row, read once, then kept


def test_time_limit_truncates_every_sub_env():
    vec = DriftVecEnv(3, max_episode_steps=2, bound=1e9)
    vec.reset(seed=0)
    first = vec.step(np.zeros(3, int))
    assert not first.truncated.any()
    second = vec.step(np.zeros(3, int))
    assert second.truncated.all() and not second.terminated.any()
    assert [info["final_info"]["elapsed_steps"] for info in second.infos] == [2, 2, 2]
    assert vec.get_attr("elapsed_steps") == [0, 0, 0]  # reset by the autoreset
    assert vec.step(np.zeros(3, int)).infos[0]["elapsed_steps"] == 1
    without_limit = DriftVecEnv(2, bound=1e9)
    without_limit.reset(seed=0)
    for _ in range(3):
        result = without_limit.step(np.zeros(2, int))
    assert not result.truncated.any() and "elapsed_steps" not in result.infos[0]
    with pytest.raises(ValueError, match="at least 1"):
        DriftVecEnv(2, max_episode_steps=0)


def test_same_step_autoreset_of_the_finished_sub_envs_only():
    vec = DriftVecEnv(3, max_episode_steps=50, bound=0.6)
    vec.reset(seed=0, options=[{"x": 0.55}, {"x": 0.0}, {"x": -0.55}])
    result = vec.step(np.array([1, 1, 0]))  # 0 and 2 cross the bound, 1 does not
    assert result.terminated.tolist() == [True, False, True]
    assert vec.reset_calls[-1] == ([0, 2], [None, None])
    info = result.infos[0]
    assert sorted(info) == [
        "elapsed_steps", "final_info", "final_observation", "pair", "reset_info", "tag", "x",
    ]  # fmt: skip
    assert info["final_observation"].shape == (1,)
    assert info["final_observation"][0] == pytest.approx(info["x"], abs=1e-6)
    assert sorted(info["final_info"]) == ["elapsed_steps", "pair", "tag", "x"]
    assert info["final_info"]["x"] == info["x"]
    assert info["reset_info"] == {"start": pytest.approx(float(vec.x[0]))}
    assert result.observations[0, 0] == np.float32(vec.x[0])  # the new episode's first obs
    assert result.rewards[0] == pytest.approx(-abs(info["x"]))  # the finished episode's reward
    assert "final_observation" not in result.infos[1]
    assert vec.get_attr("elapsed_steps") == [0, 1, 0]


def test_autoreset_false_keeps_stepping_finished_sub_envs():
    vec = DriftVecEnv(2, autoreset=False, bound=0.6)
    vec.reset(seed=0, options={"x": 0.55})
    result = vec.step(np.array([1, 1]))
    assert result.terminated.all() and len(vec.reset_calls) == 1
    assert "final_observation" not in result.infos[0]


def test_next_step_autoreset_resets_on_the_following_step():
    vec = DriftVecEnv(2, autoreset="next_step", bound=0.6)
    vec.reset(seed=0, options=[{"x": 0.55}, {"x": 0.0}])
    ended = vec.step(np.array([1, 0]))
    assert ended.terminated.tolist() == [True, False]
    assert ended.observations[0, 0] > 0.6 and "final_observation" not in ended.infos[0]
    restarted = vec.step(np.array([1, 0]))
    assert vec.reset_calls[-1] == ([0], [None])
    assert restarted.rewards[0] == 0.0 and not restarted.terminated[0]
    assert restarted.observations[0, 0] == np.float32(vec.x[0])
    assert restarted.infos[0] == {"start": pytest.approx(float(vec.x[0]))}
    assert restarted.rewards[1] != 0.0 and "x" in restarted.infos[1]


def test_get_attr_call_and_set_attr_follow_the_native_rules():
    vec = DriftVecEnv(3, max_episode_steps=100)
    vec.reset(seed=0)
    assert vec.get_attr("max_episode_steps") == [100, 100, 100]
    assert vec.get_attr("x") == vec.x.tolist() and type(vec.get_attr("x")[0]) is float
    masks = vec.call("action_mask")
    assert len(masks) == 3 and masks[0].tolist() == [1, 1]
    vec.set_attr("x", [0.1, 0.2, 0.3])
    assert isinstance(vec.x, np.ndarray) and vec.x.tolist() == [0.1, 0.2, 0.3]
    vec.set_attr("bound", 2.0)
    assert vec.bound == 2.0
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        vec.set_attr("nonexistent", 1)
    vec.set_attr("x", [1.0, 2.0])  # not one value per sub-env: stored as it is
    assert vec.x == [1.0, 2.0]


def test_async_methods_and_closing():
    vec = DriftVecEnv(2)

    async def main() -> VecStepResult:
        await vec.async_reset(seed=0)
        return await vec.async_step(np.array([1, 0]))

    assert asyncio.run(main()).rewards.shape == (2,)
    with vec:
        pass
    assert vec.closed
    vec.close()
    with pytest.raises(VecEnvClosed):
        vec.step(np.array([1, 0]))
    with pytest.raises(VecEnvClosed):
        vec.set_attr("bound", 1.0)


def test_lazy_infos_pickle_and_copy_as_plain_lists():
    vec = DriftVecEnv(3, max_episode_steps=10)
    vec.reset(seed=0)
    infos = vec.step(np.array([1, 0, 1])).infos
    restored = pickle.loads(pickle.dumps(infos))
    assert type(restored) is list and restored[2]["elapsed_steps"] == 1
    assert copy.deepcopy(infos)[0]["x"] == infos[0]["x"]
    assert repr(infos) == repr(restored)


def test_arrays_returned_by_step_are_not_modified():
    class ReusingDrift(DriftVecEnv):
        """Returns the same all-False truncated array every step."""

        def _step(self, actions):
            rewards, terminated, _, infos = super()._step(actions)
            self.no_truncation = getattr(self, "no_truncation", np.zeros(self.num_envs, bool))
            return rewards, terminated, self.no_truncation, infos

    for autoreset in (True, "next_step"):
        vec = ReusingDrift(2, max_episode_steps=1, autoreset=autoreset, bound=0.6)
        vec.reset(seed=0, options={"x": 0.55})
        assert vec.step(np.array([1, 1])).dones.all()
        vec.step(np.array([1, 1]))
        assert not vec.no_truncation.any()


@pytest.mark.parametrize("actions", [1, np.int64(1), np.array(1)])
def test_a_single_action_is_not_broadcast_to_every_sub_env(actions):
    vec = DriftVecEnv(3)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match="one action per sub-env"):  # as on SyncVecEnv
        vec.step(actions)


class _ScalarFlagsDrift(DriftVecEnv):
    def _step(self, actions):
        rewards, terminated, _, infos = super()._step(actions)
        return rewards[:, None], terminated, False, infos  # (N, 1) rewards, a bare False


def test_step_hook_results_of_the_wrong_shape_are_named():
    vec = _ScalarFlagsDrift(3)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=r"of shape \(3,\), got shapes \(3, 1\), \(3,\) and \(\)"):
        vec.step(np.array([1, 0, 1]))


def _row_of(arrays: dict, j: int, rows: int) -> dict:
    """Row j of info arrays with a leading axis of ``rows`` (nested dicts too)."""
    return {
        key: _row_of(value, j, rows)
        if isinstance(value, dict)
        else value[j]
        if isinstance(value, np.ndarray) and value.ndim >= 1 and len(value) == rows
        else value
        for key, value in arrays.items()
    }


def _assert_same_info(actual: dict, expected: dict) -> None:
    assert actual.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, dict):
            _assert_same_info(actual[key], value)
        else:
            np.testing.assert_array_equal(actual[key], value)


@pytest.mark.parametrize("autoreset", [True, "next_step", False])
def test_lazy_infos_expose_the_columns_every_row_comes_from(autoreset):
    vec = DriftVecEnv(6, max_episode_steps=3, autoreset=autoreset, bound=1.0)
    results = [vec.reset(seed=2)] + [vec.step(np.ones(6, dtype=np.int64)) for _ in range(5)]
    irregular_rows = 0
    for result in results:
        arrays, irregular, irregular_arrays = result.infos.columns()
        for i in range(6):
            if i not in irregular:
                _assert_same_info(result.infos[i], _row_of(arrays, i, 6))
        for j, i in enumerate(irregular):
            _assert_same_info(result.infos[i], _row_of(irregular_arrays, j, len(irregular)))
            irregular_rows += 1
    assert irregular_rows > 0 or autoreset is False
