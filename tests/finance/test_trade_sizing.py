"""Sizing a trade net of its own cost: the closed form of one asset with a linear cost."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sekai.finance import HalfSpreadCost, ProportionalCost
from sekai.finance.accounting import Account, size_one, size_one_linear

_equity = st.floats(1e-6, 1e6)
_holdings = st.floats(-3.0, 3.0)  # times equity: what an account at most 3x levered holds
_weight = st.floats(-3.0, 3.0)
_rate = st.floats(0.0, 0.3)


def _trade_to(equity, holdings, weight, cost_model):
    """Account.trade_to of one account in one asset at price 2.0: (cost, traded, cash)."""
    account = Account(1, 1)
    account.cash[:] = equity - holdings
    account.shares[:] = holdings / 2.0
    cost, traded = account.trade_to(
        np.array([[2.0]]), np.array([equity]), np.array([[weight]]), cost_model
    )
    return cost[0], traded[0], account.cash[0]


@settings(max_examples=300, deadline=None)
@given(_equity, _holdings, _weight, _rate)
def test_the_closed_form_solves_the_trade_net_of_its_cost(equity, holdings, weight, rate):
    if rate * abs(weight) >= 0.9:
        return
    holdings *= equity
    target, cost, traded = size_one_linear(equity, holdings, weight, rate)
    net = equity - cost  # what is left to hold after paying the cost
    assert traded == abs(target - holdings)
    assert cost == rate * traded
    assert target == pytest.approx(weight * net, rel=1e-12, abs=1e-9 * equity)


@settings(max_examples=300, deadline=None)
@given(_equity, _holdings, _weight, _rate)
@example(1e-06, 1.7832893602287516e-304, 0.0, 0.0)  # subnormal holdings
@example(1.0, 5e-324, 0.0, 0.0)
def test_the_array_model_and_the_float_form_agree_exactly(equity, holdings, weight, rate):
    if rate * abs(weight) >= 1.0:
        return
    # what the account holds: shares of holdings / 2 at price 2 (halving a subnormal value
    # loses its last bit, so the float form starts from the same value)
    holdings = holdings * equity / 2.0 * 2.0
    for model, linear_rate in ((ProportionalCost(rate), rate), (HalfSpreadCost(rate), rate / 2)):
        target, cost, traded = size_one_linear(equity, holdings, weight, linear_rate)
        array_cost, array_traded, cash = _trade_to(equity, holdings, weight, model)
        assert (array_cost, array_traded) == (cost, traded)
        assert cash == (equity - holdings) - ((target - holdings) + cost)


@settings(max_examples=200, deadline=None)
@given(_equity, _holdings, _weight, st.floats(0.0, 0.1))
def test_the_closed_form_agrees_with_the_secant_to_its_tolerance(equity, holdings, weight, rate):
    holdings *= equity
    closed = size_one_linear(equity, holdings, weight, rate)
    secant = size_one(equity, holdings, weight, ProportionalCost(rate).cost_of_one)
    for ours, theirs in zip(closed, secant, strict=True):
        assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12 * equity)


@pytest.mark.parametrize("weight", [1.0, -2.0])
def test_a_marginal_rate_of_one_is_refused_by_both_forms(weight):
    rate = 1.0 / abs(weight)
    with pytest.raises(ValueError, match="marginal rate must stay below 1"):
        size_one_linear(1.0, 0.0, weight, rate)
    with pytest.raises(ValueError, match="marginal rate must stay below 1"):
        _trade_to(1.0, 0.0, weight, ProportionalCost(rate))
