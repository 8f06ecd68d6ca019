"""The queue models' arithmetic (``sekai.finance.lob.queue_models``) on hand-computed cases:
one closed form per model, and the edge cases whose float semantics are hftbacktest's (Rust's)."""

from __future__ import annotations

import math

import pytest

from sekai.finance.lob.queue_models import (
    LogProbQueue,
    LogProbQueue2,
    PowerProbQueue,
    PowerProbQueue2,
    PowerProbQueue3,
    RiskAverse,
    queue_model,
)

# 4 lots ahead of the order, 6 behind (a level of 10), the level drops to 5: a decrease of 5
FRONT, PREV, NEW = 4.0, 10.0, 5.0
BACK, CHANGE = PREV - FRONT, PREV - NEW


@pytest.mark.parametrize(
    ("model", "share_behind"),
    [
        (PowerProbQueue(2), 36 / (36 + 16)),
        (PowerProbQueue(3), 216 / (216 + 64)),
        (PowerProbQueue2(2), 36 / 100),
        (PowerProbQueue3(2), 1 - 0.16),
        (LogProbQueue(), math.log(7) / (math.log(7) + math.log(5))),
        (LogProbQueue2(), math.log(7) / math.log(11)),
    ],
    ids=lambda x: getattr(x, "name", ""),
)
def test_a_decrease_is_split_by_the_models_share_behind(model, share_behind):
    # the share ahead of the decrease moves the order up; here no more than is behind
    front, cum = model.after_depth(FRONT, 0.0, PREV, NEW)
    assert front == pytest.approx(FRONT - (1 - share_behind) * CHANGE, rel=1e-14)
    assert cum == 0.0


def test_risk_averse_moves_only_on_trades_and_is_capped_by_the_level():
    model = RiskAverse()
    assert model.after_depth(FRONT, 0.0, PREV, NEW) == (4.0, 0.0)  # 5 lots left, 4 ahead: no move
    assert model.after_depth(FRONT, 0.0, PREV, 3.0) == (3.0, 0.0)  # capped at the level
    assert model.after_depth(FRONT, 0.0, PREV, 20.0) == (4.0, 0.0)
    front, cum = model.after_trade(FRONT, 0.0, 3)
    assert (front, cum) == (1.0, 3.0) and model.filled(front) == (0, 1.0)
    front, cum = model.after_trade(front, cum, 4)
    assert front == -3.0 and model.filled(front) == (3, 0.0)  # 3 lots traded beyond the queue


def test_trades_since_the_last_change_are_not_counted_twice():
    model = PowerProbQueue(1)
    front, cum = model.after_trade(FRONT, 0.0, 3)  # 3 traded at the level: 1 ahead now
    assert (front, cum) == (1.0, 3.0)
    # the level shows the trade (10 -> 7) and 2 lots more gone: only those 2 are split
    front, cum = model.after_depth(front, cum, PREV, 5.0)
    back = PREV - 1.0
    assert cum == 0.0 and front == pytest.approx(1.0 - (1 - back / (back + 1.0)) * 2, rel=1e-14)
    # a change smaller than the trades behind it is an increase: front is only capped
    assert model.after_depth(4.0, 3.0, PREV, 9.0) == (4.0, 0.0)
    assert model.after_depth(8.0, 0.0, PREV, 12.0) == (8.0, 0.0)


def test_the_float_edge_cases_are_rusts():
    # an infinite share behind counts as 1: front -0.5 and back 0.5 make power 1's 0.5 / 0
    assert PowerProbQueue(1).after_depth(-0.5, 0.0, 0.0, 0.0) == (-0.5, 0.0)
    # a NaN share (a negative base, a fractional exponent): Rust's min takes the new size
    assert PowerProbQueue(0.5).after_depth(-0.4, 0.0, 5.0, 3.0) == (3.0, 0.0)
    assert LogProbQueue2().after_depth(0.0, 0.0, 0.0, 0.0) == (0.0, 0.0)  # 0 / 0
    # lots to fill: rounded half away from zero, as Rust's round
    assert RiskAverse().filled(-0.5) == (1, 0.0)
    assert RiskAverse().filled(-2.5) == (3, 0.0)
    assert RiskAverse().filled(-0.4) == (0, -0.4)


@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf, True, "2"])
@pytest.mark.parametrize("model", [PowerProbQueue, PowerProbQueue2, PowerProbQueue3])
def test_a_bad_exponent_is_refused_by_name(model, bad):
    with pytest.raises(ValueError, match=f"{model.__name__}: the exponent n must be"):
        model(bad)


def test_models_by_name():
    assert queue_model("power") == PowerProbQueue(2.0)
    assert queue_model("log2") == LogProbQueue2()
    model = PowerProbQueue3(1.5)
    assert queue_model(model) is model
    with pytest.raises(ValueError, match="'risk_averse', 'power', 'power2', 'power3', 'log'"):
        queue_model("fifo")
