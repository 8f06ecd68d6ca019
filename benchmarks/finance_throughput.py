"""Finance env throughput and memory, measured in one run so the ratios compare like with like.

    python benchmarks/finance_throughput.py [--seconds 1] [--rounds 3] [--quick] [--only abch]
    python benchmarks/finance_throughput.py --issue24 [--quick] [--runs 3] [--write-docs PAGE]

(a) Every registered finance env with a native version: native against SyncVecEnv at 16 and
    1024 sub-envs (targets: PortfolioVecEnv >= 5x at 16 and >= 50x at 1024, the others >= 30x at
    1024).
(b) PortfolioVecEnv at 1024 and 16,384 sub-envs against the same arithmetic as a bare numpy
    loop with no API around it (targets: >= 0.6 and >= 0.8 of its steps/s), and against that
    loop without the episode figures and resets (the issue's independent loop, which did less
    work); the native env builds infos lazily and the caller here never reads them.
(c) How cost grows: native steps/s at 1 to 16,384 sub-envs (target: no fall past 1024).
(d) Memory: TradingVecEnv with 16,384 sub-envs on one million bars, stepped 1,000 times: the RSS
    added beyond the history (target: under 100 MB).
(e) Single envs: Trading-v0 against gym-trading-env's TradingEnv and gym-anytrading's stocks-v0
    on the same prices (GOOGL daily closes) and window (30 bars) (targets: >= 3x and >= 1x).
    The other libraries are benchmark-only installs, never dependencies:
    uv venv /tmp/bench && uv pip install --python /tmp/bench -e packages/sekai-core \\
        -e packages/sekai-vector -e packages/sekai-finance gym-anytrading gym-trading-env
(f) Every finance single env (as ``sekai.make`` gives it) against gymnasium's CartPole-v1 (as
    ``gymnasium.make`` gives it) in one race (target: Portfolio-v0, MarketMaking-v0 and
    OptimalExecution-v0 each >= 0.4x CartPole).
(g) The ratios native / sync at 16 sub-envs of (a) in one table (target: every env >= 1.5x).
(h) What bounds PortfolioVecEnv at 16,384 sub-envs: its steps/s with lookback windows of 1, 10
    and 40 bars, each step's time expressed as bytes at numpy's copy bandwidth, next to the
    bytes the window moves.

``--issue24`` measures only the ratios of issue 24's targets (single envs / CartPole, native /
sync at 16, PortfolioVecEnv / bare loop at 16,384, proc with 2 workers / sync at 256 on
Portfolio-v0: the issue's, with single envs in the workers, and make_vec's, whose workers each
step their share as one native env) and the no-regression ones (CartPole-v1 SyncVecEnv /
gymnasium's at 16, the docs' Drift native / bare loop at 1024, Portfolio-v0 native / sync at
1024), each with its target and PASS or FAIL; ``--quick`` makes a run take about half a
minute, ``--runs 3`` makes three runs in a row (the exit status is 1 unless all pass).
``--write-docs docs/performance.md`` puts the runs' table between the page's markers, and
refuses (exit status 2) when the 1-minute load average is over 1.5, before the runs or after
them.

The load average (``os.getloadavg()``) is printed with every section: the machine may be shared,
and a ratio measured under load says less. ``--only ag`` runs only sections a and g (and so on).

Random actions are drawn before timing. Within each comparison the backends take turns, one
``--seconds`` slice each per round, and each reports its best round in env steps per second
(sub-envs times vector steps).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import gc
import multiprocessing
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from _timing import SelfTimed, Step, race, rate, run_for

import sekai
from sekai.registration import load_entry_point

TARGETS_AT_1024 = {"Portfolio-v0": 50.0}
DEFAULT_TARGET_AT_1024 = 30.0
TARGET_AT_16 = 1.5
SINGLE_TARGETS = {"Portfolio-v0": 0.4, "MarketMaking-v0": 0.4, "OptimalExecution-v0": 0.4}


def load() -> str:
    """The load averages over 1, 5 and 15 minutes, for the output."""
    return "load average {:.2f}, {:.2f}, {:.2f}".format(*os.getloadavg())


def _print(title: str, best: dict[str, float], reference: str) -> None:
    print(f"{title}  [{load()}]")
    print(f"  {'backend':<46} {'steps/s':>12} {'ratio':>8}")
    for name, steps_per_second in best.items():
        ratio = steps_per_second / best[reference]
        print(f"  {name:<46} {steps_per_second:>12,.0f} {ratio:>7.2f}x")
    print()


def native_ids() -> list[str]:
    """Every registered single-agent finance env with a native vector version (so new ones
    join); the multi-agent LimitOrderBook-v0 has a benchmark of its own."""
    return sorted(
        env_id
        for env_id, spec in sekai.registry.items()
        if spec.distribution == "sekai-finance"
        and spec.vector_entry_point is not None
        and issubclass(load_entry_point(spec.entry_point), sekai.Env)
    )


def random_actions(env_id: str, num_envs: int, batches: int) -> np.ndarray:
    with sekai.make_vec(env_id, num_envs) as vec:
        space = vec.batch_action_space
        space.seed(0)
        return np.array([space.sample() for _ in range(batches)])


@contextlib.contextmanager
def vector(env_id: str, num_envs: int, mode: str, **kwargs: Any) -> Iterator[Step]:
    with sekai.make_vec(env_id, num_envs, vectorization_mode=mode, **kwargs) as vec:
        vec.reset(seed=0)
        yield vec.step


@contextlib.contextmanager
def single_env_proc(env_id: str, num_envs: int, num_workers: int) -> Iterator[Step]:
    """A ProcVecEnv whose workers step single envs, as for an env with no native version
    (make_vec's proc runs each worker's share as one native env when there is one)."""
    from sekai.vector import ProcVecEnv

    factory = functools.partial(sekai.make, env_id)
    with ProcVecEnv([factory] * num_envs, num_workers=num_workers) as vec:
        vec.reset(seed=0)
        yield vec.step


class _SpinBarrier:
    """Where processes wait for each other after every step: each posts how many steps it has
    taken in shared memory and checks the others', yielding the CPU between checks. About 1 us
    when all arrive together, where multiprocessing's Barrier, whose wait sleeps, takes about
    0.2 ms: a lockstep reference through it would mostly measure the Barrier."""

    def __init__(self, context: Any, parties: int) -> None:
        self.steps = context.RawArray("q", parties)

    def wait(self, party: int, step: int) -> None:
        steps = self.steps
        steps[party] = step
        while min(steps) < step:
            os.sched_yield()


class _ProcessesApart:
    """``num_processes`` processes, each stepping a SyncVecEnv of its share of the sub-envs
    with no messages: what this machine's cores give the same work split as ProcVecEnv's
    workers split it. With ``lockstep`` the processes also wait for each other after every
    step, at a barrier that costs next to nothing itself, as a ProcVecEnv step waits for its
    slowest worker."""

    def __init__(self, env_id: str, num_envs: int, num_processes: int, lockstep: bool) -> None:
        context = multiprocessing.get_context("fork")  # nothing to re-import in the children
        self.shares = [len(ranks) for ranks in np.array_split(range(num_envs), num_processes)]
        self.jobs = [context.SimpleQueue() for _ in self.shares]
        self.results = context.SimpleQueue()
        barrier = _SpinBarrier(context, num_processes) if lockstep else None
        self.passes: int | None = 1 if lockstep else None  # in lockstep: over the actions
        self.processes = [
            context.Process(
                target=_step_apart, args=(env_id, share, jobs, self.results, barrier, party)
            )
            for party, (share, jobs) in enumerate(zip(self.shares, self.jobs, strict=True))
        ]
        for process in self.processes:
            process.start()

    def rate(self, actions: np.ndarray, seconds: float) -> float:
        """All the processes' env steps over the time from the first job sent to the last
        result received (so a process that started late cannot count as running alongside).
        In lockstep every process must take the same steps: a turn makes as many passes over
        the actions as the last turn's rate gives for ``seconds``."""
        start = 0
        began = time.perf_counter()
        for share, jobs in zip(self.shares, self.jobs, strict=True):
            jobs.put((actions[:, start : start + share], seconds, self.passes))
            start += share
        steps = sum(self.results.get() for _ in self.processes)
        steps_per_second = steps / (time.perf_counter() - began)
        if self.passes is not None:
            env_steps_per_pass = len(actions) * actions.shape[1]  # as run_for counts them
            self.passes = max(1, round(seconds * steps_per_second / env_steps_per_pass))
        return steps_per_second

    def close(self) -> None:
        for jobs in self.jobs:
            jobs.put(None)
        for process in self.processes:
            process.join()


def _step_apart(
    env_id: str,
    num_envs: int,
    jobs: Any,
    results: Any,
    barrier: _SpinBarrier | None,
    party: int,
) -> None:
    """Child ``party`` of ``_ProcessesApart``: step through the turns it is given and report
    each turn's env steps, until given None."""
    from threadpoolctl import threadpool_limits

    from sekai.vector import SyncVecEnv

    threadpool_limits(1)  # as in ProcVecEnv's workers
    stepped = 0
    with SyncVecEnv([functools.partial(sekai.make, env_id)] * num_envs) as vec:
        vec.reset(seed=0)
        while (job := jobs.get()) is not None:
            actions, seconds, passes = job
            if barrier is None:
                results.put(run_for(vec.step, actions, seconds)[0])
                continue
            for _ in range(passes):
                for batch in actions:
                    vec.step(batch)
                    stepped += 1
                    barrier.wait(party, stepped)
            results.put(passes * len(actions) * actions.shape[1])


@contextlib.contextmanager
def processes_apart(
    env_id: str, num_envs: int, num_processes: int, *, lockstep: bool = False
) -> Iterator[SelfTimed]:
    apart = _ProcessesApart(env_id, num_envs, num_processes, lockstep)
    try:
        yield apart
    finally:
        apart.close()


# -- (b) the Portfolio-v0 arithmetic as a bare numpy loop ---------------------------------------
@contextlib.contextmanager
def bare_portfolio(num_envs: int, *, episodes: bool = True) -> Iterator[Step]:
    """Portfolio-v0's defaults (5 GBM assets, lookback 10, 252-step episodes, 0.001 costs) with
    the env's per-step arithmetic: weight checks, trades sized net of cost, financing at zero
    rates, correlated returns (the scale folded into the Cholesky factor, as the env does), the
    rolling window, drifted weights, wealth, rewards, ruin, observations; with ``episodes`` also
    the episode figures and same-step resets. No API, no infos. ``episodes=False`` is the loop
    the issue's independent figure describes ("no autoreset or episode bookkeeping")."""
    n, lookback, length, rate = 5, 10, 252, 0.001
    mu, sigma, dt, rho = 0.05, 0.2, 1 / 252, 0.3
    corr = np.full((n, n), rho)
    np.fill_diagonal(corr, 1.0)
    factor = np.linalg.cholesky(corr).T * (sigma * np.sqrt(dt))
    drift = (mu - 0.5 * sigma * sigma) * dt
    rng = np.random.default_rng(0)
    cash, shares = np.ones(num_envs), np.zeros((num_envs, n))
    price, wealth = np.ones((num_envs, n)), np.ones(num_envs)
    weights = np.zeros((num_envs, n + 1))
    weights[:, -1] = 1.0
    ring = np.zeros((num_envs, 2 * lookback, n), np.float32)  # twice over: a window is a slice
    head, elapsed = 0, np.zeros(num_envs, np.int64)
    stats = np.zeros((5, num_envs))

    def draw(size: tuple[int, ...]) -> np.ndarray:
        return drift + rng.standard_normal((*size, n)) @ factor

    def row_sums(values: np.ndarray) -> np.ndarray:  # column by column: 3-6x numpy's axis=1
        total = values[:, 0] + 0.0
        for column in range(1, values.shape[1]):
            total += values[:, column]
        return total

    def step(actions: np.ndarray) -> tuple[Any, ...]:
        nonlocal cash, shares, price, wealth, weights, head
        target_w = np.asarray(actions, np.float64)
        total = row_sums(target_w)
        if not (target_w.min() >= 0 and (np.abs(total - 1) <= 1e-5).all()):
            raise ValueError("bad weights")
        target_w = target_w / total[:, None]
        holdings = shares * price
        net = wealth - rate * row_sums(np.abs(target_w[:, :n] * wealth[:, None] - holdings))
        previous_net, previous_f = wealth, wealth - net
        for _ in range(50):
            target = target_w[:, :n] * net[:, None]
            traded = np.abs(target - holdings)
            cost = rate * row_sums(traded)
            f = net + cost - wealth
            if (np.abs(f) <= 1e-13 * wealth).all():
                break
            step_ = net - previous_net
            slope = np.divide(f - previous_f, step_, out=np.ones_like(f), where=step_ != 0)
            previous_net, previous_f = net, f
            net = net - f / slope
        cash = cash - (row_sums(target - holdings) + cost)
        shares = target / price
        cash += cash * 0.0 - 0.0  # financing at zero rates, as the env computes it
        returns = draw((num_envs,))
        ring[:, head::lookback] = returns[:, None]
        head = (head + 1) % lookback
        price = price * np.exp(returns)
        holdings = shares * price
        new_wealth = cash + row_sums(holdings)
        rewards = np.log(np.maximum(new_wealth, 1e-9) / wealth)
        terminated = new_wealth <= 1e-9
        if episodes:
            stats[0] += rewards
            stats[1] += rewards * rewards
            np.maximum(stats[2], stats[0], out=stats[2])
            np.maximum(stats[3], stats[2] - stats[0], out=stats[3])
            stats[4] += row_sums(traded) / wealth
        wealth = new_wealth
        weights = np.concatenate([holdings, cash[:, None]], axis=1) / wealth[:, None]
        elapsed[:] += 1
        truncated = elapsed >= length
        if episodes and (truncated | terminated).any():
            done = np.flatnonzero(truncated | terminated)
            order = (head + np.arange(lookback)) % lookback
            warmup = draw((len(done), lookback))
            ring[done[:, None], order] = warmup
            ring[done[:, None], order + lookback] = warmup
            cash[done], shares[done], price[done], wealth[done] = 1.0, 0.0, 1.0, 1.0
            weights[done] = 0.0
            weights[done, -1] = 1.0
            elapsed[done] = 0
            stats[:, done] = 0.0
        observations = np.empty((num_envs, (lookback + 1) * n + 1), np.float32)
        observations[:, : lookback * n] = ring[:, head : head + lookback].reshape(num_envs, -1)
        observations[:, lookback * n :] = weights
        return observations, rewards, terminated, truncated

    yield step


def portfolio_against_bare(num_envs: int, seconds: float, rounds: int) -> dict[str, float]:
    """PortfolioVecEnv, the bare loop with all of its arithmetic, and the bare loop without
    the episode figures or resets, in one race at ``num_envs`` sub-envs."""
    actions = random_actions("Portfolio-v0", num_envs, max(4, 50 * 1024 // num_envs))
    return race(
        {
            BARE: bare_portfolio(num_envs),
            "bare loop without episode figures or resets": bare_portfolio(num_envs, episodes=False),
            "PortfolioVecEnv": vector("Portfolio-v0", num_envs, "native"),
        },
        actions,
        seconds,
        rounds,
    )


BARE = "bare numpy loop (all of the env's arithmetic)"


# -- (h) what bounds PortfolioVecEnv at 16,384 sub-envs --------------------------------------------
def copy_bandwidth(megabytes: int = 64) -> float:
    """Bytes per second numpy moves copying a ``megabytes`` array into another (each byte read
    once and written once: 2 bytes touched per byte copied), best of 5."""
    source = np.ones(megabytes * 2**20 // 8)
    target = np.empty_like(source)
    best = 0.0
    for _ in range(5):
        start = time.perf_counter()
        np.copyto(target, source)
        best = max(best, 2 * source.nbytes / (time.perf_counter() - start))
    return best


def bounds(num_envs: int, seconds: float, rounds: int) -> None:
    """Steps/s of PortfolioVecEnv at ``num_envs`` for several lookback windows, and each step's
    time as bytes at numpy's copy bandwidth next to the bytes the window moves."""
    bandwidth = copy_bandwidth()
    lookbacks = (1, 10, 40)
    actions = random_actions("Portfolio-v0", num_envs, 4)
    backends = {
        f"lookback {k}": _portfolio_vec(num_envs, lookback=k, episode_length=252) for k in lookbacks
    }
    best = race(backends, actions, seconds, rounds)
    print(f"(h) what bounds PortfolioVecEnv at {num_envs:,} sub-envs  [{load()}]")
    print(f"  numpy copy bandwidth: {bandwidth / 1e9:.1f} GB/s (bytes read + written)")
    print(
        f"  {'window':<12} {'steps/s':>12} {'us/step':>9} {'as GB/s x time':>15}"
        f" {'window bytes':>13}"
    )
    for k, name in zip(lookbacks, backends, strict=True):
        seconds_per_step = num_envs / best[name]
        # float32: the step's returns into both copies of their ring slot, the window read from
        # the ring and written into the observation
        window_bytes = num_envs * 5 * 4 * (2 + 2 * k)
        print(
            f"  {name:<12} {best[name]:>12,.0f} {seconds_per_step * 1e6:>9,.0f}"
            f" {seconds_per_step * bandwidth / 2**20:>12,.1f} MB {window_bytes / 2**20:>10,.1f} MB"
        )
    print()


@contextlib.contextmanager
def _portfolio_vec(num_envs: int, **kwargs: Any) -> Iterator[Step]:
    with sekai.make_vec("Portfolio-v0", num_envs, **kwargs) as vec:
        vec.reset(seed=0)
        yield vec.step


# -- (c) scaling ------------------------------------------------------------------------------
def scaling(env_id: str, sizes: list[int], seconds: float, rounds: int) -> list[float]:
    """Native steps/s at each size; the sizes take turns within every round, as in race()."""
    best = [0.0] * len(sizes)
    with contextlib.ExitStack() as stack:
        steps = [stack.enter_context(vector(env_id, n, "native")) for n in sizes]
        actions = [random_actions(env_id, n, max(2, 4096 // n)) for n in sizes]
        for _ in range(rounds):
            for k, (step, batch) in enumerate(zip(steps, actions, strict=True)):
                best[k] = max(best[k], rate(step, batch, seconds))
    return best


# -- (d) memory ---------------------------------------------------------------------------------
def _rss_mb() -> tuple[float, float]:
    """(current, peak) resident set size of this process in MB, from /proc."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def memory(num_envs: int, bars: int, steps: int) -> None:
    history = 100 * np.exp(np.cumsum(np.random.default_rng(0).normal(0, 0.01, bars)))
    gc.collect()
    with_history, _ = _rss_mb()
    vec = sekai.make_vec("Trading-v0", num_envs, prices=history)
    rng = np.random.default_rng(1)
    vec.reset(seed=0)
    for _ in range(steps):
        vec.step(rng.integers(0, 2, size=num_envs))
    after, peak = _rss_mb()
    history_mb = history.nbytes / 2**20
    print(f"(d) Trading-v0, {num_envs:,} native sub-envs on {bars:,} bars, {steps:,} steps")
    print(f"  history (prices array)             {history_mb:>8.1f} MB")
    print(f"  RSS added beyond the history, now  {after - with_history:>8.1f} MB")
    print(f"  RSS added beyond the history, peak {peak - with_history:>8.1f} MB (target < 100)")
    print("  (of which the env's log returns of the history: 7.6 MB)\n")
    vec.close()


# -- (e) single envs ----------------------------------------------------------------------------
@contextlib.contextmanager
def sekai_single(env_id: str, **kwargs: Any) -> Iterator[Step]:
    env = sekai.make(env_id, **kwargs)
    env.reset(seed=0)

    def step(actions: np.ndarray) -> None:
        for action in actions.tolist() if actions.ndim == 1 else actions:  # ints, as the others
            if env.step(action).done:
                env.reset()

    yield step


@contextlib.contextmanager
def anytrading_single(prices: np.ndarray, window: int) -> Iterator[Step]:
    import gym_anytrading  # noqa: F401  (registers stocks-v0)
    import gymnasium
    import pandas as pd

    df = pd.DataFrame({"Open": prices, "High": prices, "Low": prices, "Close": prices})
    env = gymnasium.make(
        "stocks-v0", df=df, window_size=window, frame_bound=(window, len(prices))
    ).unwrapped
    yield _gymnasium_steps(env)


@contextlib.contextmanager
def trading_env_single(prices: np.ndarray, window: int) -> Iterator[Step]:
    import pandas as pd
    from gym_trading_env.environments import TradingEnv

    df = pd.DataFrame({"close": prices}, index=pd.date_range("2000-01-01", periods=len(prices)))
    df["feature_return"] = df["close"].pct_change()
    df = df.dropna()
    env = TradingEnv(df=df, positions=[0, 1], windows=window, trading_fees=0.001, verbose=0)
    yield _gymnasium_steps(env)


def _gymnasium_steps(env: Any) -> Step:
    """Step a gymnasium env through a batch of int actions, resetting at episode ends."""
    env.reset(seed=0)

    def step(actions: np.ndarray) -> None:
        for action in actions.tolist():
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()

    return step


def singles(seconds: float, rounds: int) -> None:
    from sekai.finance import datasets

    window = 30
    prices = datasets.load("GOOGL").close
    backends: dict[str, contextlib.AbstractContextManager[Step]] = {
        "sekai Trading-v0": sekai_single(
            "Trading-v0", prices=prices, lookback=window, episode_length=len(prices) - window - 1
        ),
    }
    missing = []
    for name, backend, module in (
        ("gym-trading-env TradingEnv", trading_env_single, "gym_trading_env"),
        ("gym-anytrading stocks-v0", anytrading_single, "gym_anytrading"),
    ):
        try:
            __import__(module)
        except ImportError:
            missing.append(name)
        else:
            backends[name] = backend(prices, window)
    actions = np.random.default_rng(0).integers(0, 2, size=(200, 100))
    best = race(backends, actions, seconds, rounds)
    _print(
        f"(e) single envs, GOOGL daily ({len(prices)} bars), window {window}",
        best,
        "sekai Trading-v0",
    )
    ours = best["sekai Trading-v0"]
    for name, target in (("gym-trading-env TradingEnv", 3.0), ("gym-anytrading stocks-v0", 1.0)):
        if name in best:
            print(f"  sekai Trading-v0 / {name}: {ours / best[name]:.2f}x (target >= {target}x)")
    for name in missing:
        print(f"  ({name} not run: not installed here)")


# -- (f) single envs against gymnasium's CartPole ------------------------------------------------
@contextlib.contextmanager
def own_actions(make: Any, count: int) -> Iterator[Step]:
    """A single env stepped through ``count`` actions of its own space, drawn before timing,
    whatever batch race() hands it (only its length counts); resets at episode ends."""
    with contextlib.closing(make()) as env:
        env.reset(seed=0)
        space = env.action_space
        space.seed(0)
        actions = [space.sample() for _ in range(count)]
        cursor = 0

        def step(batch: np.ndarray) -> None:
            nonlocal cursor
            env_step, reset = env.step, env.reset
            for k in range(cursor, cursor + len(batch)):
                result = env_step(actions[k % count])
                if result[2] or result[3]:
                    reset()
            cursor = (cursor + len(batch)) % count

        yield step


def single_rates(ids: list[str], seconds: float, rounds: int) -> dict[str, float]:
    """Steps/s of gymnasium's CartPole-v1 and of every id's single env, in one race."""
    import gymnasium

    backends: dict[str, contextlib.AbstractContextManager[Step]] = {
        CARTPOLE: own_actions(lambda: gymnasium.make("CartPole-v1"), 1000)
    }
    for env_id in ids:
        backends[f"sekai {env_id}"] = own_actions(lambda env_id=env_id: sekai.make(env_id), 1000)
    return race(backends, np.zeros((20, 100)), seconds, rounds)


CARTPOLE = "gymnasium CartPole-v1"


def singles_against_cartpole(ids: list[str], seconds: float, rounds: int) -> None:
    try:
        import gymnasium  # noqa: F401
    except ImportError:
        print("(f) not run: gymnasium is not installed here\n")
        return
    best = single_rates(ids, seconds, rounds)
    _print("(f) single envs against gymnasium's CartPole-v1", best, CARTPOLE)
    for env_id, target in SINGLE_TARGETS.items():
        ratio = best[f"sekai {env_id}"] / best[CARTPOLE]
        print(f"  {env_id} / CartPole-v1: {ratio:.2f}x (target >= {target}x)")
    print()


# -- issue 24: every target in one run, PASS or FAIL ----------------------------------------------
@dataclasses.dataclass(frozen=True)
class Check:
    """One ratio measured in a run against its target (at least); with no target, a reference
    that explains another (it always passes)."""

    what: str
    ratio: float
    target: float | None

    @property
    def passed(self) -> bool:
        return self.target is None or self.ratio >= self.target

    @property
    def wanted(self) -> str:
        return "reference" if self.target is None else f">= {self.target:g}x"


def native_against_sync(env_id: str, num_envs: int, seconds: float, rounds: int) -> float:
    """Native steps/s over those of a SyncVecEnv of single envs, at ``num_envs``."""
    actions = random_actions(env_id, num_envs, max(4, 1600 // num_envs))
    best = race(
        {
            "sync": vector(env_id, num_envs, "sync"),
            "native": vector(env_id, num_envs, "native"),
        },
        actions,
        seconds,
        rounds,
    )
    return best["native"] / best["sync"]


def issue24(seconds: float, rounds: int) -> list[Check]:
    """Measure every ratio of issue 24's targets, each race in one go."""
    from vector_throughput import bare_loop, gymnasium_sync, sekai_native, sekai_sync

    checks = []
    singles = single_rates(list(SINGLE_TARGETS), seconds, rounds)
    for env_id, target in SINGLE_TARGETS.items():
        ratio = singles[f"sekai {env_id}"] / singles[CARTPOLE]
        checks.append(Check(f"single {env_id} / CartPole-v1", ratio, target))
    for env_id in native_ids():
        ratio = native_against_sync(env_id, 16, seconds, rounds)
        checks.append(Check(f"native / sync at 16 sub-envs, {env_id}", ratio, TARGET_AT_16))
    best = portfolio_against_bare(16384, seconds, rounds)
    checks.append(
        Check("PortfolioVecEnv / bare loop at 16,384", best["PortfolioVecEnv"] / best[BARE], 0.8)
    )
    actions = random_actions("Portfolio-v0", 256, 8)
    proc = {"num_workers": 2}
    best = race(
        {  # the children fork first, before any worker holds a socket of this process
            "apart": processes_apart("Portfolio-v0", 256, 2),
            "in lockstep": processes_apart("Portfolio-v0", 256, 2, lockstep=True),
            "sync": vector("Portfolio-v0", 256, "sync"),
            "proc": vector("Portfolio-v0", 256, "proc", vector_kwargs=proc),
            "proc of single envs": single_env_proc("Portfolio-v0", 256, 2),
        },
        actions,
        seconds,
        rounds,
    )
    for label, proc_name in (("single envs", "proc of single envs"), ("make_vec's", "proc")):
        what = f"proc (2 workers) / sync at 256, Portfolio-v0, {label}"
        checks.append(Check(what, best[proc_name] / best["sync"], 1.7))
    what = "  reference: 2 processes of 128 stepping apart / sync"
    checks.append(Check(what, best["apart"] / best["sync"], None))
    what = "  reference: the same in lockstep (a spinning barrier) / sync"
    checks.append(Check(what, best["in lockstep"] / best["sync"], None))
    # no regression
    actions = np.random.default_rng(0).integers(0, 2, size=(100, 16))
    best = race(
        {"gymnasium": gymnasium_sync(16), "sekai": sekai_sync(16)}, actions, seconds, rounds
    )
    checks.append(
        Check("CartPole-v1 sync at 16: sekai / gymnasium", best["sekai"] / best["gymnasium"], 1.8)
    )
    actions = np.random.default_rng(0).integers(0, 2, size=(10, 1024))
    best = race({"bare": bare_loop(1024), "native": sekai_native(1024)}, actions, seconds, rounds)
    checks.append(Check("Drift at 1024: native / bare loop", best["native"] / best["bare"], 0.8))
    ratio = native_against_sync("Portfolio-v0", 1024, seconds, rounds)
    checks.append(
        Check("Portfolio-v0 at 1024: native / sync", ratio, TARGETS_AT_1024["Portfolio-v0"])
    )
    return checks


def print_checks(checks: list[Check], run: str) -> None:
    print(f"issue 24 targets, {run}  [{load()}]")
    print(f"  {'ratio measured':<60} {'ratio':>8} {'target':>9}")
    for check in checks:
        verdict = "" if check.target is None else "PASS" if check.passed else "FAIL"
        print(f"  {check.what:<60} {check.ratio:>7.2f}x {check.wanted:>9}  {verdict}")
    targets = sum(check.target is not None for check in checks)
    failed = sum(not check.passed for check in checks)
    print(f"  {targets - failed} PASS, {failed} FAIL\n")


# -- the docs table: written only from a quiet machine --------------------------------------------
MAX_LOAD_FOR_DOCS = 1.5
DOCS_START = "<!-- finance_throughput.py --write-docs: start -->"
DOCS_END = "<!-- finance_throughput.py --write-docs: end -->"


def refusal(load_1min: float) -> str | None:
    """Why the docs table must not be written at this 1-minute load average, or None."""
    if load_1min <= MAX_LOAD_FOR_DOCS:
        return None
    return (
        f"refusing to write the docs table: the 1-minute load average is {load_1min:.2f}, over "
        f"{MAX_LOAD_FOR_DOCS}; ratios measured on a busy machine are not the docs' figures. "
        "Run again when nothing else runs."
    )


def docs_table(runs: list[list[Check]], loads: list[float], day: str) -> str:
    """The markdown table of every run's ratios, one column per run."""
    header = "| ratio | target | " + " | ".join(f"run {k + 1}" for k in range(len(runs))) + " |"
    lines = [
        f"Measured on {day} with `python benchmarks/finance_throughput.py --issue24 --runs "
        f"{len(runs)} --write-docs docs/performance.md`, 1-minute load average "
        + ", ".join(f"{value:.2f}" for value in loads)
        + " at the runs' ends.",
        "",
        header,
        "|---|---|" + "---|" * len(runs),
    ]
    for row, first in enumerate(runs[0]):
        cells = " | ".join(f"{run[row].ratio:.2f}x" for run in runs)
        lines.append(f"| {first.what.strip()} | {first.wanted} | {cells} |")
    return "\n".join(lines)


def replace_block(text: str, block: str) -> str:
    """``text`` with what lies between the docs markers replaced by ``block``; ValueError when
    the markers are missing."""
    start, end = text.find(DOCS_START), text.find(DOCS_END)
    if start < 0 or end < start:
        raise ValueError(f"the page has no block between {DOCS_START!r} and {DOCS_END!r}")
    return text[: start + len(DOCS_START)] + "\n" + block + "\n" + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, help="each turn of a race (1.0; --issue24: 0.25)")
    parser.add_argument(
        "--rounds", type=int, help="turns each backend takes in a race (3; --issue24: 12)"
    )
    parser.add_argument("--quick", action="store_true", help="1 round, no 16,384 sub-envs")
    parser.add_argument("--only", default="abcdefgh", help="the sections to run, e.g. fg")
    parser.add_argument(
        "--issue24", action="store_true", help="every issue-24 ratio with PASS/FAIL, only"
    )
    parser.add_argument("--runs", type=int, default=1, help="issue-24 runs; all must pass")
    parser.add_argument("--write-docs", metavar="PAGE", help="put the issue-24 table in PAGE")
    args = parser.parse_args(argv)
    if args.write_docs and not args.issue24:
        parser.error("--write-docs writes the --issue24 table: add --issue24")
    if args.write_docs:
        why = refusal(os.getloadavg()[0])
        if why:
            print(why, file=sys.stderr)
            return 2
        replace_block(Path(args.write_docs).read_text(), "")  # the markers are there
    if args.issue24:
        return run_issue24(args)
    run_sections(args)
    return 0


def run_issue24(args: argparse.Namespace) -> int:
    # Many short turns: each backend's best turn then comes from the machine's fast spells, where
    # three turns of a second often missed them (single Portfolio-v0 / CartPole-v1: 0.409, 0.440,
    # 0.412 with 3 x 1 s; 0.423, 0.427, 0.421 with 12 x 0.25 s, alternated in one hour)
    seconds, rounds = (0.5, 2) if args.quick else (args.seconds or 0.25, args.rounds or 12)
    runs, loads = [], []
    for k in range(args.runs):
        checks = issue24(seconds, rounds)
        loads.append(os.getloadavg()[0])
        print_checks(checks, f"run {k + 1} of {args.runs}")
        runs.append(checks)
    failed = sum(not check.passed for checks in runs for check in checks)
    verdict = "all PASS" if not failed else f"{failed} FAIL"
    print(f"issue 24: {args.runs} run(s), {verdict}  [{load()}]")
    if args.write_docs:
        why = refusal(max(loads))
        if why:
            print(why, file=sys.stderr)
            return 2
        page = Path(args.write_docs)
        table = docs_table(runs, loads, time.strftime("%Y-%m-%d"))
        page.write_text(replace_block(page.read_text(), table))
        print(f"wrote the table to {page}")
    return 1 if failed else 0


def run_sections(args: argparse.Namespace) -> None:
    seconds = args.seconds or 1.0
    rounds = 1 if args.quick else args.rounds or 3
    ids = native_ids()
    print(f"finance_throughput.py, {load()}\n")

    at_16: dict[str, float] = {}
    load_at_16 = load()
    for env_id in ids if "a" in args.only or "g" in args.only else []:
        for num_envs, batches in ((16, 100), (1024, 4)):
            if num_envs == 1024 and "a" not in args.only:
                continue
            actions = random_actions(env_id, num_envs, batches)
            best = race(
                {
                    "sync": vector(env_id, num_envs, "sync"),
                    "native": vector(env_id, num_envs, "native"),
                },
                actions,
                seconds,
                rounds,
            )
            if num_envs == 16:
                at_16[env_id] = best["native"] / best["sync"]
                load_at_16 = load()  # when (g)'s figures were measured, not printed
            if "a" in args.only:
                _print(f"(a) {env_id}, {num_envs} sub-envs", best, "sync")
        if "a" in args.only:
            target = TARGETS_AT_1024.get(env_id, DEFAULT_TARGET_AT_1024)
            print(f"  target at 1024: native >= {target:.0f}x sync\n")

    if "b" in args.only:
        for num_envs, target in ((1024, 0.6), (16384, 0.8)):
            if num_envs == 16384 and args.quick:
                continue
            best = portfolio_against_bare(num_envs, seconds, rounds)
            _print(
                f"(b) Portfolio-v0, {num_envs:,} sub-envs, array form (target: PortfolioVecEnv "
                f">= {target}x the first loop)",
                best,
                BARE,
            )

    if "c" in args.only:
        sizes = [1, 16, 256, 1024, 4096] + ([] if args.quick else [16384])
        print(f"(c) native steps/s by number of sub-envs  [{load()}]")
        print(f"  {'env':<24}" + "".join(f"{n:>12,}" for n in sizes))
        for env_id in ids:
            rates = scaling(env_id, sizes, seconds, rounds)
            print(f"  {env_id:<24}" + "".join(f"{r:>12,.0f}" for r in rates))
        print()

    if "d" in args.only:
        memory(16384, 1_000_000, 1000)
    if "e" in args.only:
        singles(seconds, rounds)
    if "f" in args.only:
        singles_against_cartpole(ids, seconds, rounds)
    if "g" in args.only:
        print(f"(g) native / sync at 16 sub-envs, from (a)  [{load_at_16}]")
        for env_id, ratio in at_16.items():
            print(f"  {env_id:<24} {ratio:>6.2f}x (target >= {TARGET_AT_16}x)")
        print()
    if "h" in args.only:
        bounds(4096 if args.quick else 16384, seconds, rounds)


if __name__ == "__main__":
    sys.exit(main())
