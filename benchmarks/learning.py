"""Proof that agents learn: SB3's PPO trained through ``sekai.compat.to_sb3`` on native vector
envs, scored against the closed-form optima and the usual baselines (docs/learning.md).

    python benchmarks/learning.py [--quick] [--check] [--seeds 0 ...] [--out learning-results]
                                  [--only NAME ...] [--steps N] [--eval-episodes N]
    python benchmarks/learning.py --compare TABLE.json RUN.json

Settings (``--only`` takes their names):

- ``market-making``: MarketMaking-v0 in the Cartea-Jaimungal setting (running inventory
  penalty phi = 0.1, terminal penalty alpha = 0.5). PPO's mean episode reward over held-out
  seeds as a fraction of the closed-form quotes' (``CarteaJaimungal``) on the same seeds, with
  its standard error; also fixed quotes 1/k on both sides and a random policy. Target >= 0.95.
- ``execution``: OptimalExecution-v0 with risk_aversion 1e-6, so the expected reward is
  Almgren-Chriss's objective. Target: within 2% of ``AlmgrenChriss``, better than ``TWAP``.
- ``trading-googl``, ``trading-eurusd``, ``portfolio-googl``: Trading-v0 and Portfolio-v0 on the
  shipped real bars, trained on the earlier dates and scored on every window of the later ones
  against buy-and-hold (and, for Portfolio-v0, equal weight). No optimum: reported as it falls.
- ``replay-execution``: ReplayExecution-v0 with impact on a replayed day (five hours of the
  Cont-Stoikov-Talreja flow): sell 10 lots in 20 steps of 2 s, trained on windows of the first
  four hours, scored on every other window of the last against TWAP, an immediate sale and
  Almgren-Chriss's schedule fitted on the training hours. Target: PPO ahead of TWAP by more
  than its spread over the seeds.
- ``replay-market-making``: LobsterReplay-v0 with impact on the same day, quoting for 60 s
  with the queue positions in view, against quotes kept at the touch. No target.

Every run is seeded and on CPU with one torch thread. The recipe is SB3's own: the observations
and rewards go through ``VecNormalize`` (its statistics frozen for the evaluation), episodes
through ``VecMonitor`` for the learning curves. It writes ``learning.json`` (the table, the
curves, the settings, the wall time, the load average, the commit) and ``learning.png`` (the
curves; needs matplotlib, the ``plot`` extra) into ``--out``.

Each setting is trained once per seed of ``--seeds``. A trained policy's score depends on its
training seed far more than on the evaluation's episodes, so with several seeds (the docs' table
uses ten) the table gives each figure's mean over the seeds, the worst seed's figure and the 95%
prediction range of a new run's figure (mean ± t(0.975, n - 1) x the standard deviation over
the seeds x sqrt(1 + 1/n)): the reported error, which a run with another seed lands within 19
times in 20. ``--compare`` trains nothing: it prints where a run's figures (its
``learning.json``) land in a table's range.

``--quick`` is the smoke setting CI runs (``nox -s learning``): a small budget, 200
evaluation episodes. ``--check`` exits with status 1 unless PPO beats the random policy by a
clear margin on the two simulated markets. ``--steps`` and ``--eval-episodes`` shrink a run
further (the test suite's smoke test).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

import sekai
from sekai.compat import to_sb3
from sekai.finance import (
    TWAP,
    AlmgrenChriss,
    BuyAndHold,
    CarteaJaimungal,
    DateRange,
    EpisodeSampler,
    EqualWeight,
    datasets,
)
from sekai.finance.lob.flow import ContStoikovTalreja, simulate_flow
from sekai.finance.lob.lobster import record_flow

Policy = Callable[[np.ndarray], np.ndarray]
HELD_OUT = 1_000_000  # evaluation seeds are the training seed plus this: never trained on


@dataclasses.dataclass(frozen=True)
class Setting:
    """One row of the table: an env, how PPO trains on it, and what it is compared with."""

    env_id: str
    train: dict[str, Any]  # the env's kwargs for training
    test: dict[str, Any]  # and for the evaluation (later dates, on real data)
    baselines: dict[str, Callable[[Any], Policy]]  # name -> policy for the evaluation env
    reference: str  # the baseline PPO's score is a fraction of (the optimum, where one exists)
    steps: int  # training steps of the full setting
    ppo: dict[str, Any]  # PPO's hyperparameters besides the defaults
    num_envs: int = 64
    dataset: str | None = None  # the shipped real bars it trades, None: a simulated market
    costs: bool = False  # rewards are costs (negative): a higher ratio to the reference is worse
    holding: str | None = None  # the state attribute of the inventory its evaluation reports

    @property
    def simulated(self) -> bool:
        """A simulated market: seeded episodes, one per evaluation sub-env."""
        return self.dataset is None


def _fixed_quotes(vec: Any) -> Policy:
    """Both sides quoted 1/k from the mid, whatever the inventory: the risk-neutral depth."""
    depth = 1.0 / vec.template.depth_decay
    return lambda observations: np.full((len(observations), 2), depth, np.float32)


def _random(vec: Any) -> Policy:
    """Uniform actions from the env's action space, seeded."""
    space = vec.single_action_space
    space.seed(0)
    return lambda observations: np.stack([space.sample() for _ in observations])


class _Windows(EpisodeSampler):
    """The evaluation's episode starts: sub-env ``i`` starts ``i * stride`` bars after the first
    start the date range allows, so the evaluation sub-envs cover its windows once each.
    ``count`` is the number of windows, known once an env has drawn from it."""

    def __init__(self, stride: int) -> None:
        self.stride = stride
        self.count = 0

    def sample(
        self, rng: np.random.Generator, first: int, last: int, episode_length: int, size: int
    ) -> np.ndarray:
        self.count = (last - first) // self.stride + 1
        return np.minimum(first + self.stride * np.arange(size, dtype=np.int64), last)


def _dated(name: str, env_id: str, split: str, stride: int, **kwargs: Any) -> dict[str, Any]:
    """Train and test kwargs on dataset ``name``, split at date ``split``."""
    bars = datasets.load(name)
    data = {name: bars} if env_id == "Portfolio-v0" else bars
    common = {"data": data, **kwargs}
    train = {**common, "sampler": DateRange(end=split)}
    test = {**common, "sampler": DateRange(start=split, inner=_Windows(stride))}
    return {"train": train, "test": test, "dataset": name}


class _Starts(EpisodeSampler):
    """Episode starts of a replayed day between steps ``first`` and ``last``: drawn at random
    (training), or with ``stride`` every ``stride``-th start, sub-env ``i`` the ``i``-th, so
    the evaluation's sub-envs cover those windows once each. ``count`` is the number of such
    windows, known once an env has drawn from it."""

    def __init__(self, first: int, last: int, stride: int | None = None) -> None:
        self.first, self.last, self.stride = first, last, stride
        self.count = 0

    def __repr__(self) -> str:
        return f"_Starts({self.first}, {self.last}, stride={self.stride})"

    def sample(
        self, rng: np.random.Generator, first: int, last: int, episode_length: int, size: int
    ) -> np.ndarray:
        low, high = max(first, self.first), min(last, self.last)
        if self.stride is None:
            return rng.integers(low, high + 1, size)
        self.count = (high - low) // self.stride + 1
        return np.minimum(low + self.stride * np.arange(size, dtype=np.int64), high)


REPLAY_HOURS, REPLAY_TRAIN_HOURS = 5, 4


@functools.cache
def _replay_day() -> np.ndarray:
    """The replay settings' day: five hours of the Cont-Stoikov-Talreja flow (seed 0) recorded
    as LOBSTER messages, as LobsterReplay-v0's default hour is."""
    flow = simulate_flow(ContStoikovTalreja(), REPLAY_HOURS * 3600.0, n_ticks=2000, seed=0)
    return record_flow(flow, n_ticks=2000)


def _replayed(step_seconds: float, episode_steps: int, stride: int, **kwargs: Any) -> dict:
    """Train and test kwargs on the replay day: training windows start in its first
    REPLAY_TRAIN_HOURS hours, the evaluation's every ``stride`` steps from the first window
    that shares no message with a training window."""
    split = int(REPLAY_TRAIN_HOURS * 3600 / step_seconds)
    common = {"step_seconds": step_seconds, "episode_steps": episode_steps, **kwargs}
    train = {**common, "sampler": _Starts(0, split - 1)}
    test = {**common, "sampler": _Starts(split + episode_steps, 10**9, stride)}
    return {"train": train, "test": test, "dataset": "Cont-Stoikov-Talreja day (5 h, seed 0)"}


def _twap_sell(vec: Any) -> Policy:
    """An equal part of the block every step: of what is held, 1 / the steps left."""
    steps = vec.template.terms.episode_steps
    return lambda observations: (1.0 / np.maximum(np.rint(observations[:, 1] * steps), 1))[
        :, None
    ].astype(np.float32)


def _immediate_sell(vec: Any) -> Policy:
    """The whole block at market in the first step."""
    return lambda observations: np.ones((len(observations), 1), np.float32)


REPLAY_RISK_AVERSION = 1.0  # per dollar: Almgren-Chriss's lambda on the replay


def _fitted_almgren_chriss(vec: Any) -> Policy:
    """Almgren-Chriss's schedule (``AlmgrenChriss``, a step as its time unit, no permanent
    impact) with the mid's volatility per step and the temporary impact fitted on the
    training hours: at every step of them, the cost per lot of selling x lots at once into
    the book (x = 1 .. the block) against the mid, a line in x whose slope is eta."""
    terms, block = vec.template.terms, vec.template.block
    days, price = terms.days, terms.market.price(np.arange(terms.days.n_ticks))
    grid = days.first_times[0] + terms.step_seconds * np.arange(
        int(REPLAY_TRAIN_HOURS * 3600 / terms.step_seconds)
    )
    rows = days.after(np.zeros(len(grid), np.int64), grid)
    best = days.best[rows]
    mid = (price[np.maximum(best[:, 0], 0)] + price[np.maximum(best[:, 1], 0)]) / 2
    both = (best >= 0).all(axis=1)
    sigma = float(np.diff(mid)[both[1:] & both[:-1]].std())
    top = days.top[rows[both], 0]  # (m, levels, tick / lots): the bids
    lots = top[:, :, 1]
    before = np.cumsum(lots, axis=1) - lots
    per_lot = []
    for x in range(1, block + 1):
        take = np.clip(x - before, 0, lots)
        whole = take.sum(axis=1) == x  # the levels shown hold x lots
        paid = (mid[both][:, None] - price[np.maximum(top[:, :, 0], 0)]) * take
        per_lot.append(paid.sum(axis=1)[whole].mean() / x)
    eta = float(np.polyfit(np.arange(1, block + 1), per_lot, 1)[0])
    schedule = AlmgrenChriss(1.0, sigma, eta, 0.0, REPLAY_RISK_AVERSION)
    steps = terms.episode_steps

    def act(observations: np.ndarray) -> np.ndarray:
        left = np.rint(observations[:, 1] * steps)
        return schedule(np.column_stack([observations[:, 0], left]))

    return act


def _touch_quotes(vec: Any) -> Policy:
    """A bid at the best bid and an ask at the best ask, kept while they stay there: join,
    join, no market order."""
    return lambda observations: np.tile(np.array([3, 3, 0]), (len(observations), 1))


MARKET_MAKING = {"inventory_penalty": 0.1, "terminal_penalty": 0.5}
EXECUTION = {"risk_aversion": 1e-6}
REPLAY_PPO = {"gamma": 1.0, "n_steps": 128, "batch_size": 1024, "learning_rate": 3e-4}
SIMULATED_PPO = {"gamma": 1.0, "n_steps": 256, "batch_size": 2048, "learning_rate": 3e-4}

SETTINGS: dict[str, Setting] = {
    "market-making": Setting(
        "MarketMaking-v0",
        MARKET_MAKING,
        MARKET_MAKING,
        {
            "Cartea-Jaimungal": CarteaJaimungal.for_env,
            "fixed 1/k": _fixed_quotes,
            "random": _random,
        },
        reference="Cartea-Jaimungal",
        steps=2_000_000,
        ppo=SIMULATED_PPO,
    ),
    "execution": Setting(
        "OptimalExecution-v0",
        EXECUTION,
        EXECUTION,
        {"Almgren-Chriss": AlmgrenChriss.for_env, "TWAP": TWAP.for_env, "random": _random},
        reference="Almgren-Chriss",
        costs=True,
        steps=2_000_000,
        ppo={**SIMULATED_PPO, "gae_lambda": 1.0, "policy_kwargs": {"log_std_init": -2.0}},
    ),
    "trading-googl": Setting(
        "Trading-v0",
        **_dated("GOOGL", "Trading-v0", "2016-01-01", 1, episode_length=63),
        baselines={
            "buy and hold": lambda vec: BuyAndHold(vec.single_action_space),
            "random": _random,
        },
        reference="buy and hold",
        steps=500_000,
        ppo={"gamma": 1.0, "n_steps": 128, "batch_size": 1024, "ent_coef": 0.01},
    ),
    "trading-eurusd": Setting(
        "Trading-v0",
        **_dated("EURUSD", "Trading-v0", "2017-10-01", 4, episode_length=120, allow_short=True),
        baselines={
            "buy and hold": lambda vec: BuyAndHold(vec.single_action_space),
            "random": _random,
        },
        reference="buy and hold",
        steps=500_000,
        ppo={"gamma": 1.0, "n_steps": 128, "batch_size": 1024, "ent_coef": 0.01},
    ),
    "portfolio-googl": Setting(
        "Portfolio-v0",
        **_dated("GOOGL", "Portfolio-v0", "2016-01-01", 1, episode_length=63),
        baselines={
            "buy and hold": lambda vec: BuyAndHold(vec.single_action_space),
            "equal weight": lambda vec: EqualWeight(vec.single_action_space),
            "random": _random,
        },
        reference="buy and hold",
        steps=500_000,
        ppo={"gamma": 1.0, "n_steps": 128, "batch_size": 1024},
    ),
    "replay-execution": Setting(
        "ReplayExecution-v0",
        **_replayed(2.0, 20, 2, messages=_replay_day, block=10),
        baselines={
            "TWAP": _twap_sell,
            "immediate": _immediate_sell,
            "Almgren-Chriss": _fitted_almgren_chriss,
            "random": _random,
        },
        reference="TWAP",
        costs=True,
        steps=500_000,
        ppo={**REPLAY_PPO, "policy_kwargs": {"log_std_init": -1.5}},
    ),
    "replay-market-making": Setting(
        "LobsterReplay-v0",
        **_replayed(1.0, 60, 4, messages=_replay_day, impact=True, max_inventory=5),
        baselines={"touch quotes": _touch_quotes, "random": _random},
        reference="touch quotes",
        holding="inventory",
        steps=1_000_000,
        ppo=REPLAY_PPO,
    ),
}
QUICK_STEPS = {True: 150_000, False: 50_000}  # simulated, real data
QUICK_EVAL_EPISODES = 200
FULL_EVAL_EPISODES = 1000


class _Progress(BaseCallback):
    """A progress bar on a terminal, a line per tenth otherwise; records the learning curve:
    the mean reward of the episodes finished in each rollout (VecMonitor's, unnormalised)."""

    def __init__(self, name: str, total: int) -> None:
        super().__init__()
        self.name, self.total = name, total
        self.curve: list[tuple[int, float]] = []
        self.start = time.perf_counter()
        self.tty = sys.stdout.isatty()
        self.printed = 0

    def _on_step(self) -> bool:
        return True

    def _on_rollout_end(self) -> None:
        episodes = [info["r"] for info in self.model.ep_info_buffer]
        if episodes:
            self.curve.append((self.num_timesteps, float(np.mean(episodes))))
        self.model.ep_info_buffer.clear()
        done = min(self.num_timesteps / self.total, 1.0)
        elapsed = time.perf_counter() - self.start
        recent = f"{self.curve[-1][1]:.4g}" if self.curve else "-"
        line = f"{self.name:16} {done:4.0%} {self.num_timesteps:>9,} steps {elapsed:6.0f} s"
        line += f"  episode reward {recent}"
        if self.tty:
            bar = "#" * int(30 * done)
            print(f"\r[{bar:30}] {line}", end="", flush=True)
        elif int(10 * done) > self.printed or done == 1.0:
            self.printed = int(10 * done)
            print(line, flush=True)


def _first_episodes(
    observations: np.ndarray, step: Callable, policy: Policy, holding: Callable | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """Each sub-env's first episode's total reward under ``policy``; ``step(actions)`` returns
    the observations, rewards and dones. With ``holding`` (every sub-env's inventory now), also
    each episode's mean absolute inventory over its steps."""
    totals = np.zeros(len(observations))
    held, steps = np.zeros(len(observations)), np.zeros(len(observations))
    running = np.ones(len(observations), dtype=bool)
    while running.any():
        observations, rewards, dones = step(policy(observations))
        totals += np.where(running, rewards, 0.0)
        if holding is not None:
            held += np.where(running, np.abs(holding()), 0.0)
            steps += running
        running &= ~dones
    return totals, (held / steps if holding is not None else None)


def _holding(vec: Any, setting: Setting) -> Callable | None:
    """The evaluation env's inventories, for a setting that reports them."""
    return None if setting.holding is None else lambda: getattr(vec, setting.holding)


def _baseline_rewards(
    vec: Any, policy: Policy, seed: int | None, holding: Callable | None = None
) -> tuple[np.ndarray, np.ndarray | None]:
    """A baseline on the native env; sub-env ``i`` seeded ``seed + i``, as SB3 seeds them."""
    seeds = None if seed is None else [seed + i for i in range(vec.num_envs)]

    def step(actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        result = vec.step(actions)
        return result.observations, result.rewards, result.terminated | result.truncated

    return _first_episodes(vec.reset(seed=seeds).observations, step, policy, holding)


def _ppo_rewards(
    model: PPO,
    normalize: VecNormalize,
    vec: Any,
    seed: int | None,
    holding: Callable | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """PPO's deterministic policy on the same markets, through ``to_sb3`` as in training (its
    action mapping included) and the training's normalisation, frozen."""
    env = to_sb3(vec)
    if seed is not None:
        env.seed(seed)

    def act(observations: np.ndarray) -> np.ndarray:
        return model.predict(normalize.normalize_obs(observations), deterministic=True)[0]

    return _first_episodes(env.reset(), lambda actions: env.step(actions)[:3], act, holding)


def _evaluation_env(setting: Setting, episodes: int) -> Any:
    """The native vector env of the evaluation: ``episodes`` simulated markets, or every
    window of the test dates (one per sub-env, so as many sub-envs as windows)."""
    test = _made(setting.test)
    if setting.simulated:
        return sekai.make_vec(setting.env_id, episodes, **test)
    probe = sekai.make(setting.env_id, **test)
    probe.reset()  # the windows sampler learns how many windows the dates allow
    probe.close()
    windows = getattr(test["sampler"], "inner", test["sampler"])
    return sekai.make_vec(setting.env_id, windows.count, **test)


def _paired(ppo: np.ndarray, reference: np.ndarray) -> tuple[float, float]:
    """PPO's mean over the reference's on the same episodes, and its standard error (the delta
    method on the paired episodes)."""
    ratio = ppo.mean() / reference.mean()
    residual = ppo - ratio * reference
    return float(ratio), float(residual.std(ddof=1) / (np.sqrt(len(ppo)) * abs(reference.mean())))


def _made(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Env kwargs with the replay day made: ``messages`` given as the function that makes it,
    so that the settings cost nothing until one of them runs."""
    messages = kwargs.get("messages")
    return {**kwargs, "messages": messages()} if callable(messages) else kwargs


def run_setting(name: str, setting: Setting, seed: int, steps: int, episodes: int) -> dict:
    """Train PPO on one setting, evaluate it and the baselines; the row of the table."""
    start = time.perf_counter()
    vec = sekai.make_vec(setting.env_id, setting.num_envs, **_made(setting.train))
    gamma = setting.ppo.get("gamma", 0.99)
    env = VecNormalize(VecMonitor(to_sb3(vec)), gamma=gamma)
    env.seed(seed)
    model = PPO("MlpPolicy", env, seed=seed, device="cpu", verbose=0, **setting.ppo)
    progress = _Progress(name, steps)
    model.learn(total_timesteps=steps, callback=progress)
    if progress.tty:
        print()
    env.training = False
    trained = time.perf_counter() - start
    evaluation = _evaluation_env(setting, episodes)
    eval_seed = seed + HELD_OUT if setting.simulated else None
    holding = _holding(evaluation, setting)
    rewards, held = {}, {}
    rewards["PPO"], held["PPO"] = _ppo_rewards(model, env, evaluation, eval_seed, holding)
    for label, make in setting.baselines.items():
        policy = make(evaluation)
        rewards[label], held[label] = _baseline_rewards(evaluation, policy, eval_seed, holding)
    evaluation.close()
    env.close()
    ratio, ratio_se = _paired(rewards["PPO"], rewards[setting.reference])
    scores = {
        label: {
            "mean": float(r.mean()),
            "standard_error": float(r.std(ddof=1) / np.sqrt(len(r))),
        }
        for label, r in rewards.items()
    }
    difference = rewards["PPO"] - rewards["random"]
    return {
        "seed": seed,
        "env_id": setting.env_id,
        "dataset": setting.dataset,
        "env_kwargs": _describe(setting.train),
        "evaluation_kwargs": _describe(setting.test),
        "training_steps": steps,
        "num_envs": setting.num_envs,
        "ppo": setting.ppo,
        "evaluation_episodes": len(rewards["PPO"]),
        "evaluation_seed": eval_seed,
        "scores": scores,
        "reference": setting.reference,
        "ratio_to_reference": ratio,
        "ratio_standard_error": ratio_se,
        "wins_over_reference": float(np.mean(rewards["PPO"] > rewards[setting.reference])),
        "margin_over_random_in_standard_errors": float(
            difference.mean() / (difference.std(ddof=1) / np.sqrt(len(difference)))
        ),
        "mean_absolute_inventory": {
            label: float(h.mean()) for label, h in held.items() if h is not None
        },
        "curve": progress.curve,
        "train_seconds": trained,
        "seconds": time.perf_counter() - start,
    }


def _describe(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Env kwargs as JSON: objects by their repr, the data left out (``dataset`` names it)."""
    return {
        key: value if isinstance(value, int | float | str | bool) else repr(value)
        for key, value in kwargs.items()
        if key not in ("data", "messages")
    }


def _commit() -> str:
    """The commit the run is on, marked ``-dirty`` with uncommitted changes."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if status.strip() else "")


def headline(name: str, row: dict) -> tuple[float, float]:
    """One run's headline figure and its evaluation's standard error: on a simulated market
    PPO's fraction of the reference's score, on real data PPO's lead over the reference."""
    if SETTINGS[name].simulated:
        return row["ratio_to_reference"], row["ratio_standard_error"]
    scores = row["scores"]
    lead = scores["PPO"]["mean"] - scores[row["reference"]]["mean"]
    return lead, scores["PPO"]["standard_error"]


def summarise(name: str, runs: list[dict]) -> dict:
    """A setting's figure over its runs (one per training seed): the mean, the standard error
    of one run's figure (the standard deviation over the seeds; with one seed, the evaluation's
    standard error), the worst seed, and the 95% prediction range of a new run's figure (the
    mean ± t(0.975, n - 1) sd sqrt(1 + 1/n), Student's t: the reported error)."""
    values = np.array([headline(name, row)[0] for row in runs])
    n = len(runs)
    if n > 1:
        spread = float(values.std(ddof=1))
        source = f"standard deviation over {n} training seeds"
        half_width = t_quantile_975(n - 1) * spread * np.sqrt(1 + 1 / n)
    else:
        spread = headline(name, runs[0])[1]
        source = "the evaluation's standard error (one training seed)"
        half_width = float("nan")  # no spread over seeds to predict from
    # a cost ratio is worst at its highest; a lead over the reference at its lowest
    worst = int(
        np.argmax(values)
        if SETTINGS[name].costs and SETTINGS[name].simulated
        else np.argmin(values)
    )
    return {
        "measure": "PPO / reference" if SETTINGS[name].simulated else "PPO - reference",
        "mean": float(values.mean()),
        "standard_error": spread,
        "standard_error_of_mean": spread / np.sqrt(n),
        "standard_error_is": source,
        "prediction_range": [float(values.mean() - half_width), float(values.mean() + half_width)],
        "worst_seed": {"seed": str(runs[worst]["seed"]), "value": float(values[worst])},
        "per_seed": {str(row["seed"]): float(v) for row, v in zip(runs, values, strict=True)},
    }


def t_quantile_975(df: int) -> float:
    """Student's t quantile of probability 0.975 with ``df`` degrees of freedom: the t with
    P(|T| <= t) = 0.95, by bisection on the exact finite series of Abramowitz and Stegun
    26.7.3 and 26.7.4 for integer ``df``."""
    if df < 1:
        raise ValueError(f"df must be at least 1, got {df}")

    def central(t: float) -> float:  # P(|T| <= t)
        theta = np.arctan(t / np.sqrt(df))
        c2, term = np.cos(theta) ** 2, 1.0
        if df % 2:  # odd: (2/pi)(theta + sin cos (1 + 2/3 cos^2 + 2.4/(3.5) cos^4 ...))
            total = 0.0
            if df > 1:
                total = term
                for k in range(1, (df - 1) // 2):
                    term *= c2 * (2 * k) / (2 * k + 1)
                    total += term
            return float(2 / np.pi * (theta + np.sin(theta) * np.cos(theta) * total))
        total = term  # even: sin (1 + 1/2 cos^2 + 1.3/(2.4) cos^4 ...)
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        return float(np.sin(theta) * total)

    low, high = 0.0, 1000.0
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if central(middle) < 0.95 else (low, middle)
    return (low + high) / 2


def _mean_score(runs: list[dict], label: str) -> float:
    return float(np.mean([row["scores"][label]["mean"] for row in runs]))


def table(results: dict[str, dict]) -> str:
    """The results as a Markdown table: each setting's mean episode reward for PPO and the
    baselines (averaged over the seeds); on a simulated market PPO's fraction of the optimum's,
    on real data PPO's lead over buy-and-hold: the mean over the seeds, the 95% range of a new
    run's figure (with one seed, ± its evaluation's standard error) and the worst seed's."""
    lines = [
        "| Setting | PPO | Baselines | PPO against the reference |",
        "| --- | --- | --- | --- |",
    ]
    for name, result in results.items():
        runs, summary = result["runs"], result["summary"]
        rewards = np.array([row["scores"]["PPO"]["mean"] for row in runs])
        spread = (
            rewards.std(ddof=1) if len(runs) > 1 else runs[0]["scores"]["PPO"]["standard_error"]
        )
        labels = [label for label in runs[0]["scores"] if label != "PPO"]
        others = ", ".join(f"{label} {_mean_score(runs, label):.4g}" for label in labels)
        reference = runs[0]["reference"]
        sign = "" if SETTINGS[name].simulated else "+"
        figure = f"{summary['mean']:{sign}.4f}"
        if len(runs) > 1:
            low, high = summary["prediction_range"]
            worst = summary["worst_seed"]["value"]
            figure += f" (95% range {low:{sign}.4f} to {high:{sign}.4f}; worst {worst:{sign}.4f})"
        else:
            figure += f" ± {summary['standard_error']:.4f}"
        if SETTINGS[name].simulated:
            versus = f"{figure} of {reference}'s"
        else:
            wins = np.mean([row["wins_over_reference"] for row in runs])
            versus = (
                f"{figure} over {reference}, ahead in {wins:.0%} of "
                f"{runs[0]['evaluation_episodes']} windows"
            )
        lines.append(f"| {name} | {rewards.mean():.4g} ± {spread:.2g} | {others} | {versus} |")
    return "\n".join(lines)


def seeds_table(results: dict[str, dict]) -> str:
    """Each seed's figure, setting by setting, as a Markdown table, with the mean, the
    standard deviation over the seeds and the 95% range of a new run's figure."""
    seeds = list(next(iter(results.values()))["summary"]["per_seed"])
    lines = [
        "| Setting | "
        + " | ".join(f"seed {seed}" for seed in seeds)
        + " | mean ± sd | 95% range of a new run |",
        "| --- |" + " --- |" * (len(seeds) + 2),
    ]
    for name, result in results.items():
        summary = result["summary"]
        cells = " | ".join(f"{summary['per_seed'][seed]:.4f}" for seed in seeds)
        low, high = summary["prediction_range"]
        lines.append(
            f"| {name}: {summary['measure']} | {cells} | "
            f"{summary['mean']:.4f} ± {summary['standard_error']:.4f} | {low:.4f} to {high:.4f} |"
        )
    return "\n".join(lines)


def compare(results: dict[str, dict], earlier: dict) -> list[str]:
    """Where each of this run's figures lands against an earlier run's table: how many of its
    standard errors (of one run's figure) from its mean, and whether inside its 95% range of a
    new run's figure (the reported error)."""
    lines = []
    for name, result in results.items():
        if name not in earlier["results"]:
            continue
        before = earlier["results"][name]["summary"]
        low, high = before["prediction_range"]
        for seed, value in result["summary"]["per_seed"].items():
            distance = (value - before["mean"]) / before["standard_error"]
            where = "inside" if low <= value <= high else "outside"
            lines.append(
                f"{name}, seed {seed}: {value:.4f} against {before['mean']:.4f} ± "
                f"{before['standard_error']:.4f}: {distance:+.2f} standard errors, {where} "
                f"the 95% range {low:.4f} to {high:.4f}"
            )
    return lines


def plot(results: dict[str, dict], path: Path) -> bool:
    """The learning curves, one panel per setting (one curve per seed), the scores averaged
    over the seeds as lines; False (and nothing written) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    columns = min(len(results), 3)
    rows = -(-len(results) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4.4 * columns, 3.4 * rows), squeeze=False)
    for axis in axes.flat[len(results) :]:
        axis.set_visible(False)
    for axis, (name, result) in zip(axes.flat, results.items(), strict=False):
        runs = result["runs"]
        when = "evaluation" if SETTINGS[name].simulated else "later dates"
        for i, row in enumerate(runs):
            if row["curve"]:
                steps, rewards = zip(*row["curve"], strict=True)
                label = "PPO (training episodes)" if i == 0 else None
                axis.plot(steps, rewards, label=label, color="black", alpha=1 / len(runs) ** 0.5)
        axis.axhline(_mean_score(runs, "PPO"), color="black", linestyle=":", label=f"PPO ({when})")
        for label in runs[0]["scores"]:
            if label not in ("PPO", "random"):
                axis.axhline(
                    _mean_score(runs, label), linestyle="--", linewidth=1, label=f"{label} ({when})"
                )
        axis.set_title(f"{name} ({runs[0]['env_id']})", fontsize=9)
        axis.set_xlabel("training steps", fontsize=8)
        axis.tick_params(labelsize=7)
        axis.legend(fontsize=7)
    for axis in axes[:, 0]:
        axis.set_ylabel("mean episode reward", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the smoke setting CI runs")
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[0], help="training seeds (default: 0)"
    )
    parser.add_argument("--out", type=Path, default=Path("learning-results"))
    parser.add_argument("--only", nargs="+", choices=list(SETTINGS), help="these settings")
    parser.add_argument("--check", action="store_true", help="fail unless PPO beats random")
    parser.add_argument("--steps", type=int, help="training steps of every setting")
    parser.add_argument("--eval-episodes", type=int, help="evaluation episodes (simulated)")
    parser.add_argument(
        "--compare",
        type=Path,
        nargs=2,
        metavar=("TABLE", "RUN"),
        help="train nothing: where RUN's figures land in TABLE's (two learning.json files)",
    )
    args = parser.parse_args(argv)
    if args.compare:
        table_run, run = (json.loads(path.read_text()) for path in args.compare)
        print(f"{args.compare[1]} (seeds {run['seeds']}, commit {run['commit']}) against")
        print(f"{args.compare[0]} (seeds {table_run['seeds']}, commit {table_run['commit']}):")
        print("\n".join(compare(run["results"], table_run)))
        return 0
    if len(set(args.seeds)) < len(args.seeds):
        parser.error(f"--seeds repeats a seed: {args.seeds}")
    torch.set_num_threads(1)  # a shared 2-core machine: more threads only contend
    names = args.only or list(SETTINGS)
    episodes = args.eval_episodes or (QUICK_EVAL_EPISODES if args.quick else FULL_EVAL_EPISODES)
    load_before = os.getloadavg()
    setting_name = "quick" if args.quick else "full"
    print(f"{setting_name} setting, seeds {args.seeds}, load {load_before}")
    start = time.perf_counter()
    results = {}
    for name in names:
        setting = SETTINGS[name]
        steps = args.steps or (QUICK_STEPS[setting.simulated] if args.quick else setting.steps)
        runs = [run_setting(name, setting, seed, steps, episodes) for seed in args.seeds]
        results[name] = {"runs": runs, "summary": summarise(name, runs)}
    seconds = time.perf_counter() - start
    report = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "commit": _commit(),
        "setting": setting_name,
        "seeds": args.seeds,
        "seconds": seconds,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "versions": {"sekai": sekai.__version__, "torch": torch.__version__},
        "results": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "learning.json").write_text(json.dumps(report, indent=1) + "\n")
    print(table(results))
    if len(args.seeds) > 1:
        print(seeds_table(results))
    print(f"{seconds:.0f} s in all; load average {os.getloadavg()}; wrote {args.out}/learning.json")
    if plot(results, args.out / "learning.png"):
        print(f"wrote {args.out}/learning.png")
    else:
        print("no learning.png: matplotlib is not installed (pip install 'sekai[plot]')")
    return _check(results) if args.check else 0


def _check(results: dict[str, dict]) -> int:
    """The quick setting's check: on the simulated markets PPO beats the random policy, with
    every seed, by at least 5 standard errors of the paired difference and by a tenth of the
    reference's scale."""
    failed = []
    for name, result in results.items():
        if not SETTINGS[name].simulated:
            continue
        for row in result["runs"]:
            scores = row["scores"]
            gap = scores["PPO"]["mean"] - scores["random"]["mean"]
            scale = abs(scores[row["reference"]]["mean"])
            if row["margin_over_random_in_standard_errors"] < 5 or gap < 0.1 * scale:
                failed.append(
                    f"{name}, seed {row['seed']}: PPO {scores['PPO']['mean']:.6g} "
                    f"vs random {scores['random']['mean']:.6g}"
                )
    for line in failed:
        print(f"PPO does not clearly beat random: {line}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
