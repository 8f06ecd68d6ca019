"""CarteaJaimungal: the closed-form quotes for MarketMaking-v0 with inventory penalties, checked
against their own HJB equation solved another way, their terminal condition, and the market."""

from __future__ import annotations

import numpy as np
import pytest

import sekai
from sekai.finance.baselines import AvellanedaStoikov, CarteaJaimungal

A, K, PHI, ALPHA, Q, MAX_DEPTH = 140.0, 1.5, 0.1, 0.5, 6, 5.0


def _quotes(**kwargs) -> CarteaJaimungal:
    params = dict(
        arrival_rate=A,
        depth_decay=K,
        inventory_penalty=PHI,
        terminal_penalty=ALPHA,
        max_inventory=Q,
        max_depth=MAX_DEPTH,
    )
    return CarteaJaimungal(**{**params, **kwargs})


def _hjb_by_euler(tau: float, steps: int = 20_000) -> np.ndarray:
    """h(T - tau, q) for q in [-Q, Q], by explicit Euler steps of the HJB equation itself,
    dh/dtau = -phi q^2 + sum over the sides that may trade of A exp(-1 + k (h_next - h)) / k,
    from h(T, q) = -alpha q^2 (Cartea, Jaimungal and Penalva 2015, eq. 10.10)."""
    q = np.arange(-Q, Q + 1, dtype=np.float64)
    h = -ALPHA * q**2
    dtau = tau / steps
    for _ in range(steps):
        gain = np.zeros_like(h)
        gain[:-1] += A * np.exp(-1.0 + K * (h[1:] - h[:-1])) / K  # buy at the bid: q + 1
        gain[1:] += A * np.exp(-1.0 + K * (h[:-1] - h[1:])) / K  # sell at the ask: q - 1
        h = h + dtau * (-PHI * q**2 + gain)
    return h


@pytest.mark.parametrize("tau", [0.05, 0.5])
def test_the_quotes_solve_the_hjb_equation(tau):
    h = _hjb_by_euler(tau)
    q = np.arange(-Q + 1, Q)  # inside the limits, both sides quote
    bid = 1 / K - (h[q + Q + 1] - h[q + Q])
    ask = 1 / K - (h[q + Q - 1] - h[q + Q])
    observations = np.stack([q, np.full(len(q), tau)], axis=1)
    depths = _quotes(max_depth=50.0)(observations)
    np.testing.assert_allclose(depths[:, 0], bid, atol=2e-3)
    np.testing.assert_allclose(depths[:, 1], ask, atol=2e-3)


def test_at_the_horizon_the_quotes_are_the_terminal_penalty_s():
    """h(T, q) = -alpha q^2 gives a bid of 1/k + alpha (2q + 1), an ask of 1/k - alpha (2q - 1)."""
    q = np.arange(-3, 4)
    depths = _quotes(max_depth=50.0)(np.stack([q, np.zeros(7)], axis=1))
    np.testing.assert_allclose(depths[:, 0], np.clip(1 / K + ALPHA * (2 * q + 1), 0, 50), 1e-5)
    np.testing.assert_allclose(depths[:, 1], np.clip(1 / K - ALPHA * (2 * q - 1), 0, 50), 1e-5)


def test_quotes_are_mirror_images_and_lean_against_the_inventory():
    q = np.arange(-Q, Q + 1)
    depths = _quotes()(np.stack([q, np.full(len(q), 0.7)], axis=1))
    np.testing.assert_allclose(depths[:, 0], depths[::-1, 1], rtol=1e-5)
    assert np.all(np.diff(depths[:, 0]) >= 0) and np.all(np.diff(depths[:, 1]) <= 0)
    assert depths[-1, 0] == MAX_DEPTH and depths[0, 1] == MAX_DEPTH  # no fill past the limit


def test_without_penalties_far_from_the_limits_the_depth_is_one_over_k():
    """Risk neutral: the depth maximising the expected spread earned, 1/k, as the book says."""
    quotes = _quotes(inventory_penalty=0.0, terminal_penalty=0.0, max_inventory=200)
    depths = quotes(np.array([[0.0, 1.0], [10.0, 1.0], [-10.0, 0.3]]))
    np.testing.assert_allclose(depths, 1 / K, rtol=1e-6)


@pytest.mark.needs("sekai-vector")
def test_on_the_market_the_closed_form_beats_fixed_quotes_and_as_quotes():
    vec = sekai.make_vec("MarketMaking-v0", 500, inventory_penalty=PHI, terminal_penalty=ALPHA)
    policies = {
        "cj": CarteaJaimungal.for_env(vec),
        "as": AvellanedaStoikov.for_env(vec, risk_aversion=0.1),
        "fixed": lambda observations: np.full((len(observations), 2), 1 / K, np.float32),
    }
    totals = {}
    for name, policy in policies.items():
        result = vec.reset(seed=0)
        total = np.zeros(500)
        for _ in range(200):
            result = vec.step(policy(result.observations))
            total += result.rewards
        totals[name] = total.mean()
    assert totals["cj"] > totals["as"] + 3 and totals["cj"] > totals["fixed"] + 20
    vec.close()


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="depth_decay must be positive"):
        _quotes(depth_decay=0.0)
    with pytest.raises(ValueError, match="penalties must be non-negative"):
        _quotes(terminal_penalty=-1.0)


def test_for_env_reads_the_penalties_from_the_env():
    env = sekai.make("MarketMaking-v0", inventory_penalty=PHI, terminal_penalty=ALPHA)
    observations = np.array([[2.0, 0.0], [-1.0, 0.4]])
    np.testing.assert_array_equal(
        CarteaJaimungal.for_env(env)(observations), _quotes(max_inventory=20)(observations)
    )
