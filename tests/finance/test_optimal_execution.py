"""OptimalExecution-v0 and OptimalExecutionVecEnv: the Almgren-Chriss model, its accounting, the
native env against the single one, and the AC and TWAP schedules."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rollouts import assert_fast_path_agrees, refusals_of_both_paths, run_episode

import sekai
from sekai.envs.finance.execution import OptimalExecutionEnv
from sekai.finance.baselines import TWAP, AlmgrenChriss
from sekai.finance.execution import ExecutionModel

SIDE = {"sell": 1, "buy": -1}


# -- the model -----------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(
    fractions=st.lists(st.floats(0, 1), min_size=10, max_size=10),
    side=st.sampled_from(["sell", "buy"]),
    risk_aversion=st.sampled_from([0.0, 1e-6]),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_fill_conserves_cash_and_shares_and_the_pnl_is_minus_the_shortfall(
    fractions, side, risk_aversion, seed
):
    env = OptimalExecutionEnv(side=side, episode_length=10, risk_aversion=risk_aversion)
    env.reset(seed=seed)
    s = SIDE[side]
    pnl = proceeds = 0.0
    for fraction in fractions:
        cash, remaining, price = env.cash, env.remaining, env.price
        step = env.step(np.array([fraction], np.float32))
        info = step.info
        traded = info["traded"]
        assert 0.0 <= traded <= remaining
        assert env.remaining == pytest.approx(remaining - traded)
        assert env.cash == pytest.approx(cash + s * traded * info["fill_price"])
        assert info["cost"] >= 0.0
        assert info["cost"] == pytest.approx(traded * abs(price - info["fill_price"]))
        assert info["risk"] == pytest.approx(
            risk_aversion * env.sigma**2 * env.dt * env.remaining**2
        )
        assert step.reward == pytest.approx(info["pnl"] - info["risk"])
        pnl += info["pnl"]
        proceeds += traded * info["fill_price"]
    assert step.terminated and env.remaining == 0.0
    shortfall = s * (env.shares * env.start_price - proceeds)
    assert pnl == pytest.approx(-shortfall, rel=1e-9)
    notional = env.shares * env.start_price
    assert info["episode_return"] == pytest.approx(-shortfall / notional, rel=1e-6)
    assert info["turnover"] == pytest.approx(proceeds / notional, rel=0.2)


def test_shares_left_at_the_horizon_are_traded_on_the_last_step_with_their_impact():
    env = OptimalExecutionEnv(sigma=0.0, episode_length=5)
    steps = run_episode(env, lambda obs: np.zeros((1, 1), np.float32))
    assert [step.info["traded"] for step in steps] == [0.0] * 4 + [env.shares]
    X, tau = env.shares, env.dt
    expected_cost = X * (env.half_spread + env.temporary_impact * X / tau)
    assert steps[-1].info["cost"] == pytest.approx(expected_cost)
    assert sum(step.reward for step in steps) == pytest.approx(-expected_cost)
    assert steps[-1].info["price"] == pytest.approx(env.start_price - env.permanent_impact * X)


def test_without_impact_or_volatility_execution_costs_nothing():
    env = OptimalExecutionEnv(
        sigma=0.0, temporary_impact=0.0, permanent_impact=0.0, half_spread=0.0
    )
    steps = run_episode(env, TWAP.for_env(env))
    assert all(step.info["cost"] == 0.0 for step in steps)
    assert all(abs(step.reward) < 1e-6 for step in steps)  # rounding of a $50M position


def test_a_step_does_not_see_its_own_price_move():
    """No look-ahead: a trade fills against the price before the step's shock."""
    fills = []
    for shock in (0.0, 3.0):
        model = ExecutionModel(OptimalExecutionEnv(episode_length=10), 1)
        model.reset(np.arange(1), [None], np.random.default_rng())
        step = model.advance(np.array([0.5]), np.array([shock]))
        fills.append((step.traded[0], step.fill_price[0], step.cost[0]))
    assert fills[0] == fills[1]


# -- single and native agree ---------------------------------------------------------------------
# -- the schedules -------------------------------------------------------------------------------
@pytest.mark.parametrize("side", ["sell", "buy"])
def test_the_almgren_chriss_schedule_holds_sinh_kappa_t_minus_t_over_sinh_kappa_t(side):
    env = OptimalExecutionEnv(side=side, risk_aversion=1e-6)
    policy = AlmgrenChriss.for_env(env)
    tau, T = env.dt, env.episode_length * env.dt
    eta_tilde = env.temporary_impact - 0.5 * env.permanent_impact * tau
    # kappa solves the discrete-time equation of Almgren and Chriss (2000)
    kappa_tilde_squared = env.risk_aversion * env.sigma**2 / eta_tilde
    assert 2 * (math.cosh(policy.kappa * tau) - 1) / tau**2 == pytest.approx(kappa_tilde_squared)
    assert policy.kappa * T > 1  # far enough from TWAP for the shape to matter
    held = np.array([step.info["remaining"] for step in run_episode(env, policy)]) / env.shares
    t = tau * np.arange(1, env.episode_length + 1)
    np.testing.assert_allclose(
        held, np.sinh(policy.kappa * (T - t)) / np.sinh(policy.kappa * T), atol=1e-6
    )


def test_twap_trades_the_same_number_of_shares_every_step():
    env = OptimalExecutionEnv(episode_length=8)
    traded = [step.info["traded"] for step in run_episode(env, TWAP.for_env(env))]
    np.testing.assert_allclose(traded, env.shares / 8, rtol=1e-6)


def test_almgren_chriss_without_risk_aversion_is_twap():
    env = OptimalExecutionEnv()
    observations = np.array([[1.0, 5.0, 0.0], [0.5, 2.5, 0.0], [0.1, 0.1, 0.0]], np.float32)
    np.testing.assert_allclose(
        AlmgrenChriss.for_env(env)(observations), TWAP.for_env(env)(observations), rtol=1e-6
    )


@pytest.mark.needs("sekai-vector")
def test_almgren_chriss_beats_twap_on_the_mean_variance_objective():
    """The schedule is the optimum of E + lambda Var: its mean risk-adjusted reward is higher."""
    from sekai.envs.finance.execution_vec import OptimalExecutionVecEnv

    vec = OptimalExecutionVecEnv(500, risk_aversion=1e-6)
    totals = {}
    for name, policy in (("ac", AlmgrenChriss.for_env(vec)), ("twap", TWAP.for_env(vec))):
        result = vec.reset(seed=0)
        total = np.zeros(500)
        for _ in range(50):
            result = vec.step(policy(result.observations))
            total += result.rewards
        totals[name] = total.mean()
    assert totals["ac"] > totals["twap"]


def test_almgren_chriss_refuses_impact_parameters_without_a_solution():
    with pytest.raises(ValueError, match="temporary_impact > permanent_impact"):
        AlmgrenChriss(
            dt=1.0, sigma=1.0, temporary_impact=1e-7, permanent_impact=1e-6, risk_aversion=1e-6
        )


# -- the env API ---------------------------------------------------------------------------------
@pytest.mark.needs("sekai-vector")
def test_set_attr_changes_every_sub_env_and_refuses_what_it_cannot():
    vec = sekai.make_vec("OptimalExecution-v0", 4)
    vec.reset(seed=0)
    vec.set_attr("sigma", 0.0)
    vec.set_attr("permanent_impact", 0.0)
    for _ in range(10):
        vec.step(np.full((4, 1), 0.1, np.float32))
    assert vec.get_attr("price") == [50.0] * 4
    with pytest.raises(ValueError, match="different values"):
        vec.set_attr("risk_aversion", [0.0, 1e-6, 0.0, 0.0])
    for name in ("shares", "side", "episode_length", "dt"):
        with pytest.raises(AttributeError, match=f"{name} is read-only"):
            vec.set_attr(name, 1)
    assert vec.get_attr("remaining") == pytest.approx([1e6 * 0.9**10] * 4)
    assert vec.get_attr("time_remaining") == pytest.approx([4.0] * 4)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"side": "buy", "risk_aversion": 1e-6, "episode_length": 9},
        {"half_spread": 0.0, "sigma": 3.0, "permanent_impact": 1e-5, "episode_length": 4},
    ],
)
def test_the_scalar_fast_path_agrees_exactly_with_the_array_model(kwargs):
    fractions = np.random.default_rng(5).uniform(0.0, 1.0, size=(300, 1)).astype(np.float32)
    fractions[::5] = 0.0  # no trade: no half spread
    fractions[::11] = 1.0
    actions = [row if i % 3 else row.tolist() for i, row in enumerate(fractions)]  # lists too
    state = ("price", "remaining", "position", "cash", "equity", "time_remaining")
    assert assert_fast_path_agrees(OptimalExecutionEnv, actions, state, **kwargs) >= 5


@pytest.mark.parametrize(
    "action", [np.array([1.5], np.float32), np.array([np.nan]), [0.1, 0.2], 0.5, [-0.1]]
)
def test_the_fast_path_refuses_bad_fractions_with_the_array_models_errors(action):
    errors = refusals_of_both_paths(OptimalExecutionEnv, action)
    assert errors[0] == errors[1]
    assert "outside [0.0, 1.0]" in errors[0] or "shape" in errors[0]
