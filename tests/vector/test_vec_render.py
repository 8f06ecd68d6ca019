"""vec.render(), vec.metadata and vec.render_mode on every backend, native envs and wrappers."""

from __future__ import annotations

import numpy as np
import pytest
from vector_envs import DriftVecEnv

import sekai


@pytest.mark.parametrize("mode", ["sync", "async", "proc"])
def test_render_gives_one_frame_per_sub_env(mode: str) -> None:
    with sekai.make_vec("CartPole-v1", 3, mode, render_mode="rgb_array") as vec:
        assert vec.metadata["render_modes"] == ["human", "rgb_array"]
        assert vec.render_mode == "rgb_array"
        vec.reset(seed=0)
        frames = vec.render()
        assert len(frames) == 3
        assert all(frame.shape == (400, 600, 3) and frame.dtype == np.uint8 for frame in frames)
        for frame, (x, *_) in zip(frames, vec.get_attr("state"), strict=True):
            cart = np.argwhere((frame[285:298] == 0).all(axis=2))  # the cart above the track
            assert abs(np.median(cart[:, 1]) - (x * 125 + 300)) < 1.5  # each sub-env's own


def test_a_vector_wrapper_renders_what_it_wraps() -> None:
    vec = sekai.VecRecordEpisodeStatistics(
        sekai.make_vec("Pendulum-v1", 2, render_mode="rgb_array")
    )
    vec.reset(seed=0)
    assert vec.metadata["render_fps"] == 30
    assert [frame.shape for frame in vec.render()] == [(500, 500, 3)] * 2


def test_without_a_render_mode_the_frames_are_none() -> None:
    with sekai.make_vec("CartPole-v1", 2) as vec:
        vec.reset(seed=0)
        assert vec.render_mode is None and vec.render() == [None, None]


def test_a_native_env_renders_nothing_unless_it_says_how() -> None:
    vec = DriftVecEnv(2)
    assert vec.metadata == {"render_modes": []} and vec.render_mode is None
    assert vec.render() is None
    assert sekai.VecRecordEpisodeStatistics(vec).render() is None


def test_a_vec_env_may_assign_its_own_metadata_and_render_mode() -> None:
    with sekai.make_vec("CartPole-v1", 2) as vec:
        vec.metadata = {"render_modes": ["ansi"]}
        vec.render_mode = "ansi"
        assert vec.metadata == {"render_modes": ["ansi"]} and vec.render_mode == "ansi"
