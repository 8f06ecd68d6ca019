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
