"""Financing (``borrow_rate``, ``cash_rate``) and ``execution="next_open"`` of Trading-v0 and
Portfolio-v0, single and native: closed forms, the accounting identity with financing as its
own term, and no look-ahead at the price a trade fills at."""

from __future__ import annotations

import numpy as np
import pytest

import sekai
from sekai.envs.finance._single import FinanceEnv
from sekai.envs.finance.portfolio import PortfolioEnv
from sekai.envs.finance.trading import TradingEnv

YEAR = 252
FLAT = np.full(600, 100.0)  # constant prices: every change of equity is cost or financing


def _steps(env, actions, start=10, seed=0):
    """The reset info and every step of ``env`` driven by ``actions`` from bar ``start``."""
    _, info = env.reset(seed=seed, options={"start": start})
    return info, [env.step(action) for action in actions]


def _native(cls_name, num_envs, **kwargs):
    return sekai.make_vec(cls_name, num_envs, vectorization_mode="native", **kwargs)


# -- closed forms --------------------------------------------------------------------------------
def test_a_short_held_for_a_year_pays_the_borrow_rate_and_earns_on_its_cash():
    b, c = 0.05, 0.02
    env = TradingEnv(
        FLAT,
        allow_short=True,
        transaction_cost=0.0,
        episode_length=YEAR,
        borrow_rate=b,
        cash_rate=c,
    )
    _, steps = _steps(env, [-1] * YEAR)
    # the short is worth 1 all year; cash starts at 2 (equity and the sale's proceeds) and
    # follows C <- C (1 + c / 252) - b / 252, so C_n = C* + (2 - C*) (1 + c / 252)^n, C* = b / c
    fixed = b / c
    cash = fixed + (2.0 - fixed) * (1 + c / YEAR) ** YEAR
    assert steps[-1].info["equity"] == pytest.approx(cash - 1.0, rel=1e-12)
    assert sum(step.info["financing"] for step in steps) == pytest.approx(cash - 2.0, rel=1e-12)


@pytest.mark.parametrize(
    "mode", ["single", pytest.param("native", marks=pytest.mark.needs("sekai-vector"))]
)
def test_without_cash_interest_a_short_held_for_a_year_loses_exactly_the_borrow_rate(mode):
    kwargs = {
        "prices": FLAT,
        "allow_short": True,
        "transaction_cost": 0.0,
        "episode_length": YEAR,
        "borrow_rate": 0.05,
    }
    if mode == "single":
        env = TradingEnv(**kwargs)
        _, steps = _steps(env, [-1] * YEAR)
        equity = steps[-1].info["equity"]
    else:
        vec = _native("Trading-v0", 3, **kwargs)
        vec.reset(seed=0, options={"start": 10})
        for _ in range(YEAR):
            result = vec.step(np.full(3, -1))
        equity = np.array([info["final_info"]["equity"] for info in result.infos])
    np.testing.assert_allclose(equity, 0.95, rtol=1e-13)


def test_flat_a_year_compounds_the_cash_rate_and_long_earns_none():
    for position, expected in ((0, (1 + 0.04 / YEAR) ** YEAR), (1, 1.0)):
        env = TradingEnv(FLAT, transaction_cost=0.0, episode_length=YEAR, cash_rate=0.04)
        _, steps = _steps(env, [position] * YEAR)
        assert steps[-1].info["equity"] == pytest.approx(expected, rel=1e-13)


def test_borrow_interest_is_charged_every_short_period_even_when_the_position_changes():
    """gym-trading-env users report borrow interest lost when the position changes: here a
    short of 10 periods, then long, then flat, then short again for 10 periods pays 20 periods
    of interest, on the value each short was opened at."""
    b = 0.10 / YEAR
    env = TradingEnv(
        FLAT, allow_short=True, transaction_cost=0.0, episode_length=28, borrow_rate=0.10
    )
    actions = [-1] * 10 + [1] * 5 + [0] * 3 + [-1] * 10
    _, steps = _steps(env, actions)
    financing = np.array([step.info["financing"] for step in steps])
    assert (financing[:10] < 0).all() and (financing[18:] < 0).all()
    assert (financing[10:18] == 0).all()
    first = 1 - 10 * b  # the first short, worth 1, for 10 periods
    assert steps[9].info["equity"] == pytest.approx(first, rel=1e-13)
    assert steps[-1].info["equity"] == pytest.approx(first * (1 - 10 * b), rel=1e-13)


@pytest.mark.needs("sekai-vector")
@pytest.mark.parametrize(
    ("weights", "factor"),
    [
        ([0.8, -0.6, 0.8], 1 + 0.8 * 0.03 / YEAR - 0.6 * 0.05 / YEAR),  # shorts, cash earns
        ([1.5, 0.0, -0.5], 1 - 0.5 * 0.03 / YEAR),  # leverage: the margin used pays cash_rate
    ],
)
def test_a_portfolio_held_at_fixed_weights_compounds_its_financing(weights, factor):
    prices = np.full((600, 2), 50.0)
    kwargs = {
        "prices": prices,
        "allow_short": True,
        "max_leverage": 2.0,
        "transaction_cost": 0.0,
        "episode_length": YEAR,
        "borrow_rate": 0.05,
        "cash_rate": 0.03,
    }
    env = PortfolioEnv(**kwargs)
    _, steps = _steps(env, [np.array(weights)] * YEAR)
    assert steps[-1].info["wealth"] == pytest.approx(factor**YEAR, rel=1e-12)
    vec = _native("Portfolio-v0", 2, **kwargs)
    vec.reset(seed=0, options={"start": 10})
    for step in steps:
        result = vec.step(np.array([weights, weights]))
        for info in result.infos:
            info = info.get("final_info", info)
            assert info["wealth"] == step.info["wealth"]
            assert info["financing"] == step.info["financing"]


# -- the accounting identity ---------------------------------------------------------------------
def _holding_values(env):
    """Each asset's holding after the step's trade, valued at the trade price: shares known
    from the model."""
    return np.atleast_1d(np.asarray(env._model.shares, dtype=np.float64)).reshape(-1)


def test_trading_equity_changes_by_the_mark_less_cost_plus_financing_exactly(googl):
    env = TradingEnv(
        googl.close,
        allow_short=True,
        episode_length=400,
        transaction_cost=0.002,
        borrow_rate=0.08,
        cash_rate=0.03,
    )
    actions = np.random.default_rng(2).integers(-1, 2, size=400)
    _, info = env.reset(seed=0, options={"start": 50})
    equity, price = info["equity"], info["price"]
    rewards, charged = [], 0
    for action in actions:
        step = env.step(action)
        charged += step.info["financing"] != 0.0
        shares = _holding_values(env)[0]
        mark = shares * (step.info["price"] - price)
        expected = equity - step.info["cost"] + step.info["financing"] + mark
        assert step.info["equity"] == pytest.approx(expected, rel=1e-14, abs=1e-15)
        assert np.log(step.info["equity"] / equity) == pytest.approx(step.reward, abs=1e-14)
        rewards.append(step.reward)
        equity, price = step.info["equity"], step.info["price"]
    assert sum(rewards) == pytest.approx(np.log(equity), abs=1e-12)
    assert charged > 200  # short or flat: the rates were charged or earned


def test_portfolio_wealth_changes_by_the_mark_less_cost_plus_financing_exactly():
    env = PortfolioEnv(
        allow_short=True,
        max_leverage=1.8,
        episode_length=200,
        borrow_rate=0.06,
        cash_rate=0.02,
        transaction_cost=0.001,
    )
    env._model = env._make_model(1)  # the array model, whose account this reads; the fast
    env.action_space.seed(3)  # path agrees with it exactly (tests/finance/test_portfolio.py)
    env.reset(seed=3)
    model = env._model
    wealth, price = 1.0, model.price[0].copy()
    paid = 0
    for _ in range(200):
        step = env.step(env.action_space.sample())
        shares = model.account.shares[0]
        mark = float(shares @ (model.price[0] - price))
        expected = wealth - step.info["cost"] + step.info["financing"] + mark
        assert step.info["wealth"] == pytest.approx(expected, rel=1e-13, abs=1e-15)
        paid += step.info["financing"] < 0
        wealth, price = step.info["wealth"], model.price[0].copy()
    assert paid > 100


@pytest.mark.needs("sekai-vector")
@pytest.mark.parametrize("execution", ["close", "next_open"])
def test_native_and_single_agree_exactly_with_financing(googl, execution):
    kwargs = {
        "prices": googl.close,
        "opens": googl.open,
        "execution": execution,
        "allow_short": True,
        "episode_length": 300,
        "borrow_rate": 0.07,
        "cash_rate": 0.025,
    }
    fast, array = TradingEnv(**kwargs), TradingEnv(**kwargs)
    array._model = array._make_model(1)
    vec = _native("Trading-v0", 2, **kwargs)
    actions = np.random.default_rng(5).integers(-1, 2, size=300)
    fast.reset(seed=0, options={"start": 700})
    array.reset(seed=0, options={"start": 700})
    vec.reset(seed=0, options={"start": 700})
    for action in actions:
        one, other = fast.step(int(action)), FinanceEnv.step(array, action)
        batch = vec.step(np.full(2, action))
        assert one.info == other.info
        native = batch.infos[0].get("final_info", batch.infos[0])
        assert native == one.info and batch.rewards[0] == one.reward == other.reward


# -- execution at the next open ------------------------------------------------------------------
def test_next_open_fills_at_the_open_after_the_decision_bar(googl):
    env = TradingEnv(googl.close, opens=googl.open, execution="next_open", transaction_cost=0.0)
    _, steps = _steps(env, [1, 1], start=100)
    # bought with all of equity 1.0 at open[101], marked at close[101], then held
    assert steps[0].info["equity"] == pytest.approx(googl.close[101] / googl.open[101], rel=1e-14)
    assert steps[1].info["equity"] == pytest.approx(googl.close[102] / googl.open[101], rel=1e-14)
    at_close = TradingEnv(googl.close, transaction_cost=0.0)
    _, steps = _steps(at_close, [1], start=100)
    assert steps[0].info["equity"] == pytest.approx(googl.close[101] / googl.close[100])


def test_next_open_reads_the_open_column_of_data(googl):
    """data= with an open column trades at its opens, as prices= with the same opens= does; a
    table without one says what next_open needs."""
    from_data = TradingEnv(data=googl, execution="next_open")
    from_arrays = TradingEnv(googl.close, opens=googl.open, execution="next_open")
    for env in (from_data, from_arrays):
        env.reset(seed=0, options={"start": 100})
    for action in [1, 1, 0, 1, 0, 0, 1]:
        one, other = from_data.step(action), from_arrays.step(action)
        assert one.reward == other.reward
        assert one.info["equity"] == other.info["equity"]
    with pytest.raises(ValueError, match="an open column in data="):
        TradingEnv(data={"close": googl.close}, execution="next_open")
    with pytest.raises(ValueError, match="opens= goes with prices="):
        TradingEnv(data=googl, opens=googl.open)


@pytest.mark.parametrize("env_id", ["Trading-v0", "Portfolio-v0"])
def test_next_open_never_shows_the_env_the_price_it_trades_at(googl, env_id):
    """Perturbing every open after bar t changes nothing observed at or before the decision at
    bar t, and does change what that decision earns."""
    t, start = 120, 100
    closes, opens = googl.close[:400], googl.open[:400]
    if env_id == "Portfolio-v0":
        closes = np.stack([closes, closes[::-1]], axis=1)
        opens = np.stack([opens, opens[::-1]], axis=1)
    perturbed = opens.copy()
    perturbed[t + 1 :] *= np.random.default_rng(0).uniform(0.8, 1.2, size=perturbed[t + 1 :].shape)
    runs = []
    for these_opens in (opens, perturbed):
        env = sekai.make(
            env_id, prices=closes, opens=these_opens, execution="next_open", episode_length=50
        )
        env.action_space.seed(1)
        observation, info = env.reset(seed=0, options={"start": start})
        seen = [(observation, info)]
        for _ in range(30):
            step = env.step(env.action_space.sample())
            seen.append((step.observation, step.info))
        runs.append(seen)
    for k in range(t - start + 1):  # what was observed up to the decision at bar t
        np.testing.assert_array_equal(runs[0][k][0], runs[1][k][0])
        assert runs[0][k][1].keys() == runs[1][k][1].keys()
        for key, value in runs[0][k][1].items():
            np.testing.assert_array_equal(value, runs[1][k][1][key])
    after = t - start + 1  # the step deciding at bar t fills at open[t + 1]
    equity = "equity" if env_id == "Trading-v0" else "wealth"
    assert runs[0][after][1][equity] != runs[1][after][1][equity]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"execution": "next_open"}, r'execution="next_open" fills at the open of the next bar'),
        ({"execution": "open"}, r"execution must be one of \('close', 'next_open'\)"),
        ({"borrow_rate": -0.01}, "borrow_rate must be a finite number of at least 0.0"),
        ({"cash_rate": float("nan")}, "cash_rate must be a finite number"),
        ({"opens": np.ones(10)}, "opens has 10 bars, too short"),
    ],
)
def test_bad_financing_and_execution_are_value_errors(googl, kwargs, message):
    with pytest.raises(ValueError, match=message):
        TradingEnv(googl.close, **kwargs)


def test_next_open_needs_a_history_in_portfolio():
    with pytest.raises(ValueError, match="opens need a price history"):
        PortfolioEnv(opens=np.ones((400, 5)), execution="next_open")
    with pytest.raises(ValueError, match='execution="next_open"'):
        PortfolioEnv(execution="next_open")


def test_rates_may_change_between_steps_and_default_to_zero(googl):
    env = TradingEnv(googl.close, allow_short=True)
    assert (env.borrow_rate, env.cash_rate, env.execution) == (0.0, 0.0, "close")
    env.reset(seed=0, options={"start": 50})
    assert env.step(-1).info["financing"] == 0.0
    env.borrow_rate = 0.5
    assert env.step(-1).info["financing"] < 0.0
    with pytest.raises(AttributeError, match="execution is read-only"):
        env.execution = "next_open"
