"""Finance env throughput and memory, measured in one run so the ratios compare like with like.

    python benchmarks/finance_throughput.py [--seconds 1] [--rounds 3] [--quick]

(a) Every registered finance env with a native version: native against SyncVecEnv at 16 and
    1024 sub-envs (targets: PortfolioVecEnv >= 5x at 16 and >= 50x at 1024, the others >= 30x at
    1024).
(b) PortfolioVecEnv at 1024 sub-envs against the same arithmetic as a bare numpy loop with no
    API around it (target: >= 0.6 of its steps/s); the native env builds infos lazily and the
    caller here never reads them.
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

The load average (``os.getloadavg()``) is printed with every section: the machine may be shared,
and a ratio measured under load says less. ``--only ag`` runs only sections a and g (and so on).

Random actions are drawn before timing. Within each comparison the backends take turns, one
``--seconds`` slice each per round, and each reports its best round in env steps per second
(sub-envs times vector steps).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from _timing import Step, race, rate

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
def vector(env_id: str, num_envs: int, mode: str) -> Iterator[Step]:
    with sekai.make_vec(env_id, num_envs, vectorization_mode=mode) as vec:
        vec.reset(seed=0)
        yield vec.step


# -- (b) the Portfolio-v0 arithmetic as a bare numpy loop ---------------------------------------
@contextlib.contextmanager
def bare_portfolio(num_envs: int) -> Iterator[Step]:
    """Portfolio-v0's defaults (5 GBM assets, lookback 10, 252-step episodes, 0.001 costs) with
    the same per-step arithmetic: weight checks, trades sized net of cost, GBM prices, wealth,
    rewards, episode figures, observations, same-step resets; no API, no infos."""
    n, lookback, length, rate = 5, 10, 252, 0.001
    mu, sigma, dt, rho = 0.05, 0.2, 1 / 252, 0.3
    corr = np.full((n, n), rho)
    np.fill_diagonal(corr, 1.0)
    chol = np.linalg.cholesky(corr)
    rng = np.random.default_rng(0)
    cash, shares = np.ones(num_envs), np.zeros((num_envs, n))
    price, wealth = np.ones((num_envs, n)), np.ones(num_envs)
    weights = np.zeros((num_envs, n + 1))
    weights[:, -1] = 1.0
    ring = np.zeros((num_envs, lookback, n), np.float32)
    head, elapsed = 0, np.zeros(num_envs, np.int64)
    stats = np.zeros((5, num_envs))

    def draw(size: tuple[int, ...]) -> np.ndarray:
        shocks = rng.standard_normal((*size, n)) @ chol.T
        return (mu - 0.5 * sigma * sigma) * dt + (sigma * np.sqrt(dt)) * shocks

    def step(actions: np.ndarray) -> tuple[Any, ...]:
        nonlocal cash, shares, price, wealth, weights, head
        target_w = np.asarray(actions, np.float64)
        total = target_w.sum(axis=1)
        if not ((np.abs(total - 1) <= 1e-5) & (target_w.min(axis=1) >= 0)).all():
            raise ValueError("bad weights")
        target_w = target_w / total[:, None]
        holdings = shares * price
        net = wealth - rate * np.abs(target_w[:, :n] * wealth[:, None] - holdings).sum(axis=1)
        previous_net, previous_f = wealth, wealth - net
        for _ in range(50):
            target = target_w[:, :n] * net[:, None]
            traded = np.abs(target - holdings)
            cost = rate * traded.sum(axis=1)
            f = net + cost - wealth
            if (np.abs(f) <= 1e-13 * wealth).all():
                break
            step_ = net - previous_net
            slope = np.divide(f - previous_f, step_, out=np.ones_like(f), where=step_ != 0)
            previous_net, previous_f = net, f
            net = net - f / slope
        cash = cash - ((target - holdings).sum(axis=1) + cost)
        shares = target / price
        returns = draw((num_envs,))
        ring[:, head] = returns
        head = (head + 1) % lookback
        price = price * np.exp(returns)
        holdings = shares * price
        new_wealth = cash + holdings.sum(axis=1)
        rewards = np.log(np.maximum(new_wealth, 1e-9) / wealth)
        stats[0] += rewards
        stats[1] += rewards * rewards
        np.maximum(stats[2], stats[0], out=stats[2])
        np.maximum(stats[3], stats[2] - stats[0], out=stats[3])
        stats[4] += traded.sum(axis=1) / wealth
        wealth = new_wealth
        weights = np.concatenate([holdings, cash[:, None]], axis=1) / wealth[:, None]
        elapsed[:] += 1
        truncated = elapsed >= length
        if truncated.any():
            done = np.flatnonzero(truncated)
            order = (head + np.arange(lookback)) % lookback
            ring[done[:, None], order] = draw((len(done), lookback))
            cash[done], shares[done], price[done], wealth[done] = 1.0, 0.0, 1.0, 1.0
            weights[done] = 0.0
            weights[done, -1] = 1.0
            elapsed[done] = 0
            stats[:, done] = 0.0
        observations = np.empty((num_envs, (lookback + 1) * n + 1), np.float32)
        observations[:, : lookback * n] = np.take(
            ring, (head + np.arange(lookback)) % lookback, axis=1
        ).reshape(num_envs, -1)
        observations[:, lookback * n :] = weights
        return observations, rewards, truncated

    yield step


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


def singles_against_cartpole(ids: list[str], seconds: float, rounds: int) -> None:
    try:
        import gymnasium
    except ImportError:
        print("(f) not run: gymnasium is not installed here\n")
        return
    backends: dict[str, contextlib.AbstractContextManager[Step]] = {
        "gymnasium CartPole-v1": own_actions(lambda: gymnasium.make("CartPole-v1"), 1000)
    }
    for env_id in ids:
        backends[f"sekai {env_id}"] = own_actions(lambda env_id=env_id: sekai.make(env_id), 1000)
    best = race(backends, np.zeros((20, 100)), seconds, rounds)
    _print("(f) single envs against gymnasium's CartPole-v1", best, "gymnasium CartPole-v1")
    for env_id, target in SINGLE_TARGETS.items():
        ratio = best[f"sekai {env_id}"] / best["gymnasium CartPole-v1"]
        print(f"  {env_id} / CartPole-v1: {ratio:.2f}x (target >= {target}x)")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="1 round, no 16,384 sub-envs")
    parser.add_argument("--only", default="abcdefg", help="the sections to run, e.g. fg")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds
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
                args.seconds,
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
        actions = random_actions("Portfolio-v0", 1024, 50)
        best = race(
            {
                "bare numpy loop": bare_portfolio(1024),
                "PortfolioVecEnv": vector("Portfolio-v0", 1024, "native"),
            },
            actions,
            args.seconds,
            rounds,
        )
        _print(
            "(b) Portfolio-v0, 1024 sub-envs, array form (target >= 0.6x)", best, "bare numpy loop"
        )

    if "c" in args.only:
        sizes = [1, 16, 256, 1024, 4096] + ([] if args.quick else [16384])
        print(f"(c) native steps/s by number of sub-envs  [{load()}]")
        print(f"  {'env':<24}" + "".join(f"{n:>12,}" for n in sizes))
        for env_id in ids:
            rates = scaling(env_id, sizes, args.seconds, rounds)
            print(f"  {env_id:<24}" + "".join(f"{r:>12,.0f}" for r in rates))
        print()

    if "d" in args.only:
        memory(16384, 1_000_000, 1000)
    if "e" in args.only:
        singles(args.seconds, rounds)
    if "f" in args.only:
        singles_against_cartpole(ids, args.seconds, rounds)
    if "g" in args.only:
        print(f"(g) native / sync at 16 sub-envs, from (a)  [{load_at_16}]")
        for env_id, ratio in at_16.items():
            print(f"  {env_id:<24} {ratio:>6.2f}x (target >= {TARGET_AT_16}x)")
        print()


if __name__ == "__main__":
    main()
