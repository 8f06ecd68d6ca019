"""to_gymnasium / from_gymnasium, proven by each side's own env checker over its registry."""

from __future__ import annotations

import importlib.util
import warnings
from typing import Any, ClassVar

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from gymnasium.utils.passive_env_checker import env_render_passive_checker

import sekai
from sekai.compat import from_gymnasium, to_gymnasium
from sekai.registration import EnvSpec


def _single_agent_ids() -> list[str]:
    ids = []
    for env_id in sorted(sekai.registry):
        with sekai.make(env_id) as env:
            if isinstance(env, sekai.Env):
                ids.append(env_id)
    return ids


def _classic_control_ids() -> list[str]:
    return sorted(
        env_id
        for env_id, spec in gymnasium.registry.items()
        if isinstance(spec.entry_point, str)
        and spec.entry_point.startswith("gymnasium.envs.classic_control")
    )


@pytest.mark.parametrize("env_id", _single_agent_ids())
def test_gymnasium_check_env_passes_on_every_registered_sekai_env(env_id, monkeypatch):
    """gymnasium's checker, its render checks included: of every declared mode, as it makes
    them, but for "human" when pygame (sekai-core[human]) is absent: then that mode fails at
    construction by design (tests/core/test_human_rendering.py)."""
    has_pygame = importlib.util.find_spec("pygame") is not None
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")  # a human window, where there is one, unseen
    env = to_gymnasium(sekai.make(env_id))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium's advice (e.g. on infinite bounds) only
        gymnasium_check_env(env, skip_render_check=True)
        for mode in env.metadata["render_modes"]:
            if mode != "human" or has_pygame:
                with to_gymnasium(sekai.make(env_id, render_mode=mode)) as rendering:
                    rendering.reset(seed=0)
                    env_render_passive_checker(rendering)
    env.close()


@pytest.mark.parametrize("env_id", _classic_control_ids())
def test_sekai_check_env_passes_on_every_gymnasium_classic_control_env(env_id):
    sekai.check_env(from_gymnasium(gymnasium.make(env_id)))


def test_the_classic_control_ids_are_found():
    assert {"CartPole-v1", "Pendulum-v1", "Acrobot-v1"} <= set(_classic_control_ids())


class _MixedEnv(sekai.Env):
    """Composite spaces of every kind, a declared render mode, and results built from rng."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, render_mode: str | None = None) -> None:
        self.render_mode = render_mode
        self.observation_space = sekai.Dict(
            {
                "book": sekai.MaskedBox(0.0, 10.0, (2,), max_size=3),
                "fills": sekai.Sequence(sekai.Box(0.0, 1.0, (2,)), max_length=4, stack=True),
                "state": sekai.Tuple([sekai.Discrete(3, start=-1), sekai.MultiBinary(2)]),
            }
        )
        self.action_space = sekai.MultiDiscrete([3, 2], start=[-1, 0])

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._set_rng(seed)
        self.observation_space.seed(int(self.rng.integers(2**31)))
        self.t = 0
        return sekai.ResetResult(self.observation_space.sample(), {"t": 0})

    def step(self, action: Any) -> sekai.StepResult:
        self.t += 1
        observation = self.observation_space.sample()
        return sekai.StepResult(observation, float(np.sum(action)), self.t >= 5, False, {})

    def render(self) -> str | None:
        return f"t={self.t}" if self.render_mode == "ansi" else None


def test_composite_spaces_render_modes_and_the_spec_cross_the_bridge():
    spec = EnvSpec("compat/Mixed-v0", _MixedEnv, max_episode_steps=4)
    env = to_gymnasium(sekai.make(spec, render_mode="ansi"))
    gymnasium_check_env(env)  # also makes the env again through env.spec per render mode
    assert env.metadata == {"render_modes": ["ansi"], "render_fps": 4}
    assert (env.render_mode, env.spec.id, env.spec.kwargs) == (
        "ansi",
        "compat/Mixed-v0",
        {"render_mode": "ansi"},
    )
    remade = env.spec.make()
    assert remade.render_mode == "ansi" and remade.unwrapped.env.spec.max_episode_steps == 4
    env.reset(seed=0)
    assert env.render() == "t=0"

    back = from_gymnasium(env)
    assert back.observation_space == _MixedEnv().observation_space
    assert back.action_space == sekai.MultiDiscrete([3, 2], start=[-1, 0])
    sekai.check_env(back, skip_render_check=False)


def test_results_and_seeding_pass_through_unchanged():
    sekai_env = sekai.make("CartPole-v1")
    env = to_gymnasium(sekai.make("CartPole-v1"))
    expected, _ = sekai_env.reset(seed=3)
    observation, _ = env.reset(seed=3)
    np.testing.assert_array_equal(observation, expected)
    assert env.np_random is env.env.unwrapped.rng  # one generator, owned by the sekai env
    step = env.step(1)
    assert step[1:4] == (1.0, False, False) and isinstance(step[1], float)
    np.testing.assert_array_equal(step[0], sekai_env.step(1).observation)


def test_from_gymnasium_carries_the_spec_and_the_time_limit():
    env = from_gymnasium(gymnasium.make("CartPole-v1", render_mode="rgb_array"))
    assert (env.spec.id, env.spec.max_episode_steps, env.render_mode) == (
        "CartPole-v1",
        500,
        "rgb_array",
    )
    assert env.metadata["render_modes"] == ["human", "rgb_array"]
    rebuilt = sekai.make(env.spec)
    assert isinstance(rebuilt.unwrapped.env.unwrapped, gymnasium.Env)


def test_only_envs_of_the_other_api_are_accepted():
    with pytest.raises(TypeError, match=r"to_gymnasium needs a sekai\.Env, got CartPoleEnv"):
        to_gymnasium(gymnasium.make("CartPole-v1").unwrapped)
    env = sekai.make("CartPole-v1")
    with pytest.raises(
        TypeError, match=rf"from_gymnasium needs a gymnasium\.Env, got {type(env).__name__}$"
    ):
        from_gymnasium(env)
