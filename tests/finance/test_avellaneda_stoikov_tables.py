"""MarketMaking-v0 against the simulation tables of Avellaneda and Stoikov (2008), section 4.

The paper's setting: s=100, sigma=2, A=140, k=1.5, T=1, dt=0.005 (the env's defaults), 1,000
runs, quotes recomputed every step, one fill at most per side per step, inventory unbounded: the
env's inventory cap is moved out of the way. The inventory strategy quotes around the
reservation price; the symmetric one quotes the same spread around the mid.

Each figure is a Monte-Carlo estimate, the paper's and ours, each from 1,000 runs, so their
difference has about sqrt(2) times the standard error of one: a mean must lie within
``3 * sqrt(2)`` standard errors (the paper's sd over sqrt(1000)) of the paper's, a standard
deviation within ``3 * sqrt(2)`` of its standard error, ``sd * sqrt((kurtosis - 1) / (4 n))``
(the delta method; ``sd / sqrt(2 n)`` for normal data, wider for the fat-tailed profits of the
symmetric strategy), measured on our sample.

The model that reproduces the tables: within a step, the quotes are set around the opening mid,
the mid moves, and the fills are drawn with the depths measured from the mid after the move (a
quote is more likely hit when the price moved through it). Seed 0 measures, for the paper's
figures (mean profit, sd profit, sd final inventory), with z in combined standard errors:

=====  =========  =====================  ======================================  ==============
gamma  strategy   paper                  measured                                z
=====  =========  =====================  ======================================  ==============
0.1    inventory  62.94, 5.89, 2.80      63.47, 6.51 +- 0.15, 2.83 +- 0.06       2.0, 2.9, 0.3
0.1    symmetric  67.21, 13.43, 8.66     66.90, 14.34 +- 0.57, 8.62 +- 0.19      -0.5, 1.1, -0.1
0.01   inventory  66.78, 8.76, 4.70      66.89, 9.27 +- 0.26, 5.21 +- 0.12       0.3, 1.4, 2.96
0.01   symmetric  67.36, 13.40, 8.65     67.33, 14.85 +- 0.64, 8.82 +- 0.20      -0.1, 1.6, 0.6
0.5    inventory  33.92, 4.72, 1.88      49.19, 6.07 +- 0.13, 1.98 +- 0.05       72, 7.2, 1.6
0.5    symmetric  66.20, 14.53, 9.06     57.99, 12.11 +- 0.45, 7.44 +- 0.17      -13, -3.8, -6.9
=====  =========  =====================  ======================================  ==============

Two of the passing figures are at the edge, and 10 seeds of the same model (10,000 runs, a
numpy copy of it) say why: at gamma 0.1 the inventory strategy's sd of profit is 6.44 for the
paper's 5.89, and at gamma 0.01 its sd of final inventory 5.23 for the paper's 4.70 (3.8 and
4.6 of the paper's own standard errors). The means are the paper's (63.34 for 62.94, 66.90 for
66.78, 66.87 for 67.21, 67.29 for 67.36). Drawn against the mid before the move (the env's
earlier model, and mbt_gym's) the means come out 1.5 to 2 higher (64.87, 68.42, 68.07, 68.81:
z = -10, -6, -2, -3.4); the paper's binomial moves of +-sigma sqrt(dt) instead of Gaussian ones
change nothing measurable.

At gamma 0.5 the closed-form spread does not give the paper's figures. The paper's symmetric
ones (66.20, 14.53, 9.06) are those of a constant spread of 1.15, ``(2 / gamma) log(1 + gamma /
k)`` without the ``gamma sigma**2 (T - t)`` term, which is also the "average spread" its three
tables print (1.29, 1.33, 1.15, where the closed form averages 1.49, 1.35, 2.15): the test
below checks that (65.71, 15.39 +- 0.72, 9.09 +- 0.22; z = -0.8, 0.8, 0.1). At gamma 0.1 and
0.01 the term is too small to tell the two spreads apart within the error (without it the
inventory strategy at gamma 0.1 makes 62.30, sd 5.97, over 10 seeds of the numpy copy). The
paper's inventory figures at gamma 0.5 (33.92, 4.72) we did not reproduce: 49.19 with the term
(the baseline clips the depths to the action space; 47.2 unclipped); without it about 21 with
negative depths kept (an ask below the mid sells below it), 48.6-52.5 with them clipped to 0.
The cause is unknown, so those two figures are recorded here and not tested.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
import pytest

import sekai
from sekai.finance.baselines import AvellanedaStoikov

pytestmark = pytest.mark.needs("sekai-vector")

RUNS = 1000

# (gamma, strategy): (mean profit, sd profit, sd final inventory), the paper's tables 1-3
PAPER = {
    (0.1, "inventory"): (62.94, 5.89, 2.80),
    (0.1, "symmetric"): (67.21, 13.43, 8.66),
    (0.01, "inventory"): (66.78, 8.76, 4.70),
    (0.01, "symmetric"): (67.36, 13.40, 8.65),
    (0.5, "inventory"): (33.92, 4.72, 1.88),
    (0.5, "symmetric"): (66.20, 14.53, 9.06),
}

# figures the closed-form quotes do not reproduce, and why; see the module docstring
_SPREAD_WITHOUT_TERM = "the paper's spread lacks gamma sigma**2 (T - t): see the next test"
_MISMATCH = {
    (0.5, "symmetric", "mean profit"): f"57.99 against 66.20: {_SPREAD_WITHOUT_TERM}",
    (0.5, "symmetric", "sd profit"): f"12.11 +- 0.45 against 14.53: {_SPREAD_WITHOUT_TERM}",
    (0.5, "symmetric", "sd final inventory"): f"7.44 +- 0.17 against 9.06: {_SPREAD_WITHOUT_TERM}",
}
_NOT_REPRODUCED = {(0.5, "inventory", "mean profit"), (0.5, "inventory", "sd profit")}
_STATISTICS = ("mean profit", "sd profit", "sd final inventory")


def _final_profit_and_inventory(
    policy: Callable[[np.ndarray], np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Final profit and inventory of 1,000 dealers over one episode of the paper's setting."""
    vec = sekai.make_vec("MarketMaking-v0", RUNS, max_inventory=10**6)
    result = vec.reset(seed=0)
    for _ in range(vec.template.episode_length):
        result = vec.step(policy(result.observations))
    final = [info["final_info"] for info in result.infos]  # every episode ended together
    return (
        np.array([info["equity"] for info in final]),
        np.array([info["position"] for info in final]),
    )


@functools.cache
def _simulate(gamma: float, strategy: str) -> tuple[np.ndarray, np.ndarray]:
    """The closed-form quotes: around the reservation price, or symmetric around the mid."""
    template = sekai.make("MarketMaking-v0")
    policy = AvellanedaStoikov.for_env(template, gamma, symmetric=strategy == "symmetric")
    return _final_profit_and_inventory(policy)


def _within_monte_carlo_error(
    profit: np.ndarray, inventory: np.ndarray, statistic: str, paper: tuple[float, ...]
) -> bool:
    """Whether our figure and the paper's differ by at most 3 standard errors of a difference
    of two 1,000-run estimates."""
    if statistic == "mean profit":
        standard_error = paper[1] / np.sqrt(RUNS)
        return abs(profit.mean() - paper[0]) <= 3 * np.sqrt(2) * standard_error
    sample = profit if statistic == "sd profit" else inventory
    sd, standard_error = _sd_and_its_standard_error(sample)
    expected = paper[1] if statistic == "sd profit" else paper[2]
    return abs(sd - expected) <= 3 * np.sqrt(2) * standard_error


def _sd_and_its_standard_error(sample: np.ndarray) -> tuple[float, float]:
    sd = sample.std(ddof=1)
    kurtosis = np.mean((sample - sample.mean()) ** 4) / np.mean((sample - sample.mean()) ** 2) ** 2
    return sd, sd * np.sqrt((kurtosis - 1) / (4 * len(sample)))


def _cases() -> list:
    cases = []
    for gamma, strategy in PAPER:
        for statistic in _STATISTICS:
            if (gamma, strategy, statistic) in _NOT_REPRODUCED:
                continue
            reason = _MISMATCH.get((gamma, strategy, statistic))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(gamma, strategy, statistic, marks=marks))
    return cases


@pytest.mark.parametrize(("gamma", "strategy", "statistic"), _cases())
def test_the_papers_figure_within_monte_carlo_error(gamma, strategy, statistic):
    profit, inventory = _simulate(gamma, strategy)
    assert _within_monte_carlo_error(profit, inventory, statistic, PAPER[gamma, strategy])


@pytest.mark.parametrize("statistic", _STATISTICS)
def test_the_papers_gamma_half_symmetric_figures_are_a_constant_spread_of_1_15(statistic):
    """The paper's Table 3 symmetric figures come from ``(2 / gamma) log(1 + gamma / k)``
    alone, 1.15 at gamma 0.5, the "average spread" its table prints."""
    gamma, k = 0.5, 1.5
    half_spread = np.float32(np.log1p(gamma / k) / gamma)

    def policy(observations: np.ndarray) -> np.ndarray:
        return np.full((len(observations), 2), half_spread, np.float32)

    profit, inventory = _final_profit_and_inventory(policy)
    assert _within_monte_carlo_error(profit, inventory, statistic, PAPER[gamma, "symmetric"])


def test_the_inventory_strategy_holds_less_risk_than_the_symmetric_one_at_every_gamma():
    """The paper's conclusion, which holds with margin whatever the figures above."""
    for gamma in (0.1, 0.01, 0.5):
        profit_inventory, q_inventory = _simulate(gamma, "inventory")
        profit_symmetric, q_symmetric = _simulate(gamma, "symmetric")
        assert profit_inventory.std() < 0.75 * profit_symmetric.std()
        assert q_inventory.std() < 0.65 * q_symmetric.std()
