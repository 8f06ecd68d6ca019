"""LimitOrderBookVecEnv agrees with LimitOrderBookMarket: exactly on a given flow, exactly for
one book with the same seed, and in distribution over many books."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lob_checks import check_books

import sekai
from sekai.envs.finance import LimitOrderBookMarket
from sekai.envs.finance.limit_order_book_vec import LimitOrderBookVecEnv
from sekai.finance import BUY, MARKET, SELL, ContStoikovTalreja, FlowEvents, simulate_flow
from sekai.finance.lob.level_books import LevelBooks

KWARGS = {"decision_intervals": [1.0, 2.0, 5.0], "session_length": 20.0, "order_size": 2}


def assert_same(single_value, vec_value, book: int, what: str) -> None:  # type: ignore[no-untyped-def]
    assert np.array_equal(np.asarray(single_value), np.asarray(vec_value)[book]), what


def play_together(singles, vec, seed: int) -> int:  # type: ignore[no-untyped-def]
    """Book i of ``vec`` takes single env i's masked random actions; compare observations,
    masks, rewards, infos and flags at every step.
    Returns the largest inventory (long or short) any trader held after a step."""
    results = [env.reset(seed=seed) for env in singles]
    vec_result = vec.reset(seed=seed)
    for i, env in enumerate(singles):
        for j, agent in enumerate(env.possible_agents):
            env.action_space(agent).seed(100 * i + j)
    step = reached = 0
    while True:
        reached = max(reached, int(np.abs(vec.books.inventory).max()))
        for i, (env, result) in enumerate(zip(singles, results, strict=True)):
            assert sorted(result.observations) == sorted(vec_result.observations)
            for agent, obs in result.observations.items():
                assert_same(obs, vec_result.observations[agent], i, f"obs {agent} step {step}")
                for single_mask, vec_mask in zip(
                    env.action_mask(agent), vec.action_mask(agent), strict=True
                ):
                    assert_same(single_mask, vec_mask, i, f"mask {agent} step {step}")
            assert result.info == vec_result.info, f"info step {step}"
            if step:
                for agent, reward in result.rewards.items():
                    assert_same(reward, vec_result.rewards[agent], i, f"reward {agent} {step}")
                assert result.terminated == vec_result.terminated, f"terminated step {step}"
                assert result.truncated == vec_result.truncated, f"truncated step {step}"
        if vec_result.all_done:
            assert all(result.all_done for result in results)
            return reached
        actions = [
            {a: env.action_space(a).sample(mask=env.action_mask(a)) for a in result.observations}
            for env, result in zip(singles, results, strict=True)
        ]
        results = [env.step(a) for env, a in zip(singles, actions, strict=True)]
        vec_result = vec.step(
            {agent: np.stack([a[agent] for a in actions]) for agent in actions[0]}
        )
        step += 1


def test_exact_agreement_on_a_given_flow() -> None:
    flow = simulate_flow(ContStoikovTalreja(), 20.0, seed=11)
    singles = [LimitOrderBookMarket(3, flow=flow, **KWARGS) for _ in range(3)]
    vec = LimitOrderBookVecEnv(3, 3, flow=flow, **KWARGS)
    play_together(singles, vec, seed=0)
    assert np.array_equal(vec.books.inventory, np.stack([env.inventory for env in singles]))
    assert (vec.books.inventory != 0).any()


@pytest.mark.parametrize("seed", [5, 17, 29])
def test_exact_agreement_for_one_book_with_the_same_seed(seed: int) -> None:
    single, vec = LimitOrderBookMarket(3, **KWARGS), LimitOrderBookVecEnv(1, 3, **KWARGS)
    play_together([single], vec, seed)
    assert single.book.fill_count > 0  # the traders and the flow traded


def test_agreement_in_distribution() -> None:
    """Best bid move (ticks) and resting lots after 8 idle seconds: 48 single sessions vs 48
    books."""
    kwargs = {"session_length": 8.0, "decision_intervals": [8.0]}
    keep = np.zeros(3, np.int64)

    single_moves, single_lots = [], []
    for seed in range(48):
        env = LimitOrderBookMarket(1, **kwargs)
        env.reset(seed=seed)
        env.step({"trader_0": keep})
        if env.book.best_bid is not None:  # a side can empty out now and then
            single_moves.append(env.book.best_bid - env.config.first_bid)
        single_lots.append(sum(v for side in (0, 1) for _, v in env.book.depth(side, 2000)))
    vec = LimitOrderBookVecEnv(48, 1, **kwargs)
    vec.reset(seed=1234)
    vec.step({"trader_0": np.zeros((48, 3), np.int64)})
    bids = vec.books.best[:, 0]
    vec_moves = bids[bids >= 0] - vec.config.first_bid
    vec_lots = vec.books.volume.sum(axis=(1, 2))
    for a, b in ((single_moves, vec_moves), (single_lots, vec_lots)):
        a, b = np.asarray(a, float), np.asarray(b, float)
        error = np.sqrt(a.var() / len(a) + b.var() / len(b))
        assert abs(a.mean() - b.mean()) < 4.5 * error + 1e-9
        assert 0.5 < (a.std() + 1e-9) / (b.std() + 1e-9) < 2.0


def test_make_vec_builds_the_native_version() -> None:
    vec = sekai.make_vec("LimitOrderBook-v0", 4, n_traders=2, session_length=3.0)
    assert isinstance(vec, LimitOrderBookVecEnv) and vec.num_envs == 4
    result = vec.reset(seed=0)
    assert result.observations["trader_0"].shape == (4, 27)
    masks = vec.action_mask("trader_1")
    assert [m.shape for m in masks] == [(4, 6), (4, 6), (4, 3)]
    with pytest.raises(ValueError, match=r"trader_0: actions must be integers of shape \(4, 3\)"):
        vec.step({"trader_0": np.zeros(3, np.int64), "trader_1": np.zeros((4, 3), np.int64)})
    bad = np.zeros((4, 3), np.int64)
    bad[2, 0] = 2  # improve a one-tick spread
    with pytest.raises(ValueError, match=r"trader_0: the bid instruction 2 \('improve'\)"):
        vec.step({"trader_0": bad, "trader_1": np.zeros((4, 3), np.int64)})


def test_render_draws_each_book_as_the_single_env_draws_it() -> None:
    flow = simulate_flow(ContStoikovTalreja(), 20.0, seed=11)
    singles = [LimitOrderBookMarket(3, flow=flow, render_mode="rgb_array", **KWARGS)]
    singles.append(LimitOrderBookMarket(3, flow=flow, render_mode="rgb_array", **KWARGS))
    vec = LimitOrderBookVecEnv(2, 3, flow=flow, render_mode="rgb_array", **KWARGS)
    assert vec.render() == [None, None]  # nothing to draw before the first reset
    results = [env.reset(seed=0) for env in singles]
    vec.reset(seed=0)
    assert all(
        np.array_equal(f, env.render()) for f, env in zip(vec.render(), singles, strict=True)
    )
    for i, env in enumerate(singles):
        for j, agent in enumerate(env.possible_agents):
            env.action_space(agent).seed(10 * i + j)
    for _ in range(8):
        actions = [
            {a: env.action_space(a).sample(mask=env.action_mask(a)) for a in result.observations}
            for env, result in zip(singles, results, strict=True)
        ]
        results = [env.step(a) for env, a in zip(singles, actions, strict=True)]
        vec.step({agent: np.stack([a[agent] for a in actions]) for agent in actions[0]})
    frames = vec.render()
    for frame, env in zip(frames, singles, strict=True):
        assert frame.shape == (520, 600, 3) and frame.dtype == np.uint8
        np.testing.assert_array_equal(frame, env.render())
    assert not np.array_equal(frames[0], frames[1])  # each book draws its own session


@pytest.mark.parametrize("mode", ["human", "ansi"])
def test_render_modes_it_lacks_are_refused_not_dropped(mode: str) -> None:
    with pytest.raises(ValueError, match=rf"None or one of \['rgb_array'\], got '{mode}'"):
        sekai.make_vec("LimitOrderBook-v0", 2, render_mode=mode)
    vec = sekai.make_vec("LimitOrderBook-v0", 2, render_mode="rgb_array", session_length=2.0)
    assert vec.render_mode == "rgb_array" and vec.metadata["render_modes"] == ["rgb_array"]
    vec.reset(seed=0)
    assert [frame.shape for frame in vec.render()] == [(520, 600, 3)] * 2
    plain = LimitOrderBookVecEnv(2, session_length=2.0)
    plain.reset(seed=0)
    assert plain.render_mode is None and plain.render() is None


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_the_compiled_flow_samples_the_scalar_samplers_events(seed: int) -> None:
    """One book's compiled flow with a generator makes the events simulate_flow (the plain
    Python sampler on an OrderBook) records with the same seed, and ends in the same book."""
    model = ContStoikovTalreja()
    flow = simulate_flow(model, 20.0, seed=seed)
    books = LevelBooks(LimitOrderBookMarket(1).config, 1)
    assert books.run_flow(model, np.random.default_rng(seed), 0.0, 20.0) == len(flow)
    replayed = LevelBooks(LimitOrderBookMarket(1, flow=flow).config, 1)
    replayed.replay(flow, 0, len(flow))
    assert np.array_equal(books.volume, replayed.volume)
    assert np.array_equal(books.best, replayed.best)
    assert np.array_equal(books.accounts_cash, replayed.accounts_cash)


def random_actions(vec: LimitOrderBookVecEnv, agents, rng) -> dict:  # type: ignore[no-untyped-def]
    """A random allowed action for each book and due agent."""
    return {
        agent: np.stack(
            [np.argmax(mask * rng.random(mask.shape), axis=1) for mask in vec.action_mask(agent)],
            axis=1,
        )
        for agent in agents
    }


def test_invariants_hold_over_100000_random_events_in_many_books() -> None:
    """Live flow and masked random traders in 64 books: after every step, cash and shares are
    conserved across all accounts (the public's too), no book is crossed, each level holds
    its public lots plus the traders' orders, and queue positions are consistent."""
    vec = LimitOrderBookVecEnv(64, 3, **{**CAPPED, "session_length": 60.0})
    rng = np.random.default_rng(0)
    result = vec.reset(seed=3)
    traded = np.zeros(64, bool)
    instructions = 0  # the traders' non-zero action entries, one event each
    while not result.all_done:
        actions = random_actions(vec, result.observations, rng)
        instructions += sum(int(np.count_nonzero(a)) for a in actions.values())
        result = vec.step(actions)
        check_books(vec.books)
        traded |= (vec.books.inventory != 0).any(axis=1)
    assert vec.flow_events + instructions >= 100_000
    assert traded.all()


def test_same_seed_same_books_and_independent_flows_across_books() -> None:
    def run(seed: int) -> LimitOrderBookVecEnv:
        vec = LimitOrderBookVecEnv(8, 1, session_length=5.0, decision_intervals=[5.0])
        vec.reset(seed=seed)
        vec.step({"trader_0": np.zeros((8, 3), np.int64)})
        return vec

    first, again, other = run(1), run(1), run(2)
    assert np.array_equal(first.books.volume, again.books.volume)
    assert first.flow_events == again.flow_events
    assert not np.array_equal(first.books.volume, other.books.volume)
    distinct = {first.books.volume[i].tobytes() for i in range(8)}
    assert len(distinct) == 8


@pytest.mark.parametrize(
    "make", [LimitOrderBookMarket, lambda *a, **k: LimitOrderBookVecEnv(2, *a, **k)]
)
def test_a_grid_too_small_for_the_opening_book_is_a_value_error(make) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=r"n_ticks must be at least 11 .* got 10"):
        make(1, n_ticks=10)
    make(1, n_ticks=11).reset(seed=0)


def test_reset_restores_the_opening_books_whatever_the_last_session_left() -> None:
    """reset() clears the books in place: after a session of random traders they equal fresh
    books, and a second session agrees exactly with the single env again."""
    vec = LimitOrderBookVecEnv(1, 3, **KWARGS)
    single = LimitOrderBookMarket(3, **KWARGS)
    play_together([single], vec, seed=5)
    fresh = LevelBooks(vec.config, 1)
    assert not np.array_equal(vec.books.volume, fresh.volume)
    vec.reset(seed=6)
    fresh.values()  # as reset() reads them, which sets the mid
    for name in ("volume", "public", "best", "ref", "orders", "placed", "mid"):
        assert np.array_equal(getattr(vec.books, name), getattr(fresh, name)), name
    assert np.array_equal(vec.books.accounts_cash, fresh.accounts_cash)
    assert np.array_equal(vec.books.accounts_inventory, fresh.accounts_inventory)
    play_together([single], vec, seed=6)


CAPPED = {"decision_intervals": [0.5, 1.0, 2.0], "order_size": 2, "max_inventory": 3}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_inventory_never_passes_the_cap_in_many_books(seed: int) -> None:
    """240 steps of masked random actions in 64 books: after every step each trader's
    inventory, plus what its resting quote could still fill, stays within max_inventory."""
    vec = LimitOrderBookVecEnv(64, 3, session_length=120.0, **CAPPED)
    cap = vec.config.max_inventory
    rng = np.random.default_rng(seed)
    result = vec.reset(seed=seed)
    reached = np.zeros(64, np.int64)
    while not result.all_done:
        result = vec.step(random_actions(vec, result.observations, rng))
        inventory, lots = vec.books.inventory, vec.books.order_size
        assert (inventory + lots[:, BUY] <= cap).all()
        assert (-inventory + lots[:, SELL] <= cap).all()
        reached = np.maximum(reached, np.abs(inventory).max(axis=1))
    assert (reached == cap).mean() > 0.5  # most books pressed against the cap, and it held


def test_exact_agreement_where_the_cap_cuts_orders() -> None:
    flow = simulate_flow(ContStoikovTalreja(), 30.0, seed=3)
    kwargs = {**CAPPED, "session_length": 30.0}
    singles = [LimitOrderBookMarket(3, flow=flow, **kwargs) for _ in range(4)]
    vec = LimitOrderBookVecEnv(4, 3, flow=flow, **kwargs)
    assert play_together(singles, vec, seed=1) == 3  # traders met the cap
    assert np.array_equal(vec.books.inventory, np.stack([env.inventory for env in singles]))


@pytest.mark.parametrize("books", [0, 2], ids=["single", "vec"])
def test_a_market_order_cuts_the_resting_bid_to_the_room_left(books: int) -> None:
    """Inventory 0 of at most 3, lots of 2: the trader bids two lots one tick behind the best,
    then buys two at market, which leaves room for one, so its bid is cut to one lot. Four
    public one-lot market sells then reach it (1 lot at the best, 1 ahead of it at its tick):
    it buys one lot, to 3, where the uncut bid would have bought two, to 4."""
    sells = FlowEvents(
        time=np.full(4, 0.5),
        kind=np.full(4, MARKET),
        side=np.full(4, SELL),
        price=np.zeros(4, np.int64),
        rank=np.zeros(4, np.int64),
        initial_depth=(1, 1, 5, 5),
    )
    kwargs = {"flow": sells, "session_length": 2.0, "order_size": 2, "max_inventory": 3}
    action = np.array([4, 0, 1])  # bid one tick behind, keep the ask, buy at market
    if books:
        env = LimitOrderBookVecEnv(books, 1, **kwargs)
        env.reset(seed=0)
        env.step({"trader_0": np.tile(action, (books, 1))})
        inventory = env.books.inventory[:, 0]
    else:
        env = LimitOrderBookMarket(1, **kwargs)
        env.reset(seed=0)
        env.step({"trader_0": action})
        inventory = env.inventory
    assert inventory.tolist() == [3] * max(books, 1)
