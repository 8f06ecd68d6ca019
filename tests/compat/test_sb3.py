"""to_sb3: an SB3 VecEnv on every backend, tested against SB3 itself (PPO, its wrappers).

Needs stable-baselines3 and torch, which the dev environment does not install (a plain ``torch``
from PyPI is a CUDA build of several GB): the ``needs`` marker deselects these tests where SB3 is
absent; the nox install sets with the ``sb3`` extra (CPU torch from /opt/wheels) run them, and
``nox -s sb3`` the slow one.
"""

from __future__ import annotations

import numpy as np
import pytest
from vector_envs import DriftVecEnv

import sekai
import sekai.compat

pytestmark = pytest.mark.needs("stable-baselines3")

BACKENDS = ["sync", "async", "proc", "native"]


@pytest.fixture(autouse=True)
def _one_torch_thread():
    import torch

    torch.set_num_threads(1)  # two shared cores: more threads only contend


def to_sb3(vec: sekai.VecEnv, **kwargs):
    """sekai.compat.to_sb3, looked up when called: collecting this file needs no SB3."""
    return sekai.compat.to_sb3(vec, **kwargs)


def _vec(backend: str, num_envs: int = 3) -> sekai.VecEnv:
    """A vector env that truncates every 4 steps, so each test sees episodes end."""
    if backend == "native":
        return DriftVecEnv(num_envs, max_episode_steps=4, bound=1e9)
    return sekai.make_vec("CartPole-v1", num_envs, backend, max_episode_steps=4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_step_results_follow_sb3_s_vec_env_conventions(backend):
    from stable_baselines3.common.vec_env import VecEnv

    env = to_sb3(_vec(backend))
    assert isinstance(env, VecEnv) and env.num_envs == 3
    env.seed(5)
    first = env.reset()
    assert isinstance(env.reset_infos, list) and len(env.reset_infos) == 3
    env.seed(5)
    np.testing.assert_array_equal(env.reset(), first)  # the seed applies to the next reset
    for step in range(4):
        observations, rewards, dones, infos = env.step(np.ones(3, dtype=np.int64))
        assert rewards.dtype == np.float32 and dones.dtype == bool
        assert observations.shape == (3, *env.observation_space.shape)
        assert [info["TimeLimit.truncated"] for info in infos] == [step == 3] * 3
    assert dones.all()
    for info in infos:  # SB3's autoreset form: the last observation of the episode
        assert info["terminal_observation"].shape == env.observation_space.shape
        assert "final_observation" not in info
    env.close()


@pytest.mark.parametrize("backend", BACKENDS)
def test_attributes_with_indices_and_env_method(backend):
    env = to_sb3(_vec(backend))
    name = "bound" if backend == "native" else "gravity"
    before = env.get_attr(name)
    env.set_attr(name, 7.0, indices=[1])
    assert env.get_attr(name) == [before[0], 7.0, before[2]]
    assert env.get_attr(name, indices=1) == [7.0]
    if backend == "native":
        assert env.env_method("action_mask")[0].tolist() == [1, 1]
    else:
        assert env.env_method("get_attr", name) == [before[0], 7.0, before[2]]
    assert env.env_is_wrapped(sekai.wrappers.TimeLimit) == [backend in ("sync", "async")] * 3
    env.close()


def test_env_method_on_some_sub_envs_only_on_in_process_backends():
    env = to_sb3(sekai.make_vec("CartPole-v1", 3))
    assert env.env_method("get_attr", "gravity", indices=[0, 2]) == [9.8, 9.8]
    native = to_sb3(DriftVecEnv(3))
    with pytest.raises(ValueError, match="pass indices=None"):
        native.env_method("action_mask", indices=[0])


def test_options_apply_to_the_next_reset_only():
    env = to_sb3(DriftVecEnv(2))
    env.set_options({"x": 3.0})
    np.testing.assert_array_equal(env.reset(), [[3.0], [3.0]])
    assert not np.array_equal(env.reset(), [[3.0], [3.0]])


def test_reset_infos_follow_each_autoreset():
    env = to_sb3(DriftVecEnv(2, max_episode_steps=1, bound=1e9))
    env.reset()
    observations, _, dones, _ = env.step(np.array([0, 1]))
    assert dones.all()  # both sub-envs were reset: their reset infos hold the new start
    starts = [info["start"] for info in env.reset_infos]
    np.testing.assert_allclose(observations[:, 0], starts, rtol=1e-6)


def test_only_same_step_autoreset_is_accepted():
    with pytest.raises(ValueError, match=r"autoreset=True .* got autoreset='next_step'"):
        to_sb3(DriftVecEnv(2, autoreset="next_step"))
    with pytest.raises(TypeError, match="to_sb3 needs a sekai VecEnv, got CartPoleEnv"):
        to_sb3(sekai.make("CartPole-v1").unwrapped)


@pytest.mark.parametrize("backend", ["sync", "native"])
def test_ppo_trains_through_vec_monitor_and_vec_normalize_and_evaluate_policy_runs(backend):
    from stable_baselines3 import PPO
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    env = VecNormalize(VecMonitor(to_sb3(_vec(backend, 4))))
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=2, seed=0, device="cpu")
    model.learn(2048)
    assert len(model.ep_info_buffer) > 0  # VecMonitor saw episodes end through the bridge
    mean, _ = evaluate_policy(model, env, n_eval_episodes=4)
    assert np.isfinite(mean)
    env.close()


@pytest.mark.needs("sekai-finance")
@pytest.mark.parametrize("allow_short", [False, True])
def test_portfolio_weights_reach_sb3_as_a_box_and_come_back_as_weights(allow_short):
    from gymnasium.spaces import Box

    kwargs = {"allow_short": True, "max_leverage": 1.5} if allow_short else {}
    vec = sekai.make_vec("Portfolio-v0", 4, **kwargs)
    env = to_sb3(vec)
    assert type(env.action_space) is Box and env.action_space.shape == (6,)
    assert (env.action_space.low == -1).all() and (env.action_space.high == 1).all()
    env.seed(0)
    env.reset()
    actions = np.random.default_rng(0).normal(size=(4, 6)).astype(np.float32)  # PPO's raw form
    _, rewards, _, infos = env.step(actions)
    direct = sekai.make_vec("Portfolio-v0", 4, **kwargs)  # the same markets, stepped by hand
    direct.reset(seed=[0, 1, 2, 3])  # SB3's seed(0) seeds sub-env i with i
    result = direct.step(vec.action_space.from_box(actions))
    np.testing.assert_array_equal(rewards, result.rewards.astype(np.float32))
    assert [info["wealth"] for info in infos] == [info["wealth"] for info in result.infos]
    raw = to_sb3(sekai.make_vec("Portfolio-v0", 4), box_actions=False)
    assert raw.action_space.shape == (6,) and (raw.action_space.low == 0).all()
    with pytest.raises(ValueError, match="not valid portfolio weights"):
        raw.reset()
        raw.step(actions)


def test_a_space_without_box_reaches_sb3_unchanged():
    env = to_sb3(_vec("native"))
    assert env.action_space == sekai.compat.to_gymnasium_space(env.vec.action_space)


@pytest.mark.needs("sekai-finance")
def test_a_discrete_space_starting_at_minus_one_reaches_sb3_from_zero():
    """SB3's categorical policy outputs 0..n-1: Trading-v0's short/flat/long (-1..1) must be
    shown as Discrete(3) and shifted back, or PPO's first 2 is refused as no position."""
    from gymnasium.spaces import Discrete
    from stable_baselines3 import PPO

    vec = sekai.make_vec("Trading-v0", 3, allow_short=True)
    env = to_sb3(vec)
    assert env.action_space == Discrete(3)
    env.reset()
    env.step(np.array([0, 1, 2]))
    assert env.get_attr("position") == [-1.0, 0.0, 1.0]
    PPO("MlpPolicy", env, n_steps=16, batch_size=48, seed=0, device="cpu").learn(96)


@pytest.mark.needs("sekai-finance")
def test_ppo_trains_on_the_native_portfolio_env():
    from stable_baselines3 import PPO
    from stable_baselines3.common.evaluation import evaluate_policy

    vec = sekai.make_vec("Portfolio-v0", 16)
    assert isinstance(vec, sekai.NativeVecEnv)
    env = to_sb3(vec)  # no wrapper: the bridge maps PPO's Gaussian actions to weights
    model = PPO("MlpPolicy", env, n_steps=128, batch_size=256, n_epochs=2, seed=0, device="cpu")
    model.learn(4096)
    assert model.num_timesteps == 4096
    mean, _ = evaluate_policy(model, env, n_eval_episodes=16)
    assert np.isfinite(mean)
    env.close()


@pytest.mark.slow
@pytest.mark.needs("sekai-finance")
def test_ppo_trains_20k_steps_on_native_portfolio_v0_with_no_user_code():
    """The README's promise: ``to_sb3(make_vec("Portfolio-v0", 64))`` straight into PPO."""
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecMonitor

    env = VecMonitor(to_sb3(sekai.make_vec("Portfolio-v0", 64)))
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=512, seed=0, device="cpu")
    model.learn(20_000)
    assert model.num_timesteps >= 20_000
    assert len(model.ep_info_buffer) >= 64  # whole 252-step episodes ended, every action valid
    assert all(np.isfinite(info["r"]) for info in model.ep_info_buffer)
    assert np.isfinite(model.logger.name_to_value["train/loss"])
    env.close()


@pytest.mark.slow
def test_ppo_solves_cartpole_within_a_fixed_budget():
    from stable_baselines3 import PPO
    from stable_baselines3.common.evaluation import evaluate_policy

    env = to_sb3(sekai.make_vec("CartPole-v1", 8))
    model = PPO(
        "MlpPolicy",
        env,
        n_steps=32,
        batch_size=256,
        gae_lambda=0.8,
        gamma=0.98,
        n_epochs=20,
        ent_coef=0.0,
        learning_rate=1e-3,
        clip_range=0.2,
        seed=0,
        device="cpu",
    )
    best = 0.0
    for _ in range(10):  # at most 100k steps, judged every 10k
        model.learn(10_000, reset_num_timesteps=False)
        best, _ = evaluate_policy(model, env, n_eval_episodes=10)
        if best >= 195:
            break
    assert best >= 195
