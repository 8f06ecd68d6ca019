"""Helpers of the simulated-market tests: run an episode, compare two samples."""

from __future__ import annotations

import math

import numpy as np


def run_episode(env, policy, seed=0):
    """One episode of a single env driven by a batched ``policy``; its list of step results."""
    observation, _ = env.reset(seed=seed)
    steps = []
    while True:
        step = env.step(policy(observation[None])[0])
        steps.append(step)
        observation = step.observation
        if step.terminated or step.truncated:
            return steps


def same_distribution(a, b, alpha=1e-3):
    """True unless the two-sample Kolmogorov-Smirnov test rejects at level ``alpha``."""
    grid = np.sort(np.concatenate([a, b]))
    cdf_a = np.searchsorted(np.sort(a), grid, side="right") / len(a)
    cdf_b = np.searchsorted(np.sort(b), grid, side="right") / len(b)
    statistic = float(np.max(np.abs(cdf_a - cdf_b)))
    n, m = len(a), len(b)
    return statistic < math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((n + m) / (n * m))


def assert_fast_path_agrees(env_class, actions, state, **kwargs):
    """A single env's scalar fast path against its array model with ``num_envs=1``, both built
    from ``kwargs``: every step's observation, reward, flags and info, and the ``state``
    attributes, are exactly equal (over resets too); returns how many episodes ended."""
    from sekai.envs.finance._single import FinanceEnv

    fast, array = env_class(**kwargs), env_class(**kwargs)
    array._model = array._make_model(1)
    assert type(fast._model) is not type(array._model)
    first, second = fast.reset(seed=0), array.reset(seed=0)
    _assert_same_info(first.info, second.info)
    np.testing.assert_array_equal(first.observation, second.observation)
    ended = 0
    for action in actions:
        one, other = fast.step(action), FinanceEnv.step(array, action)
        np.testing.assert_array_equal(one.observation, other.observation)
        assert one.observation.dtype == other.observation.dtype
        assert (one.reward, one.terminated, one.truncated) == (
            other.reward,
            other.terminated,
            other.truncated,
        )
        _assert_same_info(one.info, other.info)
        for name in state:
            np.testing.assert_array_equal(getattr(fast, name), getattr(array, name))
        if one.done:
            ended += 1
            first, second = fast.reset(seed=ended), array.reset(seed=ended)
            _assert_same_info(first.info, second.info)
            np.testing.assert_array_equal(first.observation, second.observation)
    return ended


def _assert_same_info(one, other):
    """Two infos with the same keys in the same order, values of the same types, equal
    (arrays element by element)."""
    assert list(one) == list(other)
    for key, value in one.items():
        assert type(value) is type(other[key]), key
        np.testing.assert_array_equal(value, other[key], err_msg=key)
        if isinstance(value, np.ndarray):
            assert value.dtype == other[key].dtype, key


def refusals_of_both_paths(env_class, action):
    """The ValueError messages with which an env's fast path and its array model refuse
    ``action`` after a reset, in that order (the fast path must say what the model says)."""
    import pytest

    from sekai.envs.finance._single import FinanceEnv

    fast, array = env_class(), env_class()
    array._model = array._make_model(1)
    errors = []
    for env, step in ((fast, fast.step), (array, lambda a: FinanceEnv.step(array, a))):
        env.reset(seed=0)
        with pytest.raises(ValueError) as caught:
            step(action)
        errors.append(str(caught.value))
    return errors
