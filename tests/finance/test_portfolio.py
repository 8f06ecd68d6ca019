"""Portfolio-v0 and PortfolioVecEnv: weights, accounting, native == single, distribution."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rollouts import assert_fast_path_agrees, refusals_of_both_paths

import sekai
from sekai.envs.finance.portfolio import PortfolioEnv
from sekai.finance.accounting import Account
from sekai.finance.costs import HalfSpreadCost, SquareRootImpact
from sekai.finance.weights import PortfolioWeights, check_weights
from sekai.spaces.utils import batch_space


@pytest.fixture(scope="module")
def two_assets(googl, eurusd) -> np.ndarray:
    return np.column_stack([googl.close, eurusd.close[: len(googl)]])


def test_weights_space_samples_valid_weights_and_batches():
    for space in (PortfolioWeights(4), PortfolioWeights(4, max_leverage=2.0)):
        space.seed(0)
        batched = batch_space(space, 16)
        batched.seed(1)
        assert batched == PortfolioWeights(4, space.max_leverage, batch=16)
        for sample in [space.sample() for _ in range(50)] + list(batched.sample()):
            assert sample in space
            check_weights(sample[None], 4, space.max_leverage)
    assert repr(PortfolioWeights(5, batch=64)) == "PortfolioWeights(n_assets=5, batch=64)"
    assert np.array([0.5, 0.6, 0, 0, -0.1]) not in PortfolioWeights(4)


@pytest.mark.parametrize(
    ("weights", "leverage", "message"),
    [
        ([0.5, 0.6, -0.1], None, "must be non-negative"),
        ([0.5, 0.6, 0.1], None, "must sum to 1, these sum to 1.2"),
        ([np.nan, 0.5, 0.5], None, "sum to nan"),
        ([1.5, -0.8, 0.3], 2.0, "gross exposure sum"),
    ],
)
def test_weights_outside_the_simplex_or_leverage_bound_are_value_errors(weights, leverage, message):
    with pytest.raises(ValueError, match=message):
        check_weights(np.array([weights]), 2, leverage)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(0.5, 2.0), min_size=3, max_size=3),
    st.lists(st.floats(-3.0, 3.0), min_size=3, max_size=3),
    st.sampled_from([0.0, 0.001, 0.05]),
)
def test_every_fill_conserves_value_and_charges_a_non_negative_cost(prices, raw, rate):
    account = Account(1, 3)
    account.shares[:] = [0.2, 0.1, 0.3]
    account.cash[:] = 0.4
    price = np.array([prices])
    before = account.equity(price)
    weights = np.array([raw]) / max(np.abs(raw).sum(), 1.0)
    cost, traded = account.trade_to(price, before, weights, lambda v: rate * v.sum(axis=1))
    after = account.equity(price)
    assert cost[0] >= 0.0 and traded[0] >= 0.0
    assert after[0] == pytest.approx(before[0] - cost[0], abs=1e-12)
    np.testing.assert_allclose(account.shares * price / after[0], weights, atol=1e-9)
    if weights.sum() <= 1.0 and (weights >= 0).all():  # nothing borrowed: cash stays >= 0
        assert account.cash[0] >= -1e-13


def test_rewards_sum_to_the_log_change_of_wealth_and_costs_are_never_negative(two_assets):
    env = PortfolioEnv(prices=two_assets, cost_model=SquareRootImpact(daily_volume=10.0))
    env.action_space.seed(0)
    _, info = env.reset(seed=0)
    rewards, infos = [], [info]
    step = None
    while step is None or not step.done:
        step = env.step(env.action_space.sample())
        rewards.append(step.reward)
        infos.append(step.info)
    assert len(rewards) == 252 and step.truncated
    assert sum(rewards) == pytest.approx(np.log(infos[-1]["wealth"]), abs=1e-12)
    assert all(info["cost"] >= 0 for info in infos) and infos[-1]["turnover"] > 10
    np.testing.assert_allclose([info["weights"].sum() for info in infos], 1.0)


def test_all_cash_keeps_wealth_without_costs():
    env = PortfolioEnv(transaction_cost=0.0)
    env.reset(seed=0)
    cash = np.array([0, 0, 0, 0, 0, 1.0], np.float32)
    assert {env.step(cash).info["wealth"] for _ in range(20)} == {1.0}


@pytest.mark.needs("sekai-vector")
def test_native_and_single_agree_exactly_on_a_history_and_with_sigma_zero(
    two_assets, portfolio_vec_env
):
    for kwargs, starts in (
        ({"prices": two_assets, "episode_length": 60}, [10, 900, 2000]),
        ({"n_assets": 3, "sigma": 0.0, "mu": [0.1, -0.2, 0.3], "episode_length": 60}, [10] * 3),
    ):
        vec = portfolio_vec_env(3, autoreset=False, **kwargs)
        space = vec.batch_action_space
        space.seed(0)
        actions = [space.sample() for _ in range(60)]
        options = [{"start": s} for s in starts]
        results = [vec.reset(seed=0, options=options)] + [vec.step(a) for a in actions]
        for i in range(3):
            env = PortfolioEnv(**kwargs)
            single = [env.reset(seed=0, options=options[i])]
            single += [env.step(a[i]) for a in actions]
            for one, batch in zip(single, results, strict=True):
                np.testing.assert_array_equal(one.observation, batch.observations[i])
                assert one.info.keys() == batch.infos[i].keys()
                for key, value in one.info.items():
                    np.testing.assert_array_equal(value, batch.infos[i][key])
            assert [s.reward for s in single[1:]] == [r.rewards[i] for r in results[1:]]


def _ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    grid = np.sort(np.concatenate([a, b]))
    cdf_a = np.searchsorted(np.sort(a), grid, side="right") / len(a)
    cdf_b = np.searchsorted(np.sort(b), grid, side="right") / len(b)
    return float(np.abs(cdf_a - cdf_b).max())


@pytest.mark.needs("sekai-vector")
def test_native_and_single_agree_in_distribution(portfolio_vec_env):
    episodes, length = 300, 20
    kwargs = {"episode_length": length, "sigma": 0.4}
    equal = np.full(6, 1 / 6)
    vec = portfolio_vec_env(episodes, **kwargs)
    vec.reset(seed=0)
    for _ in range(length):
        last = vec.step(np.tile(equal, (episodes, 1)))
    native = np.array([info["episode_return"] for info in last.infos])
    env = PortfolioEnv(**kwargs)
    single = []
    for seed in range(episodes):
        env.reset(seed=seed)
        for _ in range(length):
            step = env.step(equal)
        single.append(step.info["episode_return"])
    critical = 1.95 * np.sqrt(2 / episodes)  # two-sample Kolmogorov-Smirnov at alpha = 0.001
    assert _ks_statistic(native, np.array(single)) < critical
    assert native.std() > 0.01


@pytest.mark.needs("sekai-vector")
def test_set_attr_sigma_changes_every_sub_env_at_the_next_step(portfolio_vec_env):
    vec = portfolio_vec_env(4, sigma=0.3, mu=0.0, transaction_cost=0.0)
    vec.reset(seed=0)
    cash = np.tile(np.eye(6)[0], (4, 1))
    assert (vec.step(cash).rewards != 0).all()
    vec.set_attr("sigma", 0.0)
    assert vec.get_attr("sigma") == [0.0] * 4
    rewards = vec.step(cash).rewards
    assert rewards == pytest.approx(np.zeros(4), abs=1e-15)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"prices": np.ones((5, 2))}, "5 bars, too short"),
        ({"prices": np.ones(300)}, r"shape \(T, n_assets\)"),
        ({"prices": np.ones((300, 2)), "n_assets": 3}, "n_assets=3 but prices has 2"),
        ({"sigma": -0.1}, "sigma must be a finite number of at least 0.0"),
        ({"mu": [0.1, 0.2]}, "mu must be a finite number or 5 of them"),
        ({"correlation": 1.0}, "positive definite"),
        ({"correlation": np.eye(4)}, r"\(5, 5\)"),
        ({"dt": 0.0}, "dt must be positive"),
        ({"max_leverage": -1.0}, "max_leverage"),
    ],
)
def test_bad_parameters_are_value_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PortfolioEnv(**kwargs)


def test_a_start_option_needs_a_history():
    env = PortfolioEnv()
    with pytest.raises(ValueError, match="outside"):
        env.reset(options={"start": 50})
    env.reset(options={"start": 10})  # the one start a simulation has


@pytest.mark.needs("sekai-vector")
def test_equal_weight_and_buy_and_hold_match_their_closed_forms(two_assets, portfolio_vec_env):
    from sekai.finance.baselines import BuyAndHold, EqualWeight

    start, length = 100, 50
    relative = two_assets[start + 1 : start + length + 1] / two_assets[start : start + length]
    for policy, expected, tolerance in (
        (EqualWeight, np.prod(relative.mean(axis=1)), 1e-12),  # rebalanced every step
        (BuyAndHold, (two_assets[start + length] / two_assets[start]).mean(), 1e-7),  # held
    ):
        vec = portfolio_vec_env(2, prices=two_assets, episode_length=length, transaction_cost=0.0)
        act = policy(vec.action_space)
        step = vec.reset(seed=0, options={"start": start})
        for _ in range(length):
            step = vec.step(act(step.observations))
        assert [info["final_info"]["wealth"] for info in step.infos] == pytest.approx(
            [expected] * 2, rel=tolerance
        )


def test_nothing_observed_at_or_before_t_depends_on_prices_after_t(two_assets):
    start, t = 300, 320
    perturbed = two_assets.copy()
    perturbed[t + 1 :] *= np.random.default_rng(0).uniform(0.5, 1.5, perturbed[t + 1 :].shape)
    space = PortfolioWeights(2)
    space.seed(0)
    actions = [space.sample() for _ in range(40)]
    runs = []
    for prices in (two_assets, perturbed):
        env = PortfolioEnv(prices=prices, lookback=5)
        runs.append([env.reset(seed=0, options={"start": start})] + [env.step(a) for a in actions])
    for k in range(t - start + 1):  # the reset and the steps arriving at bars start+1 .. t
        np.testing.assert_array_equal(runs[0][k].observation, runs[1][k].observation)
        assert runs[0][k].info["wealth"] == runs[1][k].info["wealth"]
    assert not np.array_equal(
        runs[0][t - start + 1].observation, runs[1][t - start + 1].observation
    )


def test_with_shorts_and_leverage_the_accounting_still_holds():
    from sekai.env_checker import check_env

    env = PortfolioEnv(
        allow_short=True, max_leverage=2.0, episode_length=100, borrow_rate=0.05, cash_rate=0.03
    )
    check_env(env)
    env.action_space.seed(1)
    env.reset(seed=1)
    rewards, step = [], None
    while step is None or not step.done:
        step = env.step(env.action_space.sample())
        rewards.append(step.reward)
        gross = np.abs(step.info["weights"][:-1]).sum()
        assert step.info["cost"] >= 0 and gross < 3.0
    assert sum(rewards) == pytest.approx(np.log(step.info["wealth"]), abs=1e-12)
    with pytest.raises(ValueError, match=r"max_leverage=2\.0"):
        env.reset(seed=0)
        env.step(np.array([1.5, -1.0, 0.0, 0.0, 0.0, 0.5]))


# -- from_box: what a Gaussian policy outputs, as weights ----------------------------------------
@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-3.0, 3.0), min_size=4, max_size=4),
    st.sampled_from([None, 1.0, 2.5]),
)
def test_every_point_of_the_box_maps_to_valid_weights(raw, leverage):
    space = PortfolioWeights(3, leverage)
    weights = space.from_box(np.array([raw, raw[::-1]]))
    assert weights.shape == (2, 4)
    check_weights(weights, 3, leverage)  # raises for anything invalid
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("leverage", [None, 2.0])
def test_every_valid_weight_vector_is_reached_from_the_box(leverage):
    space = PortfolioWeights(4, leverage, seed=0)
    for _ in range(50):
        weights = space.sample().astype(np.float64)
        weights[-1] = 1.0 - weights[:-1].sum()
        if leverage is None:
            point = 2.0 * weights / weights.max() - 1.0
        else:
            assets = weights[:-1]
            point = np.append(
                assets / np.abs(assets).max(), np.abs(assets).sum() / leverage * 2 - 1
            )
        assert np.abs(point).max() <= 1.0 + 1e-12
        np.testing.assert_allclose(space.from_box(point), weights, atol=1e-12)


def test_the_box_s_corners_are_all_cash_and_all_in_one_asset():
    space = PortfolioWeights(2)
    assert space.from_box([-1.0, -1.0, -1.0]).tolist() == [0.0, 0.0, 1.0]
    assert space.from_box([1.0, -1.0, -1.0]).tolist() == [1.0, 0.0, 0.0]
    short = PortfolioWeights(2, max_leverage=2.0)
    assert short.from_box([-1.0, 0.0, 1.0]).tolist() == [-2.0, 0.0, 3.0]  # all of L, short
    assert short.from_box([0.5, 0.5, -1.0]).tolist() == [0.0, 0.0, 1.0]  # no exposure used
    assert space.box == sekai.Box(-1.0, 1.0, (3,), dtype=np.float32)
    with pytest.raises(ValueError, match=r"expected actions of 3 values .* got shape \(4,\)"):
        space.from_box(np.zeros(4))


def _fee_and_floor(traded_value):
    """A user's cost model: 10 basis points plus a fixed 0.00001 per step."""
    return 0.00001 + 0.001 * traded_value.sum(axis=1)


def _two_assets(googl, eurusd):
    momentum = [np.diff(np.log(bars.close[:400]), prepend=0.0) for bars in (googl, eurusd)]
    return {
        symbol: {"date": googl.dates[:400], "close": bars.close[:400], "feature_momentum": m}
        for symbol, bars, m in zip(("GOOGL", "EURUSD"), (googl, eurusd), momentum, strict=True)
    }


@pytest.mark.parametrize(
    "case",
    [
        "simulated",
        "short",
        "per_asset",
        "history",
        "data",
        "next_open",
        "user_cost",
        "impact",
        "half_spread",
        "correlations",
        "one_asset",
    ],
)
def test_the_scalar_fast_path_agrees_exactly_with_the_array_model(googl, eurusd, case):
    prices = np.column_stack([googl.close[:600], eurusd.close[:600], googl.close[100:700]])
    kwargs = {
        "simulated": {},
        "short": {
            "allow_short": True,
            "max_leverage": 2.0,
            "borrow_rate": 0.05,
            "cash_rate": 0.02,
            "transaction_cost": 0.002,
        },
        "per_asset": {"n_assets": 3, "mu": [0.1, 0.0, -0.2], "sigma": [0.1, 0.5, 0.9]},
        "history": {"prices": prices, "episode_length": 120, "cash_rate": 0.03},
        "data": {"data": _two_assets(googl, eurusd), "features": ["feature_momentum"]},
        "next_open": {
            "prices": prices,
            "opens": prices * np.exp(np.random.default_rng(1).normal(0, 0.003, prices.shape)),
            "execution": "next_open",
            "lookback": 4,
        },
        "user_cost": {"cost_model": _fee_and_floor, "episode_length": 30},
        "impact": {"cost_model": SquareRootImpact(daily_volume=3.0), "n_assets": 6},
        "half_spread": {"cost_model": HalfSpreadCost(0.004), "n_assets": 2, "lookback": 1},
        "correlations": {
            "n_assets": 3,
            "correlation": [[1.0, 0.5, -0.2], [0.5, 1.0, 0.1], [-0.2, 0.1, 1.0]],
            "sigma": [0.3, 0.0, 1.5],
            "dt": 1 / 12,
        },
        "one_asset": {"n_assets": 1, "allow_short": True, "max_leverage": 2.0},
    }[case]
    space = PortfolioEnv(**kwargs).action_space
    space.seed(2)
    actions = [space.sample() for _ in range(500)]
    actions[::4] = [a.astype(np.float64) * 1.000001 for a in actions[::4]]  # sums off by 1e-6
    actions[1::4] = [a.tolist() for a in actions[1::4]]  # lists go through the array checks
    state = ("wealth", "weights", "price", "timestamp")
    assert assert_fast_path_agrees(PortfolioEnv, actions, state, **kwargs) >= 1


def test_more_assets_than_numpy_sums_in_order_keep_the_array_model():
    from sekai.finance.portfolio import PortfolioModel, PortfolioModelOne

    assert type(PortfolioEnv(n_assets=6)._model) is PortfolioModelOne
    assert type(PortfolioEnv(n_assets=7)._model) is PortfolioModel
    env = PortfolioEnv(n_assets=7)
    env.reset(seed=0)
    assert env.step(np.full(8, 1 / 8)).info["cost"] > 0.0


@pytest.mark.parametrize(
    "action",
    [
        np.array([0.5, 0.5, 0.1, 0.0, 0.0, 0.0], np.float32),
        np.array([1.5, -0.5, 0.0, 0.0, 0.0, 0.0]),
        np.array([np.nan, 1.0, 0.0, 0.0, 0.0, 0.0]),
        [1.0, 0.0],
        np.ones((1, 6)) / 6,
    ],
)
def test_the_fast_path_refuses_bad_weights_with_the_array_models_errors(action):
    errors = refusals_of_both_paths(PortfolioEnv, action)
    assert errors[0] == errors[1]
    assert "not valid portfolio weights" in errors[0] or "shape" in errors[0]
