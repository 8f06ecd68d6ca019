"""render_mode="rgb_array" for the finance envs: each draws a non-trivial frame of its episode,
which changes as the episode goes on; wrong modes are a ValueError naming the allowed ones."""

from __future__ import annotations

import numpy as np
import pytest

import sekai

SINGLE_IDS = ["Trading-v0", "Portfolio-v0", "MarketMaking-v0", "OptimalExecution-v0"]


def _colours(frame: np.ndarray) -> int:
    return len(np.unique(frame.reshape(-1, 3), axis=0))


def _check_frame(frame: np.ndarray, shape: tuple[int, int, int]) -> None:
    assert frame.shape == shape and frame.dtype == np.uint8
    assert _colours(frame) >= 6  # axes, background, lines in several colours, anti-aliasing
    assert (frame != 255).any(axis=2).mean() > 0.02  # not blank: a share of the pixels is drawn


@pytest.mark.parametrize("env_id", SINGLE_IDS)
def test_single_env_frame_shows_the_episode_and_changes_with_it(env_id):
    env = sekai.make(env_id, render_mode="rgb_array")
    assert env.render_mode == "rgb_array" and "rgb_array" in env.metadata["render_modes"]
    env.reset(seed=1)
    env.action_space.seed(1)
    first = env.render()
    _check_frame(first, (400, 600, 3))
    for _ in range(8):
        env.step(env.action_space.sample())
    before = env.render()
    env.step(env.action_space.sample())
    after = env.render()
    _check_frame(after, (400, 600, 3))
    assert not np.array_equal(first, before)
    assert not np.array_equal(before, after)  # each step redraws
    env.reset(seed=1)
    assert np.array_equal(env.render(), first)  # a new episode starts a new picture


@pytest.mark.parametrize("env_id", SINGLE_IDS)
def test_render_before_reset_is_none_and_ansi_still_a_line(env_id):
    assert sekai.make(env_id, render_mode="rgb_array").render() is None
    env = sekai.make(env_id, render_mode="ansi")
    env.reset(seed=0)
    assert isinstance(env.render(), str)


def test_trading_frame_marks_buys_green_and_sells_red():
    env = sekai.make("Trading-v0", render_mode="rgb_array")
    env.reset(seed=0)
    for action in (1, 1, 0, 0, 1, 0):
        env.step(action)
    frame = env.render().astype(int)
    price_chart = frame[10:181]
    greenish = (
        (price_chart[..., 1] > 120) & (price_chart[..., 0] < 80) & (price_chart[..., 2] < 100)
    )
    reddish = (price_chart[..., 0] > 180) & (price_chart[..., 1] < 80) & (price_chart[..., 2] < 80)
    assert greenish.sum() > 20 and reddish.sum() > 20


@pytest.mark.parametrize("env_id", [*SINGLE_IDS, "LimitOrderBook-v0"])
def test_an_unknown_mode_is_a_value_error_naming_the_allowed_ones(env_id):
    with pytest.raises(
        ValueError, match=r"render_mode must be None or one of .*'rgb_array'.*'svg'"
    ):
        sekai.make(env_id, render_mode="svg")


def test_limit_order_book_frame_shows_the_book_and_the_session():
    env = sekai.make("LimitOrderBook-v0", render_mode="rgb_array")
    observations, _ = env.reset(seed=0)
    for agent in env.possible_agents:
        env.action_spaces[agent].seed(0)
    first = env.render()
    _check_frame(first, (520, 600, 3))
    book = first[10:111].astype(int)
    assert ((book[..., 1] > 120) & (book[..., 0] < 80)).sum() > 50  # green bids
    assert ((book[..., 0] > 180) & (book[..., 1] < 80)).sum() > 50  # red asks
    for _ in range(10):
        actions = {a: env.action_spaces[a].sample(mask=env.action_mask(a)) for a in observations}
        observations = env.step(actions).observations
    later = env.render()
    _check_frame(later, (520, 600, 3))
    assert not np.array_equal(first, later)


@pytest.mark.needs("sekai-vector")
@pytest.mark.parametrize("env_id", SINGLE_IDS)
def test_native_vec_render_is_one_frame_per_sub_env(env_id):
    with sekai.make_vec(env_id, 3, "native", render_mode="rgb_array") as vec:
        assert vec.render_mode == "rgb_array" and "rgb_array" in vec.metadata["render_modes"]
        assert vec.render() == [None, None, None]
        vec.reset(seed=[5, 6, 7])
        vec.action_space.seed(0)
        for _ in range(8):
            vec.step(np.stack([vec.action_space.sample() for _ in range(3)]))
        frames = vec.render()
    assert len(frames) == 3
    for frame in frames:
        _check_frame(frame, (400, 600, 3))
    assert not np.array_equal(frames[1], frames[2])  # each sub-env draws its own episode
