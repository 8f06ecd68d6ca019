"""A third-party package (examples/demo-plugin, installed in the venv) plugs envs into sekai."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import sekai
from sekai import registration
from sekai.registration import PluginWarning, Registry


def test_demo_env_is_made_by_id_with_its_registered_defaults():
    env = sekai.make("demo/RandomWalk-v0")
    assert isinstance(env.env, sekai.TimeLimit)
    assert env.spec.distribution == "sekai-demo-plugin"
    assert env.max_episode_steps == 200
    assert env.unwrapped.sigma == 0.01
    obs, info = env.reset(seed=0)
    assert obs in env.observation_space
    assert info == {"price": 1.0}


def test_demo_env_passes_check_env():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no EnvCheckWarning either
        sekai.check_env(sekai.make("demo/RandomWalk-v0"))


def test_demo_env_pays_position_times_log_return_net_of_costs():
    env = sekai.make("demo/RandomWalk-v0", sigma=0.05, cost=0.001)
    env.reset(seed=3)
    log_returns = np.random.default_rng(3).normal(0.0, 0.05, size=3)
    results = [env.step(action) for action in (1, 1, -1)]
    expected = [log_returns[0] - 0.001, log_returns[1], -log_returns[2] - 0.002]
    np.testing.assert_allclose([result.reward for result in results], expected)
    np.testing.assert_allclose(results[-1].observation, [log_returns[2], -1], rtol=1e-6)
    assert results[-1].info["price"] == pytest.approx(np.exp(log_returns.sum()))


@pytest.mark.parametrize("bad", [{"sigma": -0.1}, {"cost": -1.0}, {"sigma": float("nan")}])
def test_demo_env_refuses_negative_or_nan_sigma_and_cost(bad):
    with pytest.raises(ValueError, match="sigma and cost must be >= 0"):
        sekai.make("demo/RandomWalk-v0", **bad)


def test_demo_env_is_truncated_by_the_registered_time_limit():
    env = sekai.make("demo/RandomWalk-v0")
    env.reset(seed=1)
    results = [env.step(env.action_space.sample()) for _ in range(200)]
    assert [result.truncated for result in results].index(True) == 199


def test_sekai_list_shows_the_demo_env_under_its_distribution():
    command = Path(sys.executable).with_name("sekai")
    output = subprocess.run([command, "list"], capture_output=True, text=True, check=True).stdout
    lines = output.splitlines()
    assert lines[lines.index("sekai-demo-plugin:") + 1].split()[0] == "demo/RandomWalk-v0"


def test_a_broken_plugin_warns_and_the_others_still_load(tmp_path, monkeypatch):
    info = tmp_path / "broken_envs-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-envs\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[sekai.plugins]\nbroken = broken_envs_missing.plugin\n")
    broken = importlib.metadata.PathDistribution(info).entry_points
    installed = registration._plugin_entry_points()
    monkeypatch.setattr(registration, "_plugin_entry_points", lambda: [*broken, *installed])

    fresh = Registry()
    with pytest.warns(PluginWarning, match="'broken' .* from distribution 'broken-envs' failed"):
        ids = set(fresh)
    assert {"demo/RandomWalk-v0", "CartPole-v1"} <= ids
