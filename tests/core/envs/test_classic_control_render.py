"""render_mode="rgb_array" on the classic-control envs: gymnasium's picture sizes, geometry and
colours, drawn with NumPy alone (test_classic_control_render_vs_gymnasium.py compares pixels)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sekai

SIZES = {
    "CartPole-v1": (400, 600),
    "Pendulum-v1": (500, 500),
    "MountainCar-v0": (400, 600),
    "MountainCarContinuous-v0": (400, 600),
    "Acrobot-v1": (500, 500),
}
CART = (0, 0, 0)
POLE = (202, 152, 101)


def _pixels_of(frame: np.ndarray, color: tuple[int, int, int]) -> np.ndarray:
    """(row, column) of every pixel of exactly ``color``."""
    return np.argwhere((frame == color).all(axis=2))


@pytest.mark.parametrize("env_id", SIZES)
def test_rgb_array_frames_have_gymnasiums_size(env_id: str) -> None:
    env = sekai.make(env_id, render_mode="rgb_array")
    assert env.render_mode == "rgb_array"
    assert env.metadata["render_modes"] == ["human", "rgb_array"]
    assert env.metadata["render_fps"] > 0
    assert env.render() is None  # nothing to draw before the first reset
    env.reset(seed=0)
    env.step(env.action_space.sample())
    frame = env.render()
    assert frame.shape == (*SIZES[env_id], 3) and frame.dtype == np.uint8
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 2  # white, shapes, blended edges
    assert (frame[0, 0] == 255).all()


@pytest.mark.parametrize("env_id", SIZES)
def test_without_a_render_mode_render_gives_nothing(env_id: str) -> None:
    env = sekai.make(env_id)
    env.reset(seed=0)
    assert env.render_mode is None and env.render() is None


@pytest.mark.parametrize("env_id", SIZES)
def test_a_wrong_render_mode_is_a_value_error_naming_the_allowed_ones(env_id: str) -> None:
    with pytest.raises(
        ValueError, match=r"render_mode must be None or one of \['human', 'rgb_array'\], got 'svg'"
    ):
        sekai.make(env_id, render_mode="svg")


def test_an_env_that_does_not_render_refuses_every_render_mode() -> None:
    class Silent(sekai.Env):
        def __init__(self, render_mode: str | None = None) -> None:
            self._set_render_mode(render_mode)

    assert Silent().render_mode is None
    with pytest.raises(ValueError, match="None: this env does not render"):
        Silent("rgb_array")


@pytest.mark.parametrize("x", [-1.5, 0.0, 1.0])
def test_the_cart_is_drawn_where_it_is(x: float) -> None:
    env = sekai.make("CartPole-v1", render_mode="rgb_array")
    env.reset(seed=0)
    env.unwrapped.state = [x, 0.0, 0.0, 0.0]
    cart = _pixels_of(env.render(), CART)
    cart = cart[cart[:, 0] < 399 - 101]  # the cart body above the track line (row 299)
    middle = x * 600 / 4.8 + 300
    assert abs(cart[:, 1].mean() - middle) < 1.0
    assert cart[:, 1].max() - cart[:, 1].min() == pytest.approx(50, abs=2)  # edges blended


@pytest.mark.parametrize("theta", [-0.2, 0.0, 0.2])
def test_the_pole_leans_the_way_theta_says(theta: float) -> None:
    env = sekai.make("CartPole-v1", render_mode="rgb_array")
    env.reset(seed=0)
    env.unwrapped.state = [0.0, 0.0, theta, 0.0]
    pole = _pixels_of(env.render(), POLE)
    top = pole[pole[:, 0] == pole[:, 0].min(), 1].mean()
    assert top - 300 == pytest.approx(math.sin(theta) * 125, abs=6)  # 125 px long, from x=300


@pytest.mark.parametrize("theta", [0.0, math.pi / 2, math.pi])
def test_the_pendulum_points_where_theta_says(theta: float) -> None:
    env = sekai.make("Pendulum-v1", render_mode="rgb_array")
    env.reset(seed=0)
    env.unwrapped.state = [theta, 0.0]
    rod = _pixels_of(env.render(), (204, 77, 77))
    row, column = rod.mean(axis=0) - 250  # the rod's middle, from the pivot, y down
    reach = 500 / 4.4 / 2
    assert column == pytest.approx(-math.sin(theta) * reach, abs=4)  # theta grows anticlockwise
    assert row == pytest.approx(-math.cos(theta) * reach, abs=4)  # 0 is upright


@pytest.mark.parametrize("env_id", ["MountainCar-v0", "MountainCarContinuous-v0"])
def test_the_car_is_drawn_where_it_is_on_the_hill(env_id: str) -> None:
    env = sekai.make(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    for position in (-1.0, -0.5, 0.3):
        env.unwrapped.state = [position, 0.0]
        wheels = _pixels_of(env.render(), (128, 128, 128))
        # the median: the anti-aliased track has a few pixels of the same grey
        assert abs(np.median(wheels[:, 1]) - (position + 1.2) * 600 / 1.8) < 3


def test_the_acrobot_hangs_down_at_rest_and_swings_up_when_told() -> None:
    env = sekai.make("Acrobot-v1", render_mode="rgb_array")
    env.reset(seed=0)
    env.unwrapped.state = [0.0, 0.0, 0.0, 0.0]
    links = _pixels_of(env.render(), (0, 204, 204))
    assert links[:, 0].min() >= 248 and abs(links[:, 1].mean() - 250) < 1  # below the pivot
    env.unwrapped.state = [math.pi, 0.0, 0.0, 0.0]
    links = _pixels_of(env.render(), (0, 204, 204))
    assert links[:, 0].max() <= 252  # above it


def test_pendulum_draws_the_last_torque_as_an_arrow_mirrored_by_its_sign() -> None:
    env = sekai.make("Pendulum-v1", render_mode="rgb_array")
    env.reset(seed=0)
    env.unwrapped.state = [math.pi, 0.0]  # hanging down: the arrow is the only thing above
    env.unwrapped.last_torque = None
    assert not _pixels_of(env.render(), (0, 0, 0))[:, 0].min() < 240
    frames = {}
    for torque in (-2.0, 2.0):
        env.unwrapped.state = [math.pi, 0.0]
        env.unwrapped.last_torque = torque
        frames[torque] = env.render()
    left, right = (_pixels_of(frames[t], (0, 0, 0)) for t in (-2.0, 2.0))
    assert left[:, 0].min() < 220  # the arc reaches above the pivot
    assert abs(left[:, 1].mean() - 250 + (right[:, 1].mean() - 250)) < 2  # mirror images


def test_step_records_the_clipped_torque_and_reset_forgets_it() -> None:
    env = sekai.make("Pendulum-v1")
    env.reset(seed=0)
    env.step(np.array([5.0], np.float32))
    assert env.unwrapped.last_torque == 2.0
    env.reset()
    assert env.unwrapped.last_torque is None
