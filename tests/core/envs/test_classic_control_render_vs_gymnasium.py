"""sekai's classic-control frames against gymnasium's own, pixel by pixel.

gymnasium draws with pygame, which is not a sekai dependency: these tests run where pygame is
installed, as in the ``render`` nox session (``nox -s render``), or by hand after
``uv pip install pygame`` into the dev venv (``uv sync`` removes it again); elsewhere the
``needs`` marker leaves them out and the summary says so. pygame draws offscreen with
``SDL_VIDEODRIVER=dummy``.
"""

from __future__ import annotations

import os

import gymnasium
import numpy as np
import pytest

import sekai

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
pytestmark = pytest.mark.needs("gymnasium", "pygame")

STATES = {
    "CartPole-v1": [[0.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.15, 0.0], [-2.0, 0.0, -0.2, 0.0]],
    "Pendulum-v1": [[0.0, 0.0], [0.7, 0.0], [-2.5, 0.0]],
    "MountainCar-v0": [[-0.5, 0.0], [-1.1, 0.0], [0.45, 0.0]],
    "MountainCarContinuous-v0": [[-0.5, 0.0], [0.2, 0.0]],
    "Acrobot-v1": [[0.0, 0.0, 0.0, 0.0], [0.8, -1.1, 0.0, 0.0], [2.5, 1.0, 0.0, 0.0]],
}


def _mismatch(theirs: np.ndarray, ours: np.ndarray) -> float:
    """The share of the painted (non-white) pixels whose colour differs clearly (by more than
    64 in a channel): edges anti-aliased a little differently, not shapes in other places."""
    painted = (theirs != 255).any(axis=2) | (ours != 255).any(axis=2)
    differ = np.abs(theirs.astype(int) - ours.astype(int)).max(axis=2) > 64
    return float(differ.sum() / painted.sum())


def _frames(env_id: str, state: list[float], torque: float | None) -> tuple[np.ndarray, ...]:
    theirs = gymnasium.make(env_id, render_mode="rgb_array").unwrapped
    ours = sekai.make(env_id, render_mode="rgb_array")
    theirs.reset(seed=0)
    ours.reset(seed=0)
    theirs.state = np.array(state)
    ours.unwrapped.state = state
    if env_id == "Pendulum-v1":
        theirs.last_u = torque
        ours.unwrapped.last_torque = torque
    frames = theirs.render(), ours.render()
    theirs.close()
    return frames


@pytest.mark.parametrize(
    ("env_id", "state"), [(env_id, s) for env_id, states in STATES.items() for s in states]
)
def test_frames_match_gymnasiums_but_for_anti_aliased_edges(env_id, state) -> None:
    theirs, ours = _frames(env_id, state, None)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert _mismatch(theirs, ours) < 0.1


@pytest.mark.parametrize("torque", [-2.0, 0.8])
def test_the_pendulum_torque_arrow_is_near_gymnasiums(torque) -> None:
    theirs, ours = _frames("Pendulum-v1", [np.pi, 0.0], torque)
    assert _mismatch(theirs, ours) < 0.3  # gymnasium scales a picture; sekai draws the arrow
