"""benchmarks/learning.py end to end with a tiny budget: a simulated and a real-data setting
train, are evaluated with their baselines on the same episodes, and land in the JSON table and
the curves' PNG. Every setting, and whether PPO learns, is the ``learning`` nox session's
(``--quick --check``); the full table is docs/learning.md's."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.needs("stable-baselines3", "sekai-finance", "sekai-vector")

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "learning.py"


@functools.cache
def _learning():
    """The script as a module (in sys.modules, which its dataclasses need)."""
    spec = importlib.util.spec_from_file_location("sekai_learning_benchmark", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_quick_run_writes_the_table_and_the_curves(tmp_path, capsys):
    learning = _learning()
    names = ["market-making", "portfolio-googl"]  # simulated; real dates and weights from a box
    argv = ["--quick", "--steps", "1024", "--eval-episodes", "8", "--out", str(tmp_path)]
    assert learning.main([*argv, "--only", *names]) == 0
    report = json.loads((tmp_path / "learning.json").read_text())
    assert report["setting"] == "quick" and report["seeds"] == [0]
    assert list(report["results"]) == names
    for name, result in report["results"].items():
        setting = learning.SETTINGS[name]
        [row] = result["runs"]
        assert row["seed"] == 0
        # one seed: the figure's error is its evaluation's
        assert result["summary"]["mean"] == learning.headline(name, row)[0]
        assert result["summary"]["standard_error"] == learning.headline(name, row)[1]
        assert set(row["scores"]) == {"PPO", *setting.baselines}
        if setting.simulated:
            assert row["evaluation_episodes"] == 8
        else:  # every window of the later dates, the same for PPO and the baselines
            assert row["evaluation_episodes"] > 100
        assert row["training_steps"] >= 1024 and row["curve"]
        assert row["reference"] in row["scores"]
    printed = capsys.readouterr().out
    assert "| market-making |" in printed and "of Cartea-Jaimungal" in printed
    assert (tmp_path / "learning.png").stat().st_size > 10_000  # matplotlib: the dev group's


def test_baselines_and_ppo_see_the_same_markets():
    """A baseline run twice on the held-out seeds gives the same episodes: the evaluation is
    paired, so PPO's ratio to the closed form has a small standard error."""
    import sekai

    learning = _learning()
    setting = learning.SETTINGS["market-making"]
    vec = sekai.make_vec(setting.env_id, 16, **setting.test)
    policy = setting.baselines["Cartea-Jaimungal"](vec)
    first = learning._baseline_rewards(vec, policy, 7)[0]
    assert (learning._baseline_rewards(vec, policy, 7)[0] == first).all()
    assert not (learning._baseline_rewards(vec, policy, 8)[0] == first).all()


def _run(seed, ratio, error=0.002):
    return {"seed": seed, "ratio_to_reference": ratio, "ratio_standard_error": error}


def test_several_seeds_report_the_spread_over_seeds_and_a_new_run_is_placed_in_it():
    """With several training seeds a figure's standard error is the spread over the seeds (a
    run's error), not one evaluation's; --compare places a new run's figure in it."""
    learning = _learning()
    runs = [_run(0, 0.97), _run(1, 0.98), _run(2, 0.96)]
    summary = learning.summarise("market-making", runs)
    assert summary["mean"] == pytest.approx(0.97)
    assert summary["standard_error"] == pytest.approx(0.01)  # sd of 0.96, 0.97, 0.98
    assert summary["standard_error_of_mean"] == pytest.approx(0.01 / 3**0.5)
    assert summary["per_seed"] == {"0": 0.97, "1": 0.98, "2": 0.96}
    earlier = {"results": {"market-making": {"summary": summary}}}
    new = [_run(5, 0.975), _run(6, 0.9)]
    lines = learning.compare(
        {"market-making": {"summary": learning.summarise("market-making", new)}}, earlier
    )
    # the 95% range of a new run: 0.97 ± t(0.975, 2) 0.01 sqrt(1 + 1/3), t = 4.3027
    assert summary["prediction_range"] == pytest.approx([0.97 - 0.049683, 0.97 + 0.049683], 1e-4)
    assert lines[0].endswith("+0.50 standard errors, inside the 95% range 0.9203 to 1.0197")
    assert lines[1].endswith("-7.00 standard errors, outside the 95% range 0.9203 to 1.0197")


def test_the_worst_seed_is_the_lowest_share_of_a_reward_and_the_highest_of_a_cost():
    """Market making's rewards are gains (PPO / Cartea-Jaimungal: higher is better); execution's
    are costs (PPO / Almgren-Chriss of negative rewards: higher is worse)."""
    learning = _learning()
    runs = [_run(0, 1.004), _run(1, 1.02), _run(2, 0.99)]
    assert learning.summarise("market-making", runs)["worst_seed"] == {"seed": "2", "value": 0.99}
    assert learning.summarise("execution", runs)["worst_seed"] == {"seed": "1", "value": 1.02}


@pytest.mark.parametrize(
    ("df", "published"), [(1, 12.706), (2, 4.303), (4, 2.776), (9, 2.262), (10, 2.228), (30, 2.042)]
)
def test_the_t_quantile_is_the_published_tables(df, published):
    """Student's t at 0.975, against the printed tables (e.g. Abramowitz and Stegun 26.10)."""
    assert _learning().t_quantile_975(df) == pytest.approx(published, abs=5e-4)


def test_compare_trains_nothing_and_prints_where_a_run_lands(tmp_path, capsys):
    learning = _learning()

    def report(seeds, runs):
        summary = learning.summarise("execution", runs)
        path = tmp_path / f"{seeds}.json"
        results = {"execution": {"summary": summary}}
        path.write_text(json.dumps({"seeds": seeds, "commit": "abc", "results": results}))
        return str(path)

    table = report([0, 1], [_run(0, 1.006), _run(1, 1.010)])
    run = report([7], [_run(7, 1.012)])
    assert learning.main(["--compare", table, run]) == 0
    printed = capsys.readouterr().out
    assert (
        "execution, seed 7: 1.0120 against 1.0080 ± 0.0028: +1.41 standard errors, inside the "
        "95% range 0.9640 to 1.0520" in printed  # 1.008 ± 12.706 x 0.0028 x sqrt(1.5)
    )


def test_the_replay_settings_are_scored_on_windows_after_the_training_hours():
    """Training windows start in the first hours of the replay day; the evaluation's windows
    come after them without sharing a message, every window once; Almgren-Chriss fitted on
    the training hours front-loads the sale (risk aversion > 0), TWAP sells evenly."""
    learning = _learning()
    for name in ("replay-execution", "replay-market-making"):
        setting = learning.SETTINGS[name]
        vec = learning._evaluation_env(setting, 0)
        steps = vec.template.terms.episode_steps
        observations, infos = vec.reset()
        seconds = learning.REPLAY_TRAIN_HOURS * 3600
        first = vec.template.terms.days.first_times[0]
        assert vec.num_envs > 100
        times = np.array([info["timestamp"] for info in infos])
        assert (times - first >= seconds + steps * setting.test["step_seconds"]).all()
        assert setting.train["sampler"].last * setting.train["step_seconds"] < seconds
        if name == "replay-execution":
            twap = setting.baselines["TWAP"](vec)(observations)
            almgren_chriss = setting.baselines["Almgren-Chriss"](vec)(observations)
            assert np.allclose(twap, 1 / steps)
            assert (almgren_chriss > 1 / steps).all() and (almgren_chriss < 1).all()
        vec.close()


def test_the_replay_market_making_reports_the_inventory_it_carries():
    """Quotes kept at the touch get filled on the held-out windows: their mean absolute
    inventory is reported per window, above zero somewhere and never past the 5-lot cap."""
    import sekai

    learning = _learning()
    setting = learning.SETTINGS["replay-market-making"]
    vec = sekai.make_vec(setting.env_id, 16, **learning._made(setting.test))
    policy = setting.baselines["touch quotes"](vec)
    totals, held = learning._baseline_rewards(vec, policy, None, learning._holding(vec, setting))
    assert totals.shape == held.shape == (16,)
    assert held.max() > 0 and (held <= 5).all()
    vec.close()
