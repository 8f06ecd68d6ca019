"""The classic-control envs as sekai envs: registry entries, seeding, results and bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import sekai
from sekai.envs.classic_control import (
    AcrobotEnv,
    CartPoleEnv,
    MountainCarContinuousEnv,
    MountainCarEnv,
    PendulumEnv,
)

REGISTERED = {
    "CartPole-v1": (CartPoleEnv, 500),
    "Pendulum-v1": (PendulumEnv, 200),
    "MountainCar-v0": (MountainCarEnv, 200),
    "MountainCarContinuous-v0": (MountainCarContinuousEnv, 999),
    "Acrobot-v1": (AcrobotEnv, 500),
}
ENV_TYPES = [env_type for env_type, _ in REGISTERED.values()]

# The start distribution of every state variable, as in gymnasium: (low, high) per variable.
START_BOUNDS = {
    CartPoleEnv: [(-0.05, 0.05)] * 4,
    PendulumEnv: [(-np.pi, np.pi), (-1.0, 1.0)],
    MountainCarEnv: [(-0.6, -0.4), (0.0, 0.0)],
    MountainCarContinuousEnv: [(-0.6, -0.4), (0.0, 0.0)],
    AcrobotEnv: [(-0.1, 0.1)] * 4,
}


def _name(env_type: type) -> str:
    return env_type.__name__


@pytest.mark.parametrize("env_id", REGISTERED)
def test_registered_by_sekai_core_with_gymnasiums_time_limit(env_id: str) -> None:
    env_type, max_episode_steps = REGISTERED[env_id]
    spec = sekai.spec(env_id)
    assert spec.max_episode_steps == max_episode_steps
    assert spec.distribution == "sekai-core"
    assert isinstance(spec.entry_point, str)  # the env module loads only when made
    env = sekai.make(env_id)
    assert type(env.unwrapped) is env_type
    assert env.get_attr("max_episode_steps") == max_episode_steps
    assert env.render_mode is None
    assert env.metadata["render_modes"] == ["human", "rgb_array"]  # as gymnasium's
    env.close()


def test_time_limit_truncates_a_cartpole_episode() -> None:
    env = sekai.make("CartPole-v1", max_episode_steps=5)
    env.reset(seed=0)
    results = [env.step(i % 2) for i in range(5)]
    assert [r.truncated for r in results] == [False] * 4 + [True]
    assert not any(r.terminated for r in results)


def test_x_threshold_is_reachable_through_the_wrappers() -> None:
    env = sekai.make("CartPole-v1")
    assert env.get_attr("x_threshold") == 2.4
    env.set_attr("x_threshold", 0.01)
    env.reset(seed=0)
    env.unwrapped.state = [0.009, 1.0, 0.0, 0.0]  # one step takes x past the threshold
    assert env.step(1).terminated


@pytest.mark.parametrize("env_type", ENV_TYPES, ids=_name)
def test_reset_start_states_lie_in_gymnasiums_bounds(env_type: type) -> None:
    env = env_type()
    env.reset(seed=0)
    starts = [env.state]
    for _ in range(200):  # seed=None continues the stream
        env.reset()
        starts.append(env.state)
    starts_array = np.array(starts)
    for column, (low, high) in enumerate(START_BOUNDS[env_type]):
        values = starts_array[:, column]
        assert values.min() >= low and values.max() <= high
        if low < high:  # and the draws spread over the range
            assert values.max() - values.min() > 0.8 * (high - low)


@pytest.mark.parametrize("env_type", ENV_TYPES, ids=_name)
def test_same_seed_same_episode_other_seed_other_start(env_type: type) -> None:
    def rollout(seed: int) -> list[np.ndarray]:
        env = env_type()
        env.action_space.seed(7)
        observations = [env.reset(seed=seed).observation]
        for _ in range(20):
            result = env.step(env.action_space.sample())
            observations.append(result.observation)
            if result.terminated:
                observations.append(env.reset().observation)
        return observations

    first, again = rollout(1), rollout(1)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], rollout(2)[0])


@pytest.mark.parametrize("env_type", ENV_TYPES, ids=_name)
def test_each_result_is_a_new_float32_array_in_the_observation_space(env_type: type) -> None:
    env = env_type()
    env.action_space.seed(0)
    reset = env.reset(seed=0)
    assert isinstance(reset, sekai.ResetResult)
    kept = reset.observation.copy()
    previous = reset.observation
    for _ in range(10):
        result = env.step(env.action_space.sample())
        assert isinstance(result, sekai.StepResult)
        assert result.observation is not previous
        assert result.observation.dtype == np.float32
        assert result.observation in env.observation_space
        previous = result.observation
    np.testing.assert_array_equal(reset.observation, kept)


@pytest.mark.parametrize("env_type", ENV_TYPES, ids=_name)
def test_step_before_reset_is_an_error(env_type: type) -> None:
    env = env_type()
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(env.action_space.sample())


@pytest.mark.parametrize("env_type", [CartPoleEnv, MountainCarEnv, AcrobotEnv], ids=_name)
@pytest.mark.parametrize(
    "action",
    # not members of Discrete(n), as in gymnasium, though == compares some of them equal to 1
    [-1, 3, 0.5, True, 1.0, np.float32(1), np.array([1]), np.array(1.0), "1"],
    ids=repr,
)
def test_invalid_discrete_action_is_a_value_error(env_type: type, action: object) -> None:
    env = env_type()
    env.reset(seed=0)
    if env_type is CartPoleEnv and isinstance(action, int) and action == 3:
        action = 2
    assert action not in env.action_space
    state = env.state
    with pytest.raises(ValueError, match="actions are"):
        env.step(action)
    assert env.state == state


@pytest.mark.parametrize("env_type", [PendulumEnv, MountainCarContinuousEnv], ids=_name)
@pytest.mark.parametrize(
    "action",
    [
        0.5,  # a bare float: the action space is Box(shape=(1,))
        np.array([0.5, 1.5], np.float32),  # the second entry would be silently ignored
        np.array([[0.5]], np.float32),
        np.array([np.nan], np.float32),  # would turn the state into NaN for good
    ],
)
def test_invalid_continuous_action_is_a_value_error(env_type: type, action: object) -> None:
    env = env_type()
    env.reset(seed=0)
    state = env.state
    with pytest.raises(ValueError, match="actions"):
        env.step(action)
    assert env.state == state


@pytest.mark.parametrize("env_type", [CartPoleEnv, MountainCarEnv, AcrobotEnv], ids=_name)
def test_discrete_actions_may_be_numpy_integers(env_type: type) -> None:
    env, other = env_type(), env_type()
    env.reset(seed=0)
    other.reset(seed=0)
    for action in (np.int64(1), np.array(0), np.intp(1)):
        np.testing.assert_array_equal(
            env.step(action).observation, other.step(int(action)).observation
        )


@pytest.mark.parametrize(
    ("env_type", "options", "problem"),
    [
        (CartPoleEnv, {"low": 0.1, "high": -0.1}, "must not exceed"),
        (CartPoleEnv, {"scale": 2.0}, "unknown reset options"),
        (MountainCarEnv, {"low": "far"}, "must be numbers"),
        (PendulumEnv, {"low": -1.0}, "unknown reset options"),
    ],
)
def test_bad_reset_options_are_value_errors(
    env_type: type, options: dict[str, object], problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        env_type().reset(seed=0, options=options)


def test_state_setter_takes_any_sequence_of_the_right_length() -> None:
    env = CartPoleEnv()
    env.state = np.array([0.1, 0.2, 0.3, 0.4])
    assert env.state == (0.1, 0.2, 0.3, 0.4)
    assert all(type(v) is float for v in env.state)
    with pytest.raises(ValueError):
        env.state = [0.1, 0.2]


def test_cartpole_steps_after_termination_earn_nothing() -> None:
    env = CartPoleEnv()
    env.reset(seed=0)
    env.state = [2.39, 5.0, 0.0, 0.0]
    result = env.step(1)
    assert result.terminated and result.reward == 1.0
    assert env.step(1).reward == 0.0
    assert env.step(1).reward == 0.0
    env.reset(seed=0)
    assert env.step(1).reward == 1.0


def test_a_made_cartpole_warns_once_about_steps_after_termination() -> None:
    env = sekai.make("CartPole-v1")
    env.reset(seed=0)
    env.unwrapped.state = [2.39, 5.0, 0.0, 0.0]
    assert env.step(1).terminated
    with pytest.warns(UserWarning, match="after the episode terminated") as caught:
        assert env.step(1).reward == 0.0
    assert len(caught) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert env.step(1).reward == 0.0


@pytest.mark.parametrize("env_type", ENV_TYPES)
@pytest.mark.parametrize("options", [3, ["low"], "low"])
def test_options_that_are_not_a_dict_are_named(env_type, options) -> None:
    with pytest.raises(TypeError, match=r"options must be a dict or None, got"):
        env_type().reset(options=options)
