"""Cost models and the episode-metrics accumulator against direct computations."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from sekai.finance import EpisodeMetrics, HalfSpreadCost, ProportionalCost, SquareRootImpact
from sekai.finance._rows import row_sums
from sekai.finance._scalar import EXACT_SUM_LENGTH, sequential_sum
from sekai.finance.costs import resolve_costs

traded_values = hnp.arrays(
    np.float64, hnp.array_shapes(min_dims=2, max_dims=2, max_side=6), elements=st.floats(0, 1e3)
)


@given(traded_values)
def test_costs_are_never_negative_and_have_their_closed_forms(traded):
    for model in (ProportionalCost(0.001), HalfSpreadCost(0.0004), SquareRootImpact()):
        cost = model(traded)
        assert cost.shape == (len(traded),) and (cost >= 0).all()
    close = {"rtol": 1e-7, "atol": 1e-12}  # subnormal values have no relative precision
    np.testing.assert_allclose(ProportionalCost(0.001)(traded), 0.001 * traded.sum(axis=1), **close)
    np.testing.assert_allclose(HalfSpreadCost(0.0004)(traded), 0.0002 * traded.sum(axis=1), **close)
    impact = SquareRootImpact(coefficient=0.5, volatility=0.02, daily_volume=50.0)
    np.testing.assert_allclose(
        impact(traded), (0.5 * 0.02 * traded * np.sqrt(traded / 50.0)).sum(axis=1), **close
    )


def test_cost_parameters_are_checked():
    for bad in (-0.1, float("nan"), float("inf"), "0.1", True):
        with pytest.raises(ValueError, match="rate"):
            ProportionalCost(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="daily_volume must be positive"):
        SquareRootImpact(daily_volume=0.0)
    with pytest.raises(ValueError, match="not both"):
        resolve_costs(ProportionalCost(0.0), 0.01)
    model, rate = resolve_costs(None, None)
    assert rate == 0.001 and model.rate == 0.001  # type: ignore[attr-defined]


@given(
    hnp.arrays(np.float64, st.integers(1, 60), elements=st.floats(-0.2, 0.2)),
    st.floats(0.0, 2.0),
)
def test_episode_metrics_match_their_definitions(log_returns, turnover):
    metrics = EpisodeMetrics(2)
    metrics.reset(np.array([0, 1]))
    for r in log_returns:
        metrics.update(np.array([r, 0.0]), np.array([turnover, 0.0]))
    summary = metrics.summary(252.0)
    equity = np.exp(np.concatenate([[0.0], np.cumsum(log_returns)]))
    drawdown = 1 - equity / np.maximum.accumulate(equity)
    assert summary["episode_return"][0] == pytest.approx(equity[-1] - 1, rel=1e-9, abs=1e-12)
    assert summary["max_drawdown"][0] == pytest.approx(drawdown.max(), rel=1e-9, abs=1e-12)
    assert summary["turnover"][0] == pytest.approx(turnover * len(log_returns))
    std = log_returns.std(ddof=1) if len(log_returns) > 1 else 0.0
    if std > 1e-6:
        expected = log_returns.mean() / std * np.sqrt(252)
        assert summary["sharpe"][0] == pytest.approx(expected, rel=1e-6, abs=1e-9)
    assert summary["sharpe"][1] == 0.0 and summary["max_drawdown"][1] == 0.0


def test_final_infos_are_masked_where_no_episode_ended():
    metrics = EpisodeMetrics(3)
    metrics.update(np.array([0.1, -0.1, 0.0]), np.zeros(3))
    assert metrics.final_infos(np.zeros(3, bool), 252.0) == {}
    infos = metrics.final_infos(np.array([False, True, False]), 252.0)
    assert np.ma.getmaskarray(infos["episode_return"]).tolist() == [True, False, True]
    assert infos["episode_return"][1] == pytest.approx(np.expm1(-0.1))


_finite = st.floats(-1e12, 1e12, allow_nan=False, allow_subnormal=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(_finite, min_size=1, max_size=EXACT_SUM_LENGTH))
def test_sequential_sum_is_numpys_sum_bit_for_bit_up_to_its_length(values):
    # the scalar fast paths rely on it: numpy sums this few values one after the other
    assert sequential_sum(values) == np.array([values]).sum(axis=1)[0] == np.sum(values)


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 9),
    st.sampled_from([1, 63, 64, 200]),
    st.lists(st.sampled_from([-0.0, 0.0, 1.0, -1e16, 1e16, 3.3, np.nan]), min_size=1),
)
def test_row_sums_are_numpys_row_sums_bit_for_bit(width, rows, pool):
    values = np.resize(np.array(pool), (rows, width))
    np.random.default_rng(width).shuffle(values.ravel())
    ours, numpys = row_sums(values), values.sum(axis=1)
    np.testing.assert_array_equal(ours, numpys)
    assert (np.signbit(ours) == np.signbit(numpys)).all()  # negative zeros too


def test_numpy_sums_longer_rows_otherwise_so_the_fast_paths_stop_there():
    values = [1.0, 1e16, -1e16, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]  # 9 values: summed pairwise
    assert sequential_sum(values) != np.sum(values)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(0.0, 1e6, allow_subnormal=False), min_size=1, max_size=6))
def test_the_cost_models_scalar_forms_give_their_array_costs_exactly(traded):
    for model in (ProportionalCost(0.0013), HalfSpreadCost(0.0007), SquareRootImpact()):
        assert model.cost_of_values(traded) == model(np.array([traded]))[0]
    for model in (ProportionalCost(0.0013), HalfSpreadCost(0.0007)):  # the linear ones
        assert model.linear_rate() * sequential_sum(traded) == model(np.array([traded]))[0]
