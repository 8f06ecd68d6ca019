"""render_mode="human": every env that draws frames shows them in a pygame window after reset and
each step, and render() returns None. Without pygame or without a display, construction fails
with one clear error (tested here without pygame: its absence is simulated). The window tests
need pygame and run in `nox -s render`, under SDL_VIDEODRIVER=dummy."""

from __future__ import annotations

import sys
from typing import Any, ClassVar

import numpy as np
import pytest

import sekai

FINANCE = pytest.mark.needs("sekai-finance")
CLASSIC_IDS = ["CartPole-v1", "Pendulum-v1", "MountainCar-v0", "MountainCarContinuous-v0"]
CLASSIC_IDS += ["Acrobot-v1"]
FINANCE_IDS = ["Trading-v0", "Portfolio-v0", "MarketMaking-v0", "OptimalExecution-v0"]
SINGLE_IDS = [*CLASSIC_IDS, *(pytest.param(i, marks=FINANCE) for i in FINANCE_IDS)]
ALL_IDS = [*SINGLE_IDS, pytest.param("LimitOrderBook-v0", marks=FINANCE)]


@pytest.fixture
def no_display(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "linux")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def no_pygame(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")  # a display, so pygame is what is missing
    monkeypatch.setitem(sys.modules, "pygame", None)  # `import pygame` fails as if absent


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_human_is_a_declared_mode_with_a_frame_rate(env_id: str) -> None:
    env = sekai.make(env_id)
    assert "human" in env.metadata["render_modes"] and env.metadata["render_fps"] > 0


@pytest.mark.usefixtures("no_display")
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_without_a_display_construction_says_so(env_id: str) -> None:
    with pytest.raises(RuntimeError, match=r'render_mode="human" needs a display.*DISPLAY'):
        sekai.make(env_id, render_mode="human")


@pytest.mark.usefixtures("no_pygame")
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_without_pygame_construction_names_the_extra(env_id: str) -> None:
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'sekai-core\[human\]'") as error:
        sekai.make(env_id, render_mode="human")
    assert error.value.name == "pygame"


@pytest.mark.usefixtures("no_pygame")
def test_an_env_drawing_its_own_human_mode_gets_no_window_from_sekai() -> None:
    class OwnWindow(sekai.Env):
        metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human"]}

        def __init__(self, render_mode: str | None = None) -> None:
            self._set_render_mode(render_mode)

    env = OwnWindow("human")  # no pygame needed: the env renders itself
    assert env.render_mode == "human" and env.render() is None
    env.close()


@FINANCE
@pytest.mark.needs("sekai-vector")
@pytest.mark.parametrize("env_id", FINANCE_IDS)
def test_native_finance_vec_envs_have_no_window(env_id: str) -> None:
    allowed = r"has no window: render_mode must be None or one of \['ansi', 'rgb_array'\]"
    with pytest.raises(ValueError, match=allowed):
        sekai.make_vec(env_id, 2, "native", render_mode="human")
    with sekai.make_vec(env_id, 2, "native") as vec:
        assert "human" not in vec.metadata["render_modes"]


# -- the window (pygame, SDL_VIDEODRIVER=dummy: nox -s render) --------------------------------
def _screen() -> np.ndarray:
    """What the window shows now, as a (height, width, 3) array."""
    import pygame

    return pygame.surfarray.array3d(pygame.display.get_surface()).transpose(1, 0, 2)


def _play(env_id: str, render_mode: str, steps: int) -> tuple[sekai.Env, list[np.ndarray]]:
    """``env_id`` reset and stepped with seeded random actions; what it showed after each."""
    env = sekai.make(env_id, render_mode=render_mode)
    env.reset(seed=3)
    env.action_space.seed(3)
    seen = [_screen() if render_mode == "human" else env.render()]
    for _ in range(steps):
        env.step(env.action_space.sample())
        seen.append(_screen() if render_mode == "human" else env.render())
    return env, seen


@pytest.mark.needs("pygame")
@pytest.mark.parametrize("env_id", SINGLE_IDS)
def test_the_window_shows_the_rgb_array_frame_after_reset_and_each_step(env_id: str) -> None:
    env, shown = _play(env_id, "human", 3)
    assert env.render() is None
    _, frames = _play(env_id, "rgb_array", 3)
    for screen, frame in zip(shown, frames, strict=True):
        np.testing.assert_array_equal(screen, frame)
    assert not np.array_equal(shown[0], shown[-1])  # the window follows the episode
    env.close()
    env.close()  # harmless
    import pygame

    assert not pygame.display.get_init()


@pytest.mark.needs("pygame")
@FINANCE
def test_the_multi_agent_market_shows_its_frame_too() -> None:
    def play(render_mode: str) -> tuple[sekai.MultiAgentEnv, list[np.ndarray]]:
        env = sekai.make("LimitOrderBook-v0", render_mode=render_mode)
        observations, _ = env.reset(seed=0)
        for agent in env.possible_agents:
            env.action_spaces[agent].seed(0)
        seen = [_screen() if render_mode == "human" else env.render()]
        for _ in range(3):
            actions = {
                a: env.action_spaces[a].sample(mask=env.action_mask(a)) for a in observations
            }
            observations = env.step(actions).observations
            seen.append(_screen() if render_mode == "human" else env.render())
        return env, seen

    env, shown = play("human")
    assert env.render() is None and shown[0].shape == (520, 600, 3)
    _, frames = play("rgb_array")
    for screen, frame in zip(shown, frames, strict=True):
        np.testing.assert_array_equal(screen, frame)
    env.close()
    env.close()


@pytest.mark.needs("pygame")
def test_a_display_pygame_cannot_open_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import pygame

    pygame.display.quit()
    monkeypatch.setenv("SDL_VIDEODRIVER", "no-such-driver")
    with pytest.raises(RuntimeError, match=r'render_mode="human" could not open a display'):
        sekai.make("CartPole-v1", render_mode="human")


@pytest.mark.needs("pygame")
def test_an_env_closed_while_another_shows_does_not_break_it() -> None:
    first = sekai.make("CartPole-v1", render_mode="human")
    second = sekai.make("Pendulum-v1", render_mode="human")
    first.reset(seed=0)
    first.close()  # quits pygame's one display
    second.reset(seed=0)
    frame = sekai.make("Pendulum-v1", render_mode="rgb_array")
    frame.reset(seed=0)
    np.testing.assert_array_equal(_screen(), frame.render())
    second.close()
