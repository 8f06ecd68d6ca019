"""What MarketMaking-v0 and OptimalExecution-v0 share: native = single, the env API, backends."""

from __future__ import annotations

import numpy as np
import pytest
from rollouts import same_distribution

import sekai
from sekai.env_checker import check_env
from sekai.finance.baselines import TWAP, AlmgrenChriss, AvellanedaStoikov

BASELINES = {"MarketMaking-v0": AvellanedaStoikov.for_env, "OptimalExecution-v0": TWAP.for_env}
IDS = list(BASELINES)
MM, OE = IDS
# no randomness left: a fixed mid, and fills certain (no depth decay, a huge arrival rate)
DETERMINISTIC = {
    "MarketMaking-v0": {"sigma": 0.0, "arrival_rate": 1e5, "depth_decay": 0.0},
    "OptimalExecution-v0": {"sigma": 0.0},
}


def _random_actions(space, n, rng):
    return rng.uniform(space.low, space.high, (n, *space.shape)).astype(np.float32)


def _info(vec_info):
    """A native sub-env's info of the step itself (the final info when it was autoreset)."""
    return vec_info.get("final_info", vec_info)


@pytest.mark.parametrize(
    ("env_id", "kwargs", "baseline"),
    [
        (MM, {"inventory_penalty": 0.1, "terminal_penalty": 0.5}, AvellanedaStoikov.for_env),
        ("OptimalExecution-v0", {"risk_aversion": 1e-6}, AlmgrenChriss.for_env),
        ("OptimalExecution-v0", {"side": "buy", "risk_aversion": 1e-6}, AlmgrenChriss.for_env),
    ],
)
def test_a_native_env_of_one_matches_the_single_env_draw_for_draw(env_id, kwargs, baseline):
    """One model, one generator, the same draws in the same order: identical episodes."""
    single = sekai.make(env_id, **kwargs)
    native = sekai.make_vec(env_id, 1, **kwargs)
    policy = baseline(single)
    observation, info = single.reset(seed=7)
    reset = native.reset(seed=7)
    assert reset.infos[0] == info
    observations = reset.observations
    while True:
        np.testing.assert_array_equal(observations[0], observation)
        step = single.step(policy(observation[None])[0])
        vec_step = native.step(policy(observations))
        assert vec_step.rewards[0] == step.reward
        assert _info(vec_step.infos[0]) == step.info
        observation, observations = step.observation, vec_step.observations
        if step.terminated:
            assert vec_step.terminated[0]
            return


@pytest.mark.parametrize("env_id", IDS)
def test_native_equals_single_exactly_on_deterministic_paths(env_id):
    kwargs = {**DETERMINISTIC[env_id], "episode_length": 20}
    native = sekai.make_vec(env_id, 4, **kwargs)
    singles = [sekai.make(env_id, **kwargs) for _ in range(4)]
    native.reset(seed=0)
    for i, env in enumerate(singles):
        env.reset(seed=100 + i)
    rng = np.random.default_rng(1)
    for _ in range(20):
        actions = _random_actions(native.action_space, 4, rng)
        result = native.step(actions)
        for i, env in enumerate(singles):
            step = env.step(actions[i])
            assert result.rewards[i] == step.reward
            assert _info(result.infos[i]) == step.info
    assert result.terminated.all()


@pytest.mark.parametrize("env_id", IDS)
def test_native_and_sync_episode_returns_agree_in_distribution(env_id):
    policy = BASELINES[env_id](sekai.make(env_id, episode_length=20))
    returns = {}
    for mode, seed in (("native", 0), ("sync", 1)):
        with sekai.make_vec(env_id, 150, vectorization_mode=mode, episode_length=20) as vec:
            result = vec.reset(seed=seed)
            for _ in range(20):
                result = vec.step(policy(result.observations))
        returns[mode] = np.array([info["final_info"]["episode_return"] for info in result.infos])
    assert returns["native"].std() > 0 and returns["sync"].std() > 0
    assert same_distribution(returns["native"], returns["sync"])


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_passes(env_id):
    check_env(sekai.make(env_id))
    check_env(sekai.make(env_id, episode_length=3))


@pytest.mark.parametrize("mode", ["native", "sync", "proc"])
@pytest.mark.parametrize("env_id", IDS)
def test_make_vec_with_max_episode_steps_truncates_on_every_backend(env_id, mode):
    vector_kwargs = {"num_workers": 2} if mode == "proc" else None
    with sekai.make_vec(
        env_id,
        8,
        vectorization_mode=mode,
        vector_kwargs=vector_kwargs,
        max_episode_steps=50,
        episode_length=100,
    ) as vec:
        result = vec.reset(seed=0)
        actions = np.repeat(vec.action_space.high[None] / 2, 8, axis=0)
        for _ in range(49):
            result = vec.step(actions)
            assert not result.dones.any()
        result = vec.step(actions)
        assert result.truncated.all() and not result.terminated.any()
        assert [info["final_info"]["elapsed_steps"] for info in result.infos] == [50] * 8
        horizon = 100 * vec.get_attr("dt")[0]
        assert vec.get_attr("time_remaining") == pytest.approx([horizon] * 8)  # a new episode


@pytest.mark.parametrize("env_id", IDS)
def test_final_infos_carry_the_episode_metrics_only_for_finished_sub_envs(env_id):
    metrics = {"episode_return", "sharpe", "max_drawdown", "turnover"}
    vec = sekai.make_vec(env_id, 3, episode_length=4, vector_kwargs={"autoreset": False})
    vec.reset(seed=0)
    actions = np.repeat(vec.action_space.high[None] / 2, 3, axis=0)
    for _ in range(3):
        result = vec.step(actions)
        assert all(not metrics & set(info) for info in result.infos)
    result = vec.step(actions)
    assert result.terminated.all()
    assert all(metrics <= set(info) for info in result.infos)


@pytest.mark.parametrize("env_id", IDS)
def test_ansi_render_gives_one_line_per_step(env_id):
    env = sekai.make(env_id, render_mode="ansi", episode_length=5)
    env.reset(seed=0)
    lines = [env.render()]
    rng = np.random.default_rng(0)
    for _ in range(5):
        env.step(_random_actions(env.action_space, 1, rng)[0])
        lines.append(env.render())
    assert all(isinstance(line, str) and line and "\n" not in line for line in lines)
    assert all("reward=" in line for line in lines[1:]) and len(set(lines)) == 6
    assert sekai.make(env_id).render() is None


@pytest.mark.parametrize(
    ("env_id", "kwargs", "message"),
    [
        (MM, {"sigma": -1.0}, "sigma must be a finite number of at least 0.0, got -1.0"),
        (MM, {"dt": 0.0}, "dt must be a finite number > 0, got 0.0"),
        (MM, {"arrival_rate": float("nan")}, "arrival_rate must be a finite .*, got nan"),
        (MM, {"depth_decay": float("inf")}, "depth_decay must be a finite .*, got inf"),
        (MM, {"episode_length": 0}, "episode_length must be an int of at least 1, got 0"),
        (MM, {"max_inventory": 2.5}, "max_inventory must be an int of at least 1, got 2.5"),
        (MM, {"inventory_penalty": -0.1}, "inventory_penalty must be a finite number"),
        (MM, {"terminal_penalty": -1.0}, "terminal_penalty must be a finite number"),
        (MM, {"start_price": 0}, "start_price must be a finite number > 0, got 0"),
        (MM, {"sigma": "2"}, "sigma must be a number, got '2'"),
        (
            MM,
            {"render_mode": "svg"},
            r"render_mode must be None or one of \['ansi', 'human', 'rgb_array'\], got 'svg'",
        ),
        (OE, {"side": "hold"}, "side must be 'sell' or 'buy', got 'hold'"),
        (OE, {"shares": 0}, "shares must be a finite number > 0, got 0"),
        (OE, {"sigma": float("nan")}, "sigma must be a finite number .*, got nan"),
        (OE, {"dt": -0.1}, "dt must be a finite number of at least 0.0, got -0.1"),
        (OE, {"temporary_impact": -1.0}, "temporary_impact must be .*, got -1.0"),
        (OE, {"half_spread": float("inf")}, "half_spread must be .*, got inf"),
        (OE, {"risk_aversion": -1e-6}, "risk_aversion must be .*, got -1e-06"),
    ],
)
def test_bad_parameters_are_a_value_error_naming_the_value(env_id, kwargs, message):
    with pytest.raises(ValueError, match=message):
        sekai.make(env_id, **kwargs)
    with pytest.raises(ValueError, match=message):
        sekai.make_vec(env_id, 2, vectorization_mode="native", **kwargs)


@pytest.mark.parametrize(
    ("env_id", "action", "shapes"),
    [
        ("MarketMaking-v0", [1.0], r"\(2,\) .*, got shape \(1,\)"),
        ("OptimalExecution-v0", 0.5, r"\(1,\) .*, got shape \(\)"),
        ("Portfolio-v0", [0.5, 0.5], r"\(6,\) .*, got shape \(2,\)"),
    ],
)
def test_a_single_env_names_a_single_env_shape(env_id, action, shapes):
    env = sekai.make(env_id)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="takes one action of shape " + shapes):
        env.step(action)


@pytest.mark.parametrize(
    ("env_id", "action", "message"),
    [
        ("MarketMaking-v0", [6.0, 1.0], r"action 6.0 \(env 0\) is outside \[0.0, 5.0\]"),
        ("MarketMaking-v0", [1.0, np.nan], r"action nan \(env 0\) is outside"),
        ("OptimalExecution-v0", [1.5], r"action 1.5 \(env 0\) is outside \[0.0, 1.0\]"),
        ("OptimalExecution-v0", [-0.1], r"action -0.1 \(env 0\) is outside \[0.0, 1.0\]"),
    ],
)
def test_actions_outside_the_action_space_are_a_value_error_naming_the_value(
    env_id, action, message
):
    env = sekai.make(env_id)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=message):
        env.step(np.array(action))
    vec = sekai.make_vec(env_id, 3)
    vec.reset(seed=0)
    actions = np.repeat(vec.action_space.high[None] / 2, 3, axis=0).astype(np.float64)
    if len(action) == actions.shape[1]:
        actions[1] = action
        with pytest.raises(ValueError, match=message.replace("env 0", "env 1")):
            vec.step(actions)
