"""sekai.finance.plotting: equity curves of finished episodes, drawn to PNG files."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import sekai
from sekai.finance.baselines import TWAP, AlmgrenChriss, BuyAndHold
from sekai.finance.plotting import episode_equity, plot_episode


def test_episode_equity_follows_the_env_to_the_end_of_its_episode():
    env = sekai.make("Trading-v0", episode_length=20)
    curve = episode_equity(env, BuyAndHold(env.action_space), seed=3)
    assert curve.shape == (21,) and curve[0] == 1.0
    assert curve[-1] == env.unwrapped.equity  # the last step's equity, read after it
    again = episode_equity(env, BuyAndHold(env.action_space), seed=3)
    np.testing.assert_array_equal(curve, again)  # a seed gives the same episode


@pytest.mark.needs("matplotlib")
def test_plot_episode_writes_a_png_of_an_agent_against_baselines(tmp_path):
    env = sekai.make("OptimalExecution-v0")
    agent = np.array([episode_equity(env, TWAP.for_env(env), seed=s) for s in range(3)])
    almgren = np.array([episode_equity(env, AlmgrenChriss.for_env(env), seed=s) for s in range(3)])
    path = plot_episode(
        tmp_path / "execution.png", agent, baselines={"AlmgrenChriss": almgren}, label="TWAP"
    )
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (800, 450)
    assert len(data) > 10_000  # lines, a band and a legend, not an empty figure


@pytest.mark.needs("matplotlib")
def test_plot_episode_refuses_curves_that_are_not_curves(tmp_path):
    with pytest.raises(ValueError, match=r"hold: equity must be a curve .* shape \(2, 3, 4\)"):
        plot_episode(tmp_path / "x.png", np.ones(5), baselines={"hold": np.ones((2, 3, 4))})
    with pytest.raises(ValueError, match=r"agent: equity must be .*finite"):
        plot_episode(tmp_path / "x.png", np.array([1.0, np.nan]))
    assert not (tmp_path / "x.png").exists()


def test_without_matplotlib_the_error_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    with pytest.raises(ImportError, match=r'pip install "sekai-finance\[plot\]"'):
        plot_episode(tmp_path / "x.png", np.ones(5))
