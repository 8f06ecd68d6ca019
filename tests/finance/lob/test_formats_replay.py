"""LobsterReplay-v0 on the same synthetic day as LOBSTER, ITCH 5.0 and Databento MBO files: the
same trajectories for the same actions, in the single env and in a native batch of 1,024
windows made with make_vec (issue 34: each format end to end)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from synthetic_formats import (
    DATE,
    SYMBOL,
    itch_name,
    synthetic_day,
    write_dbn_mbo,
    write_itch,
    write_lobster,
)

import sekai
from sekai.envs.finance.lobster_replay import LobsterReplayEnv
from sekai.finance.lob.events import HALT

KWARGS = dict(step_seconds=1.0, episode_steps=60, entry_latency=0.001, data_latency=0.01)
WINDOWS = 1024


def _files(folder: Path, events: np.ndarray, formats: tuple[str, ...]) -> dict[str, Path]:
    writers = {
        "lobster": lambda: write_lobster(events, folder, SYMBOL, DATE),
        "itch": lambda: write_itch(events, folder / itch_name(DATE), SYMBOL),
        "dbn": lambda: write_dbn_mbo(events, folder / f"{SYMBOL}.mbo.dbn", SYMBOL, DATE),
    }
    return {fmt: writers[fmt]() for fmt in formats}


def _trajectory(env: LobsterReplayEnv, seed: int, steps: int) -> list[tuple[float, ...]]:
    """Observations and rewards of ``steps`` random actions from ``reset(seed=seed)``."""
    rng = np.random.default_rng(seed)
    observation, _ = env.reset(seed=seed)
    out = [tuple(observation)]
    for _ in range(steps):
        result = env.step(rng.integers(0, [6, 6, 3]))
        out.append((*result.observation, result.reward, result.info["fills"]))
    return out


def test_lobster_and_itch_files_of_a_day_with_a_halt_give_the_same_trajectories(tmp_path):
    events = synthetic_day(seed=0)
    assert (events["kind"] == HALT).any()
    paths = _files(tmp_path, events, ("lobster", "itch"))
    envs = [LobsterReplayEnv(paths[f], symbol=SYMBOL, **KWARGS) for f in ("lobster", "itch")]
    from_events = LobsterReplayEnv(events, **KWARGS)
    for seed in range(3):
        expected = _trajectory(from_events, seed, 60)
        assert all(_trajectory(env, seed, 60) == expected for env in envs), seed


@pytest.mark.needs("databento-dbn", "sekai-vector")
def test_every_format_runs_a_batch_of_1024_windows_with_the_same_trajectories(tmp_path):
    """Databento's MBO carries no halts (its status schema does): the day here has none, so
    all three files hold the same book events."""
    events = synthetic_day(seed=1)
    events = events[events["kind"] != HALT]
    paths = _files(tmp_path, events, ("lobster", "itch", "dbn"))
    results = {}
    for fmt, path in paths.items():
        vec = sekai.make_vec("LobsterReplay-v0", WINDOWS, messages=path, symbol=SYMBOL, **KWARGS)
        assert type(vec).__name__ == "LobsterReplayVecEnv"
        rng = np.random.default_rng(0)
        observations, _ = vec.reset(seed=0)
        steps = [observations]
        for _ in range(30):
            result = vec.step(rng.integers(0, [6, 6, 3], size=(WINDOWS, 3)))
            fills = np.array([info["fills"] for info in result.infos])
            steps += [result.observations, result.rewards, fills]
        results[fmt] = steps
        vec.close()
    fills = np.sum([s.sum() for s in results["lobster"][3::3]])
    assert fills > 0  # the agents traded: the comparison covers the queues
    for fmt in ("itch", "dbn"):
        for k, (a, b) in enumerate(zip(results[fmt], results["lobster"], strict=True)):
            assert np.array_equal(a, b), (fmt, k)
