"""The classic-control envs reproduce gymnasium 1.x: dynamics, rewards, termination, resets, spaces.

Each case sets the same state on both envs (``env.state``), steps both with the same action and
compares the next state, observation, reward and termination. Resets draw from the generator in
the same way as gymnasium's, so the same seed gives the same start.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.envs.classic_control.acrobot import AcrobotEnv as GymAcrobot
from gymnasium.envs.classic_control.cartpole import CartPoleEnv as GymCartPole
from gymnasium.envs.classic_control.continuous_mountain_car import (
    Continuous_MountainCarEnv as GymMountainCarContinuous,
)
from gymnasium.envs.classic_control.mountain_car import MountainCarEnv as GymMountainCar
from gymnasium.envs.classic_control.pendulum import PendulumEnv as GymPendulum

from sekai.envs.classic_control import (
    AcrobotEnv,
    CartPoleEnv,
    MountainCarContinuousEnv,
    MountainCarEnv,
    PendulumEnv,
)

Rng = np.random.Generator


@dataclass
class Case:
    sekai_env: Callable[[], Any]
    gym_env: Callable[[], Any]
    random_state: Callable[[Rng], list[float]]
    random_action: Callable[[Rng], Any]
    state_tolerance: float  # absolute; where gymnasium itself rounds to float32 it is larger
    reset_options: dict[str, float]

    def __str__(self) -> str:
        return type(self.sekai_env()).__name__


def _wall_or_anywhere(rng: Rng) -> list[float]:
    """A mountain-car state, one time in four pressed against the left wall."""
    if rng.random() < 0.25:
        return [-1.2 + rng.uniform(0.0, 0.01), rng.uniform(-0.07, 0.0)]
    return [rng.uniform(-1.2, 0.6), rng.uniform(-0.07, 0.07)]


CASES = [
    Case(
        CartPoleEnv,
        GymCartPole,
        lambda rng: rng.uniform([-2.5, -3.0, -0.22, -3.0], [2.5, 3.0, 0.22, 3.0]).tolist(),
        lambda rng: int(rng.integers(2)),
        1e-14,
        {"low": -0.2, "high": 0.3},
    ),
    Case(
        PendulumEnv,
        GymPendulum,
        lambda rng: rng.uniform([-7.0, -8.0], [7.0, 8.0]).tolist(),
        # beyond the action bounds too, to cover the clipping
        lambda rng: rng.uniform(-3.0, 3.0, size=1).astype(np.float32),
        1e-6,  # gymnasium evaluates the torque term in float32
        {"x_init": 0.5, "y_init": 0.25},
    ),
    Case(
        MountainCarEnv,
        GymMountainCar,
        _wall_or_anywhere,
        lambda rng: int(rng.integers(3)),
        1e-12,
        {"low": -0.3, "high": 0.1},
    ),
    Case(
        MountainCarContinuousEnv,
        GymMountainCarContinuous,
        _wall_or_anywhere,
        lambda rng: rng.uniform(-1.5, 1.5, size=1).astype(np.float32),
        1e-7,  # gymnasium stores this env's state in float32
        {"low": -0.3, "high": 0.1},
    ),
    Case(
        AcrobotEnv,
        GymAcrobot,
        lambda rng: rng.uniform(
            [-math.pi, -math.pi, -4 * math.pi, -9 * math.pi],
            [math.pi, math.pi, 4 * math.pi, 9 * math.pi],
        ).tolist(),
        lambda rng: int(rng.integers(3)),
        1e-12,
        {"low": -0.5, "high": 0.5},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_step_from_any_state_matches_gymnasium(case: Case) -> None:
    rng = np.random.default_rng(0)
    env, reference = case.sekai_env(), case.gym_env()
    env.reset(seed=0)
    reference.reset(seed=0)
    terminations = 0
    for _ in range(300):
        state, action = case.random_state(rng), case.random_action(rng)
        env.state = state
        reference.state = np.array(state)
        result = env.step(action)
        expected_obs, expected_reward, expected_terminated, _, _ = reference.step(action)

        np.testing.assert_allclose(env.state, reference.state, rtol=0, atol=case.state_tolerance)
        assert result.observation.dtype == np.float32
        np.testing.assert_allclose(result.observation, expected_obs, rtol=1e-6, atol=1e-7)
        assert result.reward == pytest.approx(float(expected_reward), rel=1e-9, abs=1e-6)
        assert type(result.reward) is float
        assert result.terminated is expected_terminated
        assert result.truncated is False
        assert result.info == {}
        if result.terminated:  # start afresh, so neither env sees a step after termination
            terminations += 1
            env.reset(seed=0)
            reference.reset(seed=0)
    if case.sekai_env is not PendulumEnv:  # the only one that never terminates
        assert terminations > 0


@pytest.mark.parametrize("case", CASES, ids=str)
def test_trajectory_follows_gymnasium_for_a_whole_episode(case: Case) -> None:
    rng = np.random.default_rng(1)
    env, reference = case.sekai_env(), case.gym_env()
    env.reset(seed=3)
    reference.reset(seed=3)
    for _ in range(60):
        action = case.random_action(rng)
        result = env.step(action)
        expected_obs, _, expected_terminated, _, _ = reference.step(action)
        np.testing.assert_allclose(result.observation, expected_obs, rtol=1e-5, atol=1e-6)
        assert result.terminated is expected_terminated
        if result.terminated:
            break


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("options", ["default", "custom"])
def test_reset_draws_the_same_start_as_gymnasium(case: Case, options: str) -> None:
    reset_options = None if options == "default" else case.reset_options
    env, reference = case.sekai_env(), case.gym_env()
    for seed in range(20):
        observation, info = env.reset(seed=seed, options=reset_options)
        expected_obs, _ = reference.reset(seed=seed, options=reset_options)
        assert observation.dtype == np.float32
        # (gymnasium's Acrobot takes cos and sin in float32: the last bit may differ)
        np.testing.assert_allclose(observation, expected_obs, rtol=0, atol=1e-7)
        np.testing.assert_array_equal(env.state, np.asarray(reference.state, np.float64))
        assert info == {}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_spaces_equal_gymnasiums(case: Case) -> None:
    env, reference = case.sekai_env(), case.gym_env()
    for name in ("observation_space", "action_space"):
        space, expected = getattr(env, name), getattr(reference, name)
        if isinstance(expected, gymnasium.spaces.Discrete):
            assert (space.n, space.start) == (expected.n, expected.start)
        else:
            assert space.dtype == expected.dtype == np.float32
            np.testing.assert_array_equal(space.low, expected.low)
            np.testing.assert_array_equal(space.high, expected.high)


def test_cartpole_spaces_print_as_documented() -> None:
    env = CartPoleEnv()
    assert repr(env.observation_space) == (
        "Box([-4.8, -inf, -0.41887903, -inf], [4.8, inf, 0.41887903, inf], (4,), float32)"
    )
    assert repr(env.action_space) == "Discrete(2)"
    assert env.x_threshold == 2.4


def test_action_spaces_print_as_gymnasiums() -> None:
    assert repr(PendulumEnv().action_space) == "Box(-2.0, 2.0, (1,), float32)"
    assert repr(MountainCarContinuousEnv().action_space) == "Box(-1.0, 1.0, (1,), float32)"
    assert repr(MountainCarEnv().action_space) == repr(AcrobotEnv().action_space) == "Discrete(3)"


def test_pendulum_gravity_and_goal_velocity_are_parameters() -> None:
    for g in (10.0, 3.7):
        env, reference = PendulumEnv(g=g), GymPendulum(g=g)
        env.reset(seed=0)
        reference.reset(seed=0)
        env.state = reference.state = np.array([1.0, 0.5])
        action = np.array([0.25], np.float32)
        np.testing.assert_allclose(env.step(action).observation, reference.step(action)[0])
    for env_type, gym_type in (
        (MountainCarEnv, GymMountainCar),
        (MountainCarContinuousEnv, GymMountainCarContinuous),
    ):
        env, reference = env_type(goal_velocity=0.01), gym_type(goal_velocity=0.01)
        env.reset(seed=0)
        reference.reset(seed=0)
        for velocity in (0.005, 0.02):  # at the goal position: too slow, fast enough
            env.state = reference.state = np.array([0.55, velocity])
            action = 1 if env_type is MountainCarEnv else np.array([0.0], np.float32)
            assert env.step(action).terminated is reference.step(action)[2] is (velocity > 0.01)
