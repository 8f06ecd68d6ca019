"""MarketMaking-v0 and MarketMakingVecEnv: the Avellaneda-Stoikov model, its accounting, the
native env against the single one, and the closed-form quotes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rollouts import assert_fast_path_agrees, refusals_of_both_paths, run_episode

import sekai
from sekai.envs.finance.market_making import MarketMakingEnv
from sekai.finance.baselines import AvellanedaStoikov
from sekai.finance.market_making import MarketMakingModel, fill_probability


# -- the model -----------------------------------------------------------------------------------
def test_fill_probability_is_the_papers_intensity_times_dt_by_default():
    depth = np.array([-1.0, 0.0, 1.0, 2.0])
    p = fill_probability(depth, 140.0, 1.5, 0.005)
    np.testing.assert_allclose(p[1:], 140.0 * np.exp(-1.5 * depth[1:]) * 0.005, rtol=1e-15)
    assert p[0] == 1.0  # 140 e^1.5 0.005 = 3.1 is capped: a probability
    assert np.all(np.diff(p[1:]) < 0)


def test_the_poisson_fill_model_is_one_arrival_or_more_within_the_step():
    depth = np.array([0.0, 1.0, 2.0])
    p = fill_probability(depth, 140.0, 1.5, 0.005, "poisson")
    np.testing.assert_allclose(p, 1 - np.exp(-140.0 * np.exp(-1.5 * depth) * 0.005))
    assert p[0] == pytest.approx(0.7 * (1 - 0.28), abs=0.005)  # 28% fewer fills at the mid


@pytest.mark.parametrize("fill_model", ["bernoulli", "poisson"])
def test_the_env_fills_as_often_as_its_fill_model_says(fill_model):
    """20,000 quotes at depth 0.5 on each side: the fill rate is the model's probability at the
    depth from the moved mid, 0.5 -+ sigma sqrt(dt) Z, averaged over Z (2.3% above the
    probability at 0.5 for "bernoulli"), within 4 standard errors; the two models' rates are
    30 standard errors apart."""
    env = MarketMakingEnv(fill_model=fill_model, max_inventory=10**6, episode_length=20_000)
    env.reset(seed=1)
    fills = np.array(
        [
            [step.info["bid_filled"], step.info["ask_filled"]]
            for step in (env.step(np.array([0.5, 0.5], np.float32)) for _ in range(20_000))
        ]
    )
    z, weights = np.polynomial.hermite_e.hermegauss(40)  # E[f(Z)], Z standard normal
    moved = fill_probability(0.5 + 2.0 * np.sqrt(0.005) * z, 140.0, 1.5, 0.005, fill_model)
    p = weights @ moved / np.sqrt(2 * np.pi)
    standard_error = np.sqrt(p * (1 - p) / fills.size)
    assert abs(fills.mean() - p) < 4 * standard_error


def test_fill_model_must_be_one_the_env_knows():
    with pytest.raises(ValueError, match=r"fill_model must be one of \('bernoulli', 'poisson'\)"):
        MarketMakingEnv(fill_model="exponential")
    env = MarketMakingEnv()
    assert env.fill_model == "bernoulli"
    env.fill_model = "poisson"  # may change between steps, like the other market parameters
    assert env.fill_model == "poisson"


@settings(max_examples=30, deadline=None)
@given(
    depths=st.lists(st.tuples(st.floats(0, 5), st.floats(0, 5)), min_size=1, max_size=40),
    seed=st.integers(0, 2**32 - 1),
    penalty=st.sampled_from([0.0, 0.5]),
    terminal=st.sampled_from([0.0, 2.0]),
)
def test_every_fill_conserves_cash_and_inventory_and_rewards_sum_to_the_pnl(
    depths, seed, penalty, terminal
):
    env = MarketMakingEnv(
        max_inventory=3,
        episode_length=len(depths),
        inventory_penalty=penalty,
        terminal_penalty=terminal,
    )
    env.reset(seed=seed)
    total_reward = total_penalty = 0.0
    for bid_depth, ask_depth in depths:
        cash, inventory, mid = env.cash, env.position, env.price
        step = env.step(np.array([bid_depth, ask_depth], np.float32))
        info = step.info
        assert info["bid"] == mid - float(np.float32(bid_depth))
        assert info["ask"] == mid + float(np.float32(ask_depth))
        bought, sold = int(info["bid_filled"]), int(info["ask_filled"])
        assert env.position == inventory + bought - sold
        assert env.cash == pytest.approx(cash - bought * info["bid"] + sold * info["ask"])
        assert abs(env.position) <= 3
        assert info["penalty"] >= 0.0
        last = penalty * env.dt + (terminal if step.terminated else 0.0)
        assert info["penalty"] == pytest.approx(last * env.position**2)
        assert step.reward == pytest.approx(info["pnl"] - info["penalty"])
        total_reward += step.reward
        total_penalty += info["penalty"]
    assert total_reward + total_penalty == pytest.approx(env.equity, abs=1e-9)


def _pushing_quotes(rng, n, steps, max_depth=5.0):
    """Quotes that push the inventory to a cap and hold it there: in runs of 10 to 60 steps a
    dealer bids at the mid and asks far away (buying), or the reverse, or quotes at random."""
    actions = np.empty((steps, n, 2), np.float32)
    t = 0
    while t < steps:
        run = int(rng.integers(10, 60))
        kind = rng.integers(3, size=n)
        near, far = np.zeros(n), np.full(n, max_depth)
        bid = np.where(kind == 0, near, np.where(kind == 1, far, rng.uniform(0, 2, n)))
        ask = np.where(kind == 0, far, np.where(kind == 1, near, rng.uniform(0, 2, n)))
        actions[t : t + run] = np.stack([bid, ask], axis=1)
        t += run
    return actions


def test_the_inventory_cap_is_hard_over_long_random_runs():
    """No fill takes the inventory past the cap, long or short, though the quotes at the cap
    stay at the mid (filled 70% of the time without the cap) for many steps."""
    env = MarketMakingEnv(max_inventory=3, episode_length=5_000)
    env.reset(seed=7)
    actions = _pushing_quotes(np.random.default_rng(7), 1, 5_000)[:, 0]
    positions = np.array([env.step(action).info["position"] for action in actions])
    assert np.abs(positions).max() == 3
    assert (positions == 3).sum() > 100 and (positions == -3).sum() > 100


@pytest.mark.needs("sekai-vector")
def test_the_native_inventory_cap_is_hard_over_long_random_runs():
    vec = sekai.make_vec("MarketMaking-v0", 64, max_inventory=4, autoreset=False)
    actions = _pushing_quotes(np.random.default_rng(8), 64, 2_000)
    at_cap = 0
    for episode in range(10):
        vec.reset(seed=episode)
        for t in range(200):
            step = vec.step(actions[episode * 200 + t])
            positions = step.observations[:, 0]
            assert np.abs(positions).max() <= 4
            assert np.array_equal(vec.position, positions)
            at_cap += int((np.abs(positions) == 4).sum())
    assert at_cap > 1_000  # the cap was pressed often, on both sides by construction


def test_without_fills_or_volatility_equity_does_not_move():
    env = MarketMakingEnv(sigma=0.0, arrival_rate=0.0)
    env.reset(seed=0)
    for step in run_episode(env, lambda obs: np.full((len(obs), 2), 0.5, np.float32), 0):
        assert step.reward == 0.0 and step.info["equity"] == 0.0
    assert env.price == 100.0


def test_the_quotes_and_fills_of_a_step_do_not_depend_on_later_shocks():
    """No look-ahead: what happens at or before step t is the same whatever moves come after."""
    rng = np.random.default_rng(0)
    uniforms = rng.random((30, 8, 2))
    shocks = rng.standard_normal((30, 8))
    perturbed = shocks.copy()
    perturbed[15:] += rng.standard_normal((15, 8)) * 5

    def run(moves):
        model = MarketMakingModel(MarketMakingEnv(), 8)
        model.reset(np.arange(8), [None] * 8, np.random.default_rng())
        seen = []
        for t in range(30):
            step = model.advance(np.full((8, 2), 0.7), uniforms[t], moves[t])
            seen.append((step.bid, step.ask, step.bid_filled, step.ask_filled, step.pnl))
        return seen

    original, changed = run(shocks), run(perturbed)
    for t in range(15):  # the shock of step t moves the mid before step t's fills are drawn
        for a, b in zip(original[t], changed[t], strict=True):
            np.testing.assert_array_equal(a, b)
    assert not np.array_equal(original[15][4], changed[15][4])


def test_the_fills_are_drawn_against_the_mid_after_the_steps_move():
    """The quotes stand around the opening mid; each fill's depth is measured from the mid
    after the step's move, so a quote the price moved through is more likely hit (12 standard
    moves through a quote make it certain)."""
    model = MarketMakingModel(MarketMakingEnv(), 6)
    model.reset(np.arange(6), [None] * 6, np.random.default_rng())
    shocks = np.array([-12.0, -1.0, 0.0, 0.5, 1.0, 12.0])
    uniforms = np.random.default_rng(3).random((6, 2)) * 0.999
    step = model.advance(np.full((6, 2), 0.5), uniforms, shocks)
    move = 2.0 * np.sqrt(0.005) * shocks
    np.testing.assert_array_equal(step.bid, np.full(6, 99.5))
    np.testing.assert_array_equal(step.ask, np.full(6, 100.5))
    np.testing.assert_array_equal(model.price, 100.0 + move)
    bid_probability = fill_probability(0.5 + move, 140.0, 1.5, 0.005)
    ask_probability = fill_probability(0.5 - move, 140.0, 1.5, 0.005)
    np.testing.assert_array_equal(step.bid_filled, uniforms[:, 0] < bid_probability)
    np.testing.assert_array_equal(step.ask_filled, uniforms[:, 1] < ask_probability)
    assert step.bid_filled[-1] == False and step.ask_filled[-1] == True  # noqa: E712
    assert step.bid_filled[0] == True and step.ask_filled[0] == False  # noqa: E712
    assert np.all(np.diff(bid_probability) < 0) and np.all(np.diff(ask_probability) > 0)


def test_the_observation_before_a_step_does_not_depend_on_its_move():
    """The dealer quotes before the move: what it observes (inventory, time left) before step t
    is the same whatever the shock of step t."""
    rng = np.random.default_rng(1)
    uniforms, shocks = rng.random((20, 5, 2)), rng.standard_normal((20, 5))

    def observations(moves):
        model = MarketMakingModel(MarketMakingEnv(), 5)
        model.reset(np.arange(5), [None] * 5, np.random.default_rng())
        seen = []
        for t in range(20):
            seen.append(model.observe())
            model.advance(np.full((5, 2), 0.3), uniforms[t], moves[t])
        return seen

    perturbed = shocks.copy()
    perturbed[10] *= -50.0
    original, changed = observations(shocks), observations(perturbed)
    for t in range(11):
        np.testing.assert_array_equal(original[t], changed[t])
    assert not np.array_equal(original[11], changed[11])


# -- single and native agree ---------------------------------------------------------------------
# -- the closed-form baseline --------------------------------------------------------------------
def test_avellaneda_stoikov_quotes_the_reservation_price_and_spread():
    gamma, sigma, k = 0.1, 2.0, 1.5
    policy = AvellanedaStoikov(gamma, sigma, k, max_depth=5.0)
    inventory = np.array([-2.0, 0.0, 1.0, 3.0])
    time_remaining = np.array([1.0, 0.5, 0.25, 0.0])
    mid = 100.0
    depths = policy(np.stack([inventory, time_remaining], axis=1))
    reservation = mid - inventory * gamma * sigma**2 * time_remaining
    spread = gamma * sigma**2 * time_remaining + 2 / gamma * np.log(1 + gamma / k)
    bid, ask = mid - depths[:, 0], mid + depths[:, 1]
    np.testing.assert_allclose((bid + ask) / 2, reservation, rtol=1e-6)
    np.testing.assert_allclose(ask - bid, spread, rtol=1e-5)


def test_the_symmetric_strategy_quotes_the_same_spread_around_the_mid():
    observations = np.array([[-1.0, 0.8], [0.0, 0.5], [2.0, 0.2]])
    skewed = AvellanedaStoikov(0.1, 2.0, 1.5, max_depth=50.0)(observations)
    symmetric = AvellanedaStoikov(0.1, 2.0, 1.5, max_depth=50.0, symmetric=True)(observations)
    np.testing.assert_allclose(symmetric.sum(axis=1), skewed.sum(axis=1), rtol=1e-6)
    assert np.array_equal(symmetric[:, 0], symmetric[:, 1])
    assert not np.array_equal(skewed[:, 0], skewed[:, 1])


def test_avellaneda_stoikov_depths_are_clipped_to_the_action_space():
    policy = AvellanedaStoikov.for_env(sekai.make("MarketMaking-v0"))
    depths = policy(np.array([[20.0, 1.0], [-20.0, 1.0]], np.float32))
    assert depths.tolist() == [[5.0, 0.0], [0.0, 5.0]]


def test_avellaneda_stoikov_needs_a_positive_risk_aversion():
    with pytest.raises(ValueError, match=r"risk_aversion must be positive and finite, got 0\.0"):
        AvellanedaStoikov(0.0, 2.0, 1.5, 5.0)


@pytest.mark.needs("sekai-vector")
def test_avellaneda_stoikov_keeps_inventory_tighter_than_symmetric_quotes_of_the_same_spread():
    vec = sekai.make_vec("MarketMaking-v0", 400)
    skewed = AvellanedaStoikov.for_env(vec)

    def symmetric(observations):
        depths = skewed(observations)
        half = depths.sum(axis=1, keepdims=True) / 2
        return np.repeat(half, 2, axis=1)

    variances = {}
    for name, policy in (("skewed", skewed), ("symmetric", symmetric)):
        result = vec.reset(seed=3)
        for _ in range(200):
            result = vec.step(policy(result.observations))
        final = np.array([info["final_info"]["position"] for info in result.infos])
        variances[name] = final.var()
    assert variances["skewed"] < 0.5 * variances["symmetric"]


# -- the env API ---------------------------------------------------------------------------------
def test_the_last_step_ends_the_episode_with_its_metrics():
    env = sekai.make("MarketMaking-v0", episode_length=30)
    steps = run_episode(env, AvellanedaStoikov.for_env(env), 0)
    assert len(steps) == 30 and steps[-1].terminated
    assert not any("episode_return" in step.info for step in steps[:-1])
    final = steps[-1].info
    capital = 100.0 * 20  # start_price * max_inventory
    pnls = np.array([step.info["pnl"] for step in steps])
    assert final["episode_return"] == pytest.approx(pnls.sum() / capital)
    wealth = capital + np.concatenate([[0.0], np.cumsum(pnls)])
    log_returns = np.diff(np.log(wealth))
    sharpe = log_returns.mean() / log_returns.std(ddof=1) * np.sqrt(1 / 0.005)
    assert final["sharpe"] == pytest.approx(sharpe, rel=1e-6)
    peak = np.maximum.accumulate(wealth)
    assert final["max_drawdown"] == pytest.approx(np.max(1 - wealth / peak))
    traded = sum(
        s.info["bid"] * s.info["bid_filled"] + s.info["ask"] * s.info["ask_filled"] for s in steps
    )
    assert final["turnover"] == pytest.approx(traded / capital, rel=0.05)


@pytest.mark.needs("sekai-vector")
def test_set_attr_changes_every_sub_env_and_refuses_what_it_cannot():
    vec = sekai.make_vec("MarketMaking-v0", 4)
    vec.reset(seed=0)
    vec.set_attr("sigma", 0.0)
    assert vec.get_attr("sigma") == [0.0] * 4 and vec.template.sigma == 0.0
    for _ in range(10):
        vec.step(np.full((4, 2), 5.0, np.float32))  # far quotes: almost never filled
    assert vec.get_attr("price") == [100.0] * 4
    vec.set_attr("inventory_penalty", [0.5] * 4)
    assert vec.template.inventory_penalty == 0.5
    with pytest.raises(ValueError, match="different values"):
        vec.set_attr("sigma", [0.0, 1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="sigma must be a finite number"):
        vec.set_attr("sigma", -1.0)
    for name in ("episode_length", "max_inventory", "max_depth", "dt", "metadata"):
        with pytest.raises(AttributeError, match=f"{name} is read-only"):
            vec.set_attr(name, 1)
    assert vec.get_attr("time_remaining") == pytest.approx([0.95] * 4)
    assert len(vec.get_attr("equity")) == 4


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"fill_model": "poisson", "inventory_penalty": 0.5, "max_inventory": 2},
        {"inventory_penalty": 0.01, "terminal_penalty": 0.5, "episode_length": 9},
        {"sigma": 40.0, "depth_decay": 800.0, "episode_length": 7},  # capped exponents, fills
    ],
)
def test_the_scalar_fast_path_agrees_exactly_with_the_array_model(kwargs):
    rng = np.random.default_rng(3)
    depths = rng.uniform(0.0, 5.0, size=(600, 2)).astype(np.float32)
    depths[::7] = 0.0  # quotes at the mid
    actions = [row if i % 3 else row.tolist() for i, row in enumerate(depths)]  # lists too
    state = ("price", "position", "cash", "equity", "time_remaining")
    assert assert_fast_path_agrees(MarketMakingEnv, actions, state, **kwargs) >= 2


@pytest.mark.parametrize(
    "action",
    [np.array([0.1, 5.5], np.float32), np.array([np.nan, 0.1]), [0.1], np.zeros((1, 2)), [-1, 0]],
)
def test_the_fast_path_refuses_bad_quotes_with_the_array_models_errors(action):
    errors = refusals_of_both_paths(MarketMakingEnv, action)
    assert errors[0] == errors[1]
    assert "outside [0.0, 5.0]" in errors[0] or "shape" in errors[0]
