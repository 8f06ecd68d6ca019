"""Trading-v0 and TradingVecEnv: accounting, no look-ahead, native == single, bad input, and the
bugs other finance-RL libraries have had (design.md), each as a test."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import sekai
from sekai.envs.finance._single import FinanceEnv
from sekai.envs.finance.trading import TradingEnv
from sekai.finance import HalfSpreadCost, ProportionalCost, SquareRootImpact
from sekai.wrappers import NormalizeReward, RecordEpisodeStatistics, TimeAwareObservation


def _run(env, actions, start):
    """Observations, rewards and infos of one env driven from ``start`` by ``actions``."""
    observation, info = env.reset(seed=0, options={"start": start})
    observations, rewards, infos = [observation], [], [info]
    for action in actions:
        step = env.step(action)
        observations.append(step.observation)
        rewards.append(step.reward)
        infos.append(step.info)
        if step.done:
            break
    return observations, rewards, infos


def test_rewards_sum_to_the_log_change_of_equity_net_of_costs(googl):
    env = TradingEnv(
        googl.close,
        episode_length=300,
        allow_short=True,
        transaction_cost=0.002,
        borrow_rate=0.05,
        cash_rate=0.03,
    )
    actions = np.random.default_rng(1).integers(-1, 2, size=300)
    _, rewards, infos = _run(env, actions, start=100)
    assert len(rewards) == 300 and infos[-1]["timestamp"] == 400
    assert sum(rewards) == pytest.approx(np.log(infos[-1]["equity"]), abs=1e-12)
    equity = np.array([info["equity"] for info in infos])
    np.testing.assert_allclose(np.diff(np.log(equity)), rewards, atol=1e-13)
    costs = np.array([info["cost"] for info in infos])
    assert (costs >= 0).all() and (costs > 0).sum() > 100
    changed = np.diff(np.concatenate([[0], actions])) != 0
    np.testing.assert_array_equal(costs[1:] > 0, changed)  # only a change of position trades
    assert infos[-1]["episode_return"] == pytest.approx(equity[-1] - 1.0)


def test_with_zero_costs_a_flat_position_keeps_equity_exactly(googl):
    env = TradingEnv(googl.close, transaction_cost=0.0)
    _, rewards, infos = _run(env, [0] * 252, start=10)
    assert set(rewards) == {0.0} and {info["equity"] for info in infos} == {1.0}


def test_a_long_position_earns_the_price_change_and_a_short_one_its_negative(googl):
    prices = googl.close
    for position in (1, -1):
        env = TradingEnv(prices, allow_short=True, transaction_cost=0.0)
        _, rewards, infos = _run(env, [position] * 5, start=50)
        shares = position * 1.0 / prices[50]
        expected_equity = 1.0 + shares * (prices[51:56] - prices[50])
        np.testing.assert_allclose([i["equity"] for i in infos[1:]], expected_equity, rtol=1e-12)
        if position == -1:  # gym-anytrading #3/#35: a short that gains is rewarded
            gains = prices[51:56] < prices[50:55]
            assert (np.array(rewards)[gains] > 0).all()


def test_both_legs_of_a_round_trip_pay_commission(googl):
    rate = 0.01  # gym-anytrading #43 charged only one leg
    env = TradingEnv(googl.close, transaction_cost=rate)
    _, _, infos = _run(env, [1, 0], start=10)
    buy, sell = infos[1]["cost"], infos[2]["cost"]
    assert buy == pytest.approx(rate / (1 + rate))  # all of equity net of the cost itself
    holding = buy / rate * googl.close[11] / googl.close[10]
    assert sell == pytest.approx(rate * holding)


def test_buying_with_all_equity_never_leaves_cash_negative(googl):
    env = TradingEnv(googl.close, transaction_cost=0.05)  # FinRL #481
    env.reset(seed=0, options={"start": 10})
    env.step(1)
    model = env._model
    assert model.cash >= -1e-12 * env.equity
    assert model.shares * googl.close[10] + model.cash == pytest.approx(1.0 - 0.05 / 1.05)


def test_nothing_observed_at_or_before_t_depends_on_prices_after_t(googl):
    start, t = 100, 130
    perturbed = googl.close.copy()
    perturbed[t + 1 :] *= np.random.default_rng(0).uniform(0.5, 1.5, len(perturbed) - t - 1)
    actions = np.random.default_rng(2).integers(0, 2, size=60)
    runs = [_run(TradingEnv(p, lookback=20), actions, start) for p in (googl.close, perturbed)]
    (obs_a, rew_a, info_a), (obs_b, rew_b, info_b) = runs
    seen = t - start + 1  # the reset and the steps arriving at bars start+1 .. t
    for k in range(seen):
        np.testing.assert_array_equal(obs_a[k], obs_b[k])
        assert info_a[k] == info_b[k]
    assert rew_a[: seen - 1] == rew_b[: seen - 1]
    assert not np.array_equal(obs_a[seen], obs_b[seen])  # bar t+1 is new information


@pytest.mark.needs("sekai-vector")
def test_native_and_single_agree_exactly_on_a_real_history(googl, trading_vec_env):
    starts = [10, 700, 1500, 2000]
    kwargs = {"prices": googl.close, "episode_length": 100, "allow_short": True}
    actions = np.random.default_rng(3).integers(-1, 2, size=(100, len(starts)))
    vec = trading_vec_env(len(starts), autoreset=False, **kwargs)
    reset = vec.reset(seed=0, options=[{"start": s} for s in starts])
    vec_obs, vec_rewards, vec_infos = [reset.observations], [], [reset.infos]
    for row in actions:
        step = vec.step(row)
        vec_obs.append(step.observations)
        vec_rewards.append(step.rewards)
        vec_infos.append(step.infos)
    for i, start in enumerate(starts):
        obs, rewards, infos = _run(TradingEnv(**kwargs), actions[:, i], start)
        np.testing.assert_array_equal(np.array(obs), np.array(vec_obs)[:, i])
        np.testing.assert_array_equal(rewards, np.array(vec_rewards)[:, i])
        assert infos == [row[i] for row in vec_infos]
    assert "sharpe" in vec_infos[-1][0] and "sharpe" not in vec_infos[-2][0]


@pytest.mark.needs("sekai-vector")
def test_the_default_history_is_shared_not_copied():
    vec = sekai.make_vec("Trading-v0", 64)
    assert vec._model.history is TradingEnv().prices
    assert not vec.template.prices.flags.writeable


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"prices": [100.0, np.nan] * 200}, "bar 1 is nan"),
        ({"prices": [100.0, np.inf] * 200}, "bar 1 is inf"),
        ({"prices": [100.0, 0.0] * 200}, "bar 1 is 0.0"),
        ({"prices": [100.0] * 30, "episode_length": 20, "lookback": 10}, "30 bars, too short"),
        ({"prices": np.ones((300, 2))}, r"shape \(T,\)"),
        ({"lookback": 0}, "lookback must be an int of at least 1, got 0"),
        ({"episode_length": 2.5}, "episode_length must be an int"),
        ({"lookback": 2000, "episode_length": 1000}, "need 3001 bars"),
        ({"transaction_cost": -0.1}, "transaction_cost"),
        ({"transaction_cost": 0.1, "cost_model": ProportionalCost(0.1)}, "not both"),
        ({"cost_model": 0.1}, "cost_model must be a callable"),
        ({"sampler": "forward"}, "sampler must be"),
        ({"allow_short": "yes"}, "allow_short must be True or False"),
        ({"render_mode": "svg"}, "render_mode"),
    ],
)
def test_bad_parameters_are_value_errors_naming_the_value(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TradingEnv(**kwargs)


def test_bad_actions_and_starts_are_value_errors():
    env = TradingEnv()
    env.reset(seed=0)
    for action in (-1, 2, 0.5):
        with pytest.raises(ValueError, match=f"action {action!r} is not a position"):
            env.step(action)
    with pytest.raises(ValueError, match=r"options\['start'\] = 5 is outside \[10, 2268\]"):
        env.reset(options={"start": 5})


@pytest.mark.needs("sekai-vector")
def test_native_actions_outside_the_space_are_value_errors(trading_vec_env):
    vec = trading_vec_env(3, allow_short=True)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match="action 2 is not a position"):
        vec.step(np.array([0, 2, 1]))


@pytest.mark.parametrize("short", [-1, np.int64(-1)])
def test_a_short_is_refused_without_allow_short(short):
    env = TradingEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action -1 is not a position: allowed are 0 \(flat\)"):
        env.step(short)
    shorts = TradingEnv(allow_short=True)
    shorts.reset(seed=0)
    assert shorts.step(short).info["position"] == -1


@pytest.mark.needs("sekai-vector")
def test_native_shorts_are_refused_without_allow_short(trading_vec_env):
    """Only allow_short=True opens position -1; the refusal names what is allowed."""
    vec = trading_vec_env(3)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=r"action -1 is not a position: allowed are 0 \(flat\)"):
        vec.step(np.array([0, -1, 1]))
    shorts = trading_vec_env(3, allow_short=True)
    shorts.reset(seed=0)
    infos = shorts.step(np.array([0, -1, 1])).infos
    assert [info["position"] for info in infos] == [0, -1, 1]


def test_a_cost_model_returning_negative_costs_is_refused():
    env = TradingEnv(cost_model=lambda traded: -traded.sum(axis=1))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="finite non-negative costs"):
        env.step(1)


def test_episode_figures_reach_the_caller_through_wrappers(googl):
    env = sekai.make("Trading-v0", prices=googl.close, episode_length=30, max_episode_steps=99)
    env = NormalizeReward(RecordEpisodeStatistics(TimeAwareObservation(env)))  # Gym-Trading-Env #9
    env.reset(seed=0)
    step = env.step(1)
    while not step.done:
        step = env.step(1)
    assert {"episode_return", "sharpe", "max_drawdown", "turnover"} <= set(step.info)
    assert step.info["episode_return"] == pytest.approx(env.get_attr("equity") - 1.0)
    assert step.info["turnover"] == pytest.approx(1 / 1.001)


def test_ansi_render_gives_one_line_per_step():
    env = TradingEnv(render_mode="ansi")
    env.reset(seed=0)
    assert env.render().startswith("timestamp=")
    env.step(1)
    line = env.render()
    assert "\n" not in line and "position=1" in line and "reward=" in line
    assert TradingEnv().render() is None


@pytest.mark.parametrize("mode", ["native", "sync", "proc"])
@pytest.mark.needs("sekai-vector")
def test_max_episode_steps_truncates_after_50_steps_on_every_backend(mode):
    vector_kwargs = {"num_workers": 2} if mode == "proc" else {}
    vec = sekai.make_vec(
        "Trading-v0", 8, vectorization_mode=mode, vector_kwargs=vector_kwargs, max_episode_steps=50
    )
    try:
        vec.reset(seed=0)
        for _ in range(49):
            assert not vec.step(np.ones(8, int)).dones.any()
        last = vec.step(np.ones(8, int))
        assert last.truncated.all() and not last.terminated.any()
        assert all(info["elapsed_steps"] == 50 for info in last.infos)
    finally:
        vec.close()


@pytest.mark.needs("sekai-vector")
def test_buy_and_hold_earns_the_price_relative_less_one_commission(googl, trading_vec_env):
    from sekai.finance.baselines import BuyAndHold

    rate, start, length = 0.001, 200, 100
    vec = trading_vec_env(3, prices=googl.close, episode_length=length, transaction_cost=rate)
    policy = BuyAndHold(vec.action_space)
    step = vec.reset(seed=0, options={"start": start})
    for _ in range(length):
        step = vec.step(policy(step.observations))
    expected = googl.close[start + length] / googl.close[start] / (1 + rate) - 1
    assert [info["episode_return"] for info in step.infos] == pytest.approx([expected] * 3)


def _fixed_fee(traded_value):
    """A user's cost model: 0.0001 per step, traded or not, plus 10 basis points."""
    return 0.0001 + 0.001 * traded_value.sum(axis=1)


@pytest.mark.parametrize(
    "cost_model",
    [
        ProportionalCost(0.001),
        HalfSpreadCost(0.0004),
        SquareRootImpact(daily_volume=5.0),
        _fixed_fee,
    ],
)
def test_the_scalar_fast_path_agrees_exactly_with_the_array_model(googl, cost_model):
    kwargs = {
        "prices": googl.close,
        "episode_length": 150,
        "allow_short": True,
        "borrow_rate": 0.04,
        "cash_rate": 0.01,
    }
    fast, array = (TradingEnv(cost_model=cost_model, **kwargs) for _ in range(2))
    array._model = array._make_model(1)  # the array model with num_envs=1
    actions = np.random.default_rng(4).integers(-1, 2, size=400)
    for env in (fast, array):
        env.reset(seed=0, options={"start": 1000})
    for i, action in enumerate(actions):
        if i % 2:  # Python ints as well as numpy ones: the fast path checks them apart
            action = int(action)
        one, other = fast.step(action), FinanceEnv.step(array, action)
        np.testing.assert_array_equal(one.observation, other.observation)
        assert (one.reward, one.terminated, one.truncated) == (
            other.reward,
            other.terminated,
            other.truncated,
        )
        assert one.info == other.info and type(one.info["price"]) is type(other.info["price"])
        assert (fast.equity, fast.position, fast.price) == (
            array.equity,
            array.position,
            array.price,
        )
        if one.done:
            assert one.info == other.info and "sharpe" in one.info
            first, second = fast.reset(seed=1), array.reset(seed=1)
            assert first.info == second.info


def test_stepping_past_the_end_of_an_episode_is_an_error():
    env = TradingEnv(episode_length=2)
    env.reset(seed=0)
    env.step(0)
    env.step(0)
    with pytest.raises(ValueError, match="call reset"):
        env.step(0)


@pytest.mark.needs("sekai-vector")
def test_stepping_a_native_env_past_the_end_of_an_episode_is_an_error(trading_vec_env):
    vec = trading_vec_env(2, episode_length=2, autoreset=False)
    vec.reset(seed=0)
    vec.step(np.zeros(2, int))
    vec.step(np.zeros(2, int))
    with pytest.raises(ValueError, match="call reset"):
        vec.step(np.zeros(2, int))


def test_single_envs_do_not_import_sekai_vector():
    code = (
        "import sys, sekai; sekai.make('Trading-v0').reset(seed=0);"
        " sekai.make('Portfolio-v0').reset(seed=0);"
        " assert 'sekai.vector' not in sys.modules, 'sekai.vector was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
