"""MarketMaking-v0 against the simulation tables of Avellaneda and Stoikov (2008), section 4.

The paper's setting: s=100, sigma=2, A=140, k=1.5, T=1, dt=0.005 (the env's defaults), 1,000
runs, quotes recomputed every step, one fill at most per side per step, inventory unbounded: the
env's inventory cap is moved out of the way. The inventory strategy quotes around the
reservation price; the symmetric one quotes the same spread around the mid.

A mean must lie within 3 standard errors (the paper's sd over sqrt(1000)) of the paper's; a
standard deviation within 3 of its own standard errors, ``sd * sqrt((kurtosis - 1) / (4 n))``
(the delta method; ``sd / sqrt(2 n)`` for normal data, wider for the fat-tailed profits of the
symmetric strategy), measured on our sample. The figures this model does not reproduce are
``xfail(strict=True)`` with the figure measured, so a change that makes them match (or that
breaks those that do) shows: ``_MISMATCH`` gives what seed 0 measures.

What we found about the mismatches, by simulating variants outside the env (1,000 runs, seeds
0 and 1): the profits come out 1.5 to 2 higher than the paper's for both strategies, as long as
a step's fills are drawn against the mid before the step's move (this env, and mbt_gym). Drawn
against the mid after the move, so that a quote is more likely hit when the price moved through
it, the means of gamma 0.1 and 0.01 fall within 3 standard errors of the paper's (63.4 for its
62.94). Quotes held for a step while orders arrive along a finely simulated path of the mid
(10 sub-steps) give 62.6, 67.3, 67.4 and 67.7 for the paper's 62.94, 67.21, 66.78 and 67.36:
the gap is the adverse selection within a step, which fills against the step's opening mid
leave out. At gamma 0.5 the paper's symmetric figures (66.20, 14.53, 9.06) are those of a spread of
1.15, ``(2 / gamma) log(1 + gamma / k)`` without the ``gamma sigma**2 (T - t)`` term (66.0,
12.9-15.2, 9.0-9.8 measured); its inventory figure 33.92 lies between the 21 of quotes without
that term and the 47-50 of quotes with it, and we did not find what gives it.
"""

from __future__ import annotations

import functools

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

# what seed 0 measures where it is more than 3 standard errors from the paper; z: how many
_MISMATCH = {
    (0.1, "inventory", "mean profit"): "65.06, z = 11",
    (0.1, "inventory", "sd profit"): "6.71 +- 0.16, z = 5",
    (0.01, "inventory", "mean profit"): "68.59, z = 6.5",
    (0.01, "inventory", "sd profit"): "9.62 +- 0.26, z = 3.3",
    (0.01, "inventory", "sd final inventory"): "5.21 +- 0.12, z = 4.4",
    (0.01, "symmetric", "mean profit"): "68.83, z = 3.5",
    (0.5, "inventory", "mean profit"): "50.42 against 33.92",
    (0.5, "inventory", "sd profit"): "6.27 +- 0.14 against 4.72",
    (0.5, "symmetric", "mean profit"): "58.72 against 66.20",
    (0.5, "symmetric", "sd profit"): "12.25 +- 0.41 against 14.53",
    (0.5, "symmetric", "sd final inventory"): "7.25 +- 0.16 against 9.06",
}


@functools.cache
def _simulate(gamma: float, strategy: str) -> tuple[np.ndarray, np.ndarray]:
    """Final profit and inventory of 1,000 dealers over one episode of the paper's setting."""
    vec = sekai.make_vec("MarketMaking-v0", RUNS, max_inventory=10**6)
    policy = AvellanedaStoikov.for_env(vec, gamma, symmetric=strategy == "symmetric")
    result = vec.reset(seed=0)
    for _ in range(vec.template.episode_length):
        result = vec.step(policy(result.observations))
    final = [info["final_info"] for info in result.infos]  # every episode ended together
    return (
        np.array([info["equity"] for info in final]),
        np.array([info["position"] for info in final]),
    )


def _sd_and_its_standard_error(sample: np.ndarray) -> tuple[float, float]:
    sd = sample.std(ddof=1)
    kurtosis = np.mean((sample - sample.mean()) ** 4) / np.mean((sample - sample.mean()) ** 2) ** 2
    return sd, sd * np.sqrt((kurtosis - 1) / (4 * len(sample)))


def _cases() -> list:
    cases = []
    for (gamma, strategy), expected in PAPER.items():
        for statistic, value in zip(
            ("mean profit", "sd profit", "sd final inventory"), expected, strict=True
        ):
            reason = _MISMATCH.get((gamma, strategy, statistic))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(gamma, strategy, statistic, value, marks=marks))
    return cases


@pytest.mark.parametrize(("gamma", "strategy", "statistic", "paper"), _cases())
def test_the_papers_figure_within_monte_carlo_error(gamma, strategy, statistic, paper):
    profit, inventory = _simulate(gamma, strategy)
    if statistic == "mean profit":
        paper_sd = PAPER[gamma, strategy][1]
        assert abs(profit.mean() - paper) <= 3 * paper_sd / np.sqrt(RUNS)
    else:
        sample = profit if statistic == "sd profit" else inventory
        sd, standard_error = _sd_and_its_standard_error(sample)
        assert abs(sd - paper) <= 3 * standard_error


def test_the_inventory_strategy_holds_less_risk_than_the_symmetric_one_at_every_gamma():
    """The paper's conclusion, which holds with margin whatever the figures above."""
    for gamma in (0.1, 0.01, 0.5):
        profit_inventory, q_inventory = _simulate(gamma, "inventory")
        profit_symmetric, q_symmetric = _simulate(gamma, "symmetric")
        assert profit_inventory.std() < 0.75 * profit_symmetric.std()
        assert q_inventory.std() < 0.65 * q_symmetric.std()
