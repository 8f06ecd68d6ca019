"""The spec's rules for native finance envs: template, get_attr/set_attr, read-only parameters
(the same error on every backend), state attributes; and the registry entries."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import sekai
from sekai.cli import main
from sekai.finance import ProportionalCost, SequentialStart
from sekai.registration import load_entry_point
from sekai.testing import check_registered_envs

pytestmark = pytest.mark.needs("sekai-vector")

READ_ONLY = ["lookback", "episode_length", "allow_short", "prices", "transaction_cost", "metadata"]


@pytest.fixture
def native():
    vec = sekai.make_vec("Trading-v0", 3, transaction_cost=0.01)
    yield vec
    vec.close()


def test_parameters_live_on_the_template_and_are_read_every_step(native):
    assert type(native.template).__name__ == "TradingEnv"
    assert native.get_attr("lookback") == [10, 10, 10]
    assert native.get_attr("transaction_cost") == [0.01] * 3
    native.reset(seed=0)
    assert all(info["cost"] > 0 for info in native.step(np.ones(3, int)).infos)
    native.set_attr("cost_model", ProportionalCost(0.0))
    assert native.template.cost_model.rate == 0.0
    assert all(info["cost"] == 0 for info in native.step(np.zeros(3, int)).infos)
    assert native.call("periods_per_year") == [252.0] * 3


def test_set_attr_takes_one_value_or_a_list_repeating_it(native):
    native.set_attr("periods_per_year", [12.0, 12.0, 12.0])
    assert native.template.periods_per_year == 12.0
    with pytest.raises(ValueError, match='vectorization_mode="sync"'):
        native.set_attr("periods_per_year", [12.0, 52.0, 12.0])
    with pytest.raises(ValueError, match="periods_per_year must be a finite number"):
        native.set_attr("periods_per_year", -1.0)
    sampler = SequentialStart()
    native.set_attr("sampler", sampler)
    assert native.reset(seed=0).infos[2]["timestamp"] == 10


@pytest.mark.parametrize("name", READ_ONLY)
def test_read_only_parameters_raise_the_same_error_on_single_native_and_sync(native, name):
    env = sekai.make("Trading-v0")
    value = getattr(env.unwrapped, name)
    with pytest.raises(AttributeError, match=f"{name} is read-only"):
        setattr(env.unwrapped, name, value)
    with pytest.raises(AttributeError, match=f"{name} is read-only"):
        native.set_attr(name, value)
    if name == "metadata":  # SyncVecEnv's AutoReset layer has its own metadata to set
        return
    with (
        sekai.make_vec("Trading-v0", 2, vectorization_mode="sync") as sync,
        pytest.raises(AttributeError, match=f"{name} is read-only"),
    ):
        sync.set_attr(name, value)


def test_portfolio_shape_parameters_are_read_only_too():
    with sekai.make_vec("Portfolio-v0", 2) as vec:
        for name in ("n_assets", "max_leverage", "lookback"):
            with pytest.raises(AttributeError, match=f"{name} is read-only"):
                vec.set_attr(name, 3)


def test_state_attributes_have_one_value_per_sub_env(native):
    native.reset(seed=0, options=[{"start": 10}, {"start": 20}, {"start": 30}])
    native.step(np.array([1, 0, 1]))
    assert native.get_attr("position") == [1, 0, 1]
    assert native.get_attr("timestamp") == [11, 21, 31]
    assert native.get_attr("elapsed_steps") == [1, 1, 1]
    equity = native.get_attr("equity")
    assert equity[1] == pytest.approx(1.0) and equity[0] != equity[2]
    prices = native.template.prices
    assert native.get_attr("price") == [prices[11], prices[21], prices[31]]
    with pytest.raises(AttributeError):
        native.set_attr("equity", 2.0)
    env = sekai.make("Trading-v0").unwrapped
    env.reset(seed=0)
    assert env.position == 0 and env.equity == 1.0
    with pytest.raises(AttributeError):
        env.equity = 2.0
    with sekai.make_vec("Portfolio-v0", 2) as portfolio:
        portfolio.reset(seed=0)
        assert portfolio.get_attr("wealth") == [1.0, 1.0]
        assert [w.tolist() for w in portfolio.get_attr("weights")] == [[0, 0, 0, 0, 0, 1]] * 2


FINANCE_IDS = ("Trading-v0", "Portfolio-v0", "MarketMaking-v0", "OptimalExecution-v0")


def test_every_single_agent_finance_env_passes_check_env():
    ids = [
        env_id
        for env_id, spec in sekai.registry.items()
        if spec.distribution == "sekai-finance"
        and issubclass(load_entry_point(spec.entry_point), sekai.Env)
    ]
    assert set(FINANCE_IDS) <= set(ids)
    assert check_registered_envs(ids=ids) == ids


def test_sekai_list_marks_the_finance_envs_native(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    marked = {line.split()[0] for line in lines if "  [native vec]  " in line}  # id, mark, summary
    assert set(FINANCE_IDS) <= marked


def test_single_envs_do_not_import_sekai_vector():
    code = (
        "import sys, sekai; sekai.make('Trading-v0').reset(seed=0);"
        " sekai.make('Portfolio-v0').reset(seed=0);"
        " sekai.make('MarketMaking-v0').reset(seed=0);"
        " sekai.make('OptimalExecution-v0').reset(seed=0);"
        " import sekai.finance.baselines;"
        " assert 'sekai.vector' not in sys.modules, 'sekai.vector was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_proc_carries_the_same_read_only_error_back():
    with sekai.make_vec(
        "Trading-v0", 2, vectorization_mode="proc", vector_kwargs={"num_workers": 1}
    ) as vec:
        with pytest.raises(sekai.VecEnvWorkerError, match="lookback is read-only") as caught:
            vec.set_attr("lookback", 3)
        assert caught.value.exc_type == "AttributeError"
        vec.set_attr("periods_per_year", 12.0)  # a changeable parameter reaches the workers
        assert vec.get_attr("periods_per_year") == [12.0, 12.0]
