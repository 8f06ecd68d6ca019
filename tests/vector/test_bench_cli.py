"""``sekai bench``: measurements, the --compare table, --json, --plot, progress and user errors."""

from __future__ import annotations

import importlib.metadata
import io
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from vector_envs import Drift, DriftVecEnv

import sekai
import sekai.cli
from sekai import registration
from sekai.cli import main
from sekai.registration import EnvSpec
from sekai.vector import bench

FIGURE = r"\d{1,3}(?:,\d{3})*"
SECONDS = "0.05"  # five timed runs of 10 ms: enough to exercise the loop, fast enough for CI


@pytest.fixture
def drift_id() -> Iterator[str]:
    """A tiny env with a native vector version, registered for one test."""
    env_id = "benchtest/Drift-v0"
    registration.register(
        env_id, entry_point=Drift, vector_entry_point=DriftVecEnv, max_episode_steps=20
    )
    yield env_id
    del registration.registry._specs[env_id]


@pytest.fixture
def one_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """--compare runs proc with 1..cores workers; one core keeps the tests short."""
    monkeypatch.setattr(bench, "_cores", lambda: 1)


def _bench_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["bench", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_bench_prints_the_median_min_and_max_of_the_runs(capsys, tmp_path):
    out_file = tmp_path / "figures.json"
    status, out, _ = _bench_cli(
        capsys, "CartPole-v1", "--num-envs", "3", "--mode", "sync", "--seconds", SECONDS,
        "--json", str(out_file),
    )  # fmt: skip
    assert status == 0
    pattern = (
        rf"CartPole-v1: sync, 3 sub-envs: ({FIGURE}) steps/s \(min ({FIGURE}), max ({FIGURE})\)"
    )
    median, low, high = (
        int(x.replace(",", "")) for x in re.fullmatch(pattern, out.strip()).groups()
    )
    assert 0 < low <= median <= high

    figures = json.loads(out_file.read_text())
    assert figures["env_id"] == "CartPole-v1" and figures["seed"] == 0
    (record,) = figures["measurements"]
    assert record["mode"] == "sync" and record["num_envs"] == 3 and record["workers"] is None
    assert len(record["runs"]) == bench.REPEATS
    assert record["min"] == min(record["runs"]) and record["max"] == max(record["runs"])
    assert record["median"] == sorted(record["runs"])[bench.REPEATS // 2]


def test_bench_defaults_to_the_native_env_where_there_is_one(capsys, drift_id):
    status, out, _ = _bench_cli(capsys, drift_id, "--seconds", SECONDS)
    assert status == 0
    assert out.startswith(f"{drift_id}: native (DriftVecEnv), 16 sub-envs: ")


def test_bench_proc_takes_workers(capsys):
    status, out, _ = _bench_cli(
        capsys, "CartPole-v1", "--num-envs", "2", "--mode", "proc", "--workers", "2",
        "--seconds", SECONDS,
    )  # fmt: skip
    assert status == 0
    assert out.startswith("CartPole-v1: proc --workers 2, 2 sub-envs: ")


@pytest.mark.needs("sekai-demo-backend")
def test_bench_takes_a_mode_that_a_plugin_registers(capsys):
    status, out, _ = _bench_cli(
        capsys, "CartPole-v1", "--num-envs", "2", "--mode", "demo-threads", "--seconds", SECONDS
    )
    assert status == 0 and out.startswith("CartPole-v1: demo-threads, 2 sub-envs: ")


def test_the_measured_env_steps_match_the_steps_taken(monkeypatch):
    """A rate counts env steps: num_envs per VecEnv step, one per single-env step."""
    calls = []

    def fake_rate(step, seconds):
        calls.append(step)
        step()
        return 10.0  # calls per second

    monkeypatch.setattr(bench, "_calls_per_second", fake_rate)
    env_spec = registration.spec("CartPole-v1")
    vec = bench.measure(env_spec, bench.Backend("sync", "sync"), 4, 1.0, 0)
    single = bench.measure(env_spec, bench.SINGLE_ENV, 1, 1.0, 0)
    assert vec.rates == (40.0,) * bench.REPEATS
    assert single.rates == (10.0,) * bench.REPEATS
    assert len(calls) == 2 * (1 + bench.REPEATS)  # a warm-up, then the timed runs


class ThreeStepEnv(sekai.Env):
    """Episodes of three steps; stepping a finished episode is an error."""

    def __init__(self) -> None:
        self.observation_space = sekai.Discrete(4)
        self.action_space = sekai.Discrete(2)
        self.resets = 0

    def reset(self, *, seed=None, options=None):
        self.resets += 1
        self.t = 0
        return sekai.ResetResult(0, {})

    def step(self, action):
        if self.t == 3:
            raise RuntimeError("stepped a finished episode")
        self.t += 1
        return sekai.StepResult(self.t, 0.0, self.t == 3, False, {})


def test_the_single_env_is_reset_when_its_episode_ends():
    env = bench._build(EnvSpec("ThreeStep-v0", ThreeStepEnv), bench.SINGLE_ENV, 1)
    step, env_steps = bench._random_stepper(env, bench.SINGLE_ENV, seed=0)
    for _ in range(9):
        step()
    assert env_steps == 1 and env.unwrapped.resets == 1 + 3


def test_compare_prints_every_backend_at_every_num_envs(capsys, tmp_path, drift_id, one_core):
    out_file = tmp_path / "figures.json"
    status, out, err = _bench_cli(
        capsys, drift_id, "--compare", "--num-envs", "2", "8", "--seconds", SECONDS,
        "--json", str(out_file),
    )  # fmt: skip
    assert status == 0
    lines = out.splitlines()
    assert lines[0].startswith(f"{drift_id}: random-action env steps per second on 1 core (load")
    table = lines[lines.index("") + 1 :]
    assert re.split(r"\s{2,}", table[0]) == ["Backend (--mode)", "2 sub-envs", "8 sub-envs"]
    rows = {re.split(r"\s{2,}", line)[0]: re.split(r"\s{2,}", line)[1:] for line in table[1:4]}
    assert list(rows) == ["native (DriftVecEnv)", "sync", "proc --workers 1"]
    assert all(re.fullmatch(FIGURE, cell) for cells in rows.values() for cell in cells)
    ratios = [re.split(r"\s{2,}", line) for line in table[table.index("") + 1 :]]
    assert ratios[0] == ["relative to sync", "2 sub-envs", "8 sub-envs"]
    assert [row[0] for row in ratios[1:3]] == ["native (DriftVecEnv)", "proc --workers 1"]
    assert re.fullmatch(rf"A single {drift_id} env runs {FIGURE} steps per second\.", lines[-1])

    # not a terminal: one plain progress line per measurement, no bar
    assert "\r" not in err and len(err.splitlines()) == 1 + 3 * 2
    assert err.splitlines()[0].startswith("single env: ")

    records = json.loads(out_file.read_text())["measurements"]
    assert [(r["backend"], r["num_envs"]) for r in records] == [
        ("single env", 1),
        *((b, n) for b in ("native (DriftVecEnv)", "sync", "proc --workers 1") for n in (2, 8)),
    ]


@pytest.mark.needs("matplotlib")
def test_compare_plot_draws_a_png(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "_cores", lambda: 1)
    picture = tmp_path / "bench.png"
    status, _, _ = _bench_cli(
        capsys, "CartPole-v1", "--compare", "--num-envs", "2", "4", "--seconds", SECONDS,
        "--plot", str(picture),
    )  # fmt: skip
    assert status == 0
    from matplotlib.image import imread

    pixels = imread(picture)
    assert pixels.shape[0] > 300 and pixels.shape[1] > 500
    colours = np.unique(pixels[..., :3].reshape(-1, 3), axis=0)
    assert len(colours) > 50  # lines, bands, text: not a blank canvas


def test_compare_skips_proc_with_more_workers_than_sub_envs(capsys, monkeypatch):
    monkeypatch.setattr(bench, "_cores", lambda: 2)
    status, out, _ = _bench_cli(
        capsys, "CartPole-v1", "--compare", "--num-envs", "1", "2", "--seconds", SECONDS
    )
    assert status == 0
    row = next(line for line in out.splitlines() if line.startswith("proc --workers 2"))
    assert re.split(r"\s{2,}", row)[1] == "-"


def test_progress_draws_a_bar_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    with bench._Progress(total=4, stream=stream) as progress:
        progress.describe("sync, 16 sub-envs")
        progress.advance()
        progress.report("sync, 16 sub-envs: 1,000 steps/s")
    written = stream.getvalue()
    assert "\r" in written and "sync, 16 sub-envs" in written and "1/4" in written
    assert "sync, 16 sub-envs: 1,000 steps/s\n" in written


def test_the_table_rounds_to_three_significant_digits():
    sync = bench.Backend("sync", "sync")
    table = bench.format_table(
        "X-v0",
        [
            bench.Measurement(sync, 16, (49_123.0,)),
            bench.Measurement(sync, 1024, (1_012_345.0,)),
            bench.Measurement(bench.SINGLE_ENV, 1, (34_049.0,)),
        ],
        seconds=1.0,
    )
    assert "sync                   49,100      1,010,000" in table.splitlines()
    assert table.endswith("A single X-v0 env runs 34,000 steps per second.")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["Nope-v0"], "no env registered with id 'Nope-v0'"),
        (["CartPol-v1"], "CartPole-v1"),  # the close match
        (["CartPole-v1", "--mode", "warp"], "vectorization_mode must be one of"),
        (["CartPole-v1", "--num-envs", "0"], "--num-envs must be at least 1, got 0"),
        (["CartPole-v1", "--seconds", "0"], "--seconds must be a positive number"),
        (["CartPole-v1", "--mode", "sync", "--workers", "2"], "--mode sync does not take"),
        (["CartPole-v1", "--mode", "proc", "--workers", "0"], "--workers must be at least 1"),
        (["CartPole-v1", "--mode", "native"], "no native vector implementation"),
        (["CartPole-v1", "--num-envs", "2", "4"], "several --num-envs values need --compare"),
        (["CartPole-v1", "--compare", "--mode", "sync"], "--compare runs every mode itself"),
        (["CartPole-v1", "--plot", "x.png"], "--plot draws the --compare table"),
        (["CartPole-v1", "--json", "/nonexistent/dir/x.json"], "does not exist"),
        (["CartPole-v1", "--json", "."], "is a directory"),
    ],
)
def test_user_errors_are_one_line_and_exit_2(capsys, args, message):
    short = [] if "--seconds" in args else ["--seconds", SECONDS]
    status, out, err = _bench_cli(capsys, *args, *short)
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("sekai bench: error: "), err
    assert message.lower() in err.lower()


def test_workers_for_a_native_env_are_refused_not_ignored(capsys, drift_id):
    status, _, err = _bench_cli(capsys, drift_id, "--workers", "2", "--seconds", SECONDS)
    assert status == 2 and "--mode native does not take --workers" in err


@pytest.mark.needs("sekai-finance")
@pytest.mark.parametrize("mode", [[], ["--compare"]], ids=["native", "compare"])
def test_a_multi_agent_env_is_refused_in_one_line(capsys, mode):
    status, _, err = _bench_cli(capsys, "LimitOrderBook-v0", *mode, "--seconds", SECONDS)
    assert status == 2 and len(err.splitlines()) == 1
    assert "sekai bench measures single-agent envs; LimitOrderBook-v0 builds a" in err


def test_plot_without_matplotlib_says_what_to_install(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # find_spec sees no matplotlib
    status, _, err = _bench_cli(
        capsys, "CartPole-v1", "--compare", "--plot", str(tmp_path / "b.png")
    )
    assert status == 2 and "pip install 'sekai-vector[plot]'" in err
    assert not (tmp_path / "b.png").exists()


def _without_the_vector_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command line of an install without sekai-vector (nor the meta-distribution)."""
    installed = registration._plugin_entry_points()
    others = [ep for ep in installed if ep.value != "sekai._plugins.vector"]
    assert len(others) == len(installed) - 1
    monkeypatch.setattr(registration, "_plugin_entry_points", lambda: others)
    monkeypatch.setattr(sekai.cli, "registry", registration.Registry())
    real = importlib.metadata.distribution

    def distribution(name: str) -> importlib.metadata.Distribution:
        if name == "sekai":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "distribution", distribution)


def test_bench_is_the_vector_plugins_command(capsys, monkeypatch):
    _without_the_vector_plugin(monkeypatch)
    status, _, err = _bench_cli(capsys, "CartPole-v1")
    assert status == 2 and len(err.splitlines()) == 1
    # sekai-finance, when installed, adds `data`
    assert re.search(r"no command 'bench' \(commands: (data, )?list\)", err), err
    assert "pip install sekai " in err
    assert main(["list", "--json"]) == 0  # the others still work


def test_bench_is_listed_in_the_help(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert re.search(
        r"\n +bench +measure an env's random-action throughput\n", capsys.readouterr().out
    )


def test_a_user_error_from_the_installed_command_has_no_traceback():
    result = subprocess.run(
        [sys.executable, "-m", "sekai", "bench", "Nope-v0"], capture_output=True, text=True
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("sekai bench: error: no env registered with id 'Nope-v0'")
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_an_error_writing_the_figures_is_one_line(capsys, monkeypatch, tmp_path):
    def refuse(self, text):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "write_text", refuse)
    status, _, err = _bench_cli(
        capsys, "CartPole-v1", "--mode", "sync", "--num-envs", "1", "--seconds", SECONDS,
        "--json", str(tmp_path / "x.json"),
    )  # fmt: skip
    assert status == 2 and err.splitlines()[-1].endswith("x.json: Permission denied")
