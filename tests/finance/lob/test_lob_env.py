"""LimitOrderBookMarket: schedule, masks, accounting, determinism, registry, rendering."""

from __future__ import annotations

import numpy as np
import pytest

import sekai
from sekai.envs.finance import LimitOrderBookMarket
from sekai.finance import BUY, SELL


def run_session(env: LimitOrderBookMarket, seed: int, check=None):  # type: ignore[no-untyped-def]
    """Play masked random actions to the end; call check(env, result) after every step."""
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(seed + i)
    result = env.reset(seed=seed)
    rewards = dict.fromkeys(env.possible_agents, 0.0)
    while not result.all_done:
        actions = {
            a: env.action_space(a).sample(mask=env.action_mask(a)) for a in result.observations
        }
        result = env.step(actions)
        for agent, reward in result.rewards.items():
            rewards[agent] += reward
        if check is not None:
            check(env, result)
    return result, rewards


def test_schedule_timestamps_and_final_observations() -> None:
    env = LimitOrderBookMarket(2, decision_intervals=[1.5, 2.0], session_length=6.0)
    result = env.reset(seed=0)
    seen = []
    while not result.all_done:
        stamps = {info["timestamp"] for info in result.info.values()}
        seen.append((stamps.pop(), sorted(result.observations)))
        result = env.step({a: np.zeros(3, np.int64) for a in result.observations})
    assert seen == [
        (0.0, ["trader_0", "trader_1"]),
        (1.5, ["trader_0"]),
        (2.0, ["trader_1"]),
        (3.0, ["trader_0"]),
        (4.0, ["trader_1"]),
        (4.5, ["trader_0"]),
    ]
    assert sorted(result.observations) == ["trader_0", "trader_1"]
    assert {info["timestamp"] for info in result.info.values()} == {6.0}
    assert all(result.terminated.values()) and env.agents == []
    assert result.observations["trader_0"][-1] == 0.0  # no time left
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})


def test_step_wants_actions_for_exactly_the_due_traders() -> None:
    env = LimitOrderBookMarket(3, decision_intervals=[1.0, 2.0, 5.0])
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"\['trader_0', 'trader_1', 'trader_2'\]"):
        env.step({"trader_0": np.zeros(3, np.int64)})


def test_masks_match_the_book_and_forbidden_actions_name_agent_and_instruction() -> None:
    env = LimitOrderBookMarket(1, max_inventory=1)
    env.reset(seed=0)
    bid, ask, market = env.action_mask("trader_0")
    assert bid.tolist() == [1, 0, 0, 1, 1, 1]  # no resting bid; the spread is one tick
    assert ask.tolist() == [1, 0, 0, 1, 1, 1]
    assert market.tolist() == [1, 1, 1]
    assert env.action_space("trader_0").contains(
        env.action_space("trader_0").sample(mask=env.action_mask("trader_0"))
    )
    with pytest.raises(ValueError, match=r"trader_0: the bid instruction 2 \('improve'\)"):
        env.step({"trader_0": np.array([2, 0, 0])})
    env.reset(seed=0)
    result = env.step({"trader_0": np.array([3, 0, 1])})  # join the bid, buy to the limit
    bid, _, market = env.action_mask("trader_0")
    assert env.inventory[0] == 1
    own_bid_lots = result.observations["trader_0"][23]
    assert bid[1] == (own_bid_lots > 0)  # cancelling needs a resting bid
    assert bid[2:].sum() == 0 and market.tolist() == [1, 0, 1]  # at the limit: no more buying
    with pytest.raises(ValueError, match=r"trader_0: the market order instruction 1 \('buy'\)"):
        env.step({"trader_0": np.array([0, 0, 1])})


def test_cash_limit_masks_buying() -> None:
    env = LimitOrderBookMarket(1, initial_cash=50.0)
    env.reset(seed=0)
    bid, _, market = env.action_mask("trader_0")
    assert bid[2:].sum() == 0 and market[1] == 0 and market[2] == 1


def test_shares_and_cash_are_conserved_and_the_book_never_crosses() -> None:
    env = LimitOrderBookMarket(3, decision_intervals=[1.0, 2.0, 5.0], session_length=30.0)
    start_cash = 3 * env.config.initial_cash

    def check(env, result):  # type: ignore[no-untyped-def]
        assert env.inventory.sum() + env.public_inventory == 0
        assert env.cash.sum() + env.public_cash == pytest.approx(start_cash, abs=1e-6)
        assert not env.book.is_crossed()

    _, _ = run_session(env, seed=3, check=check)
    assert env.book.fill_count > 0 and (env.inventory != 0).any()


def test_rewards_sum_to_the_change_in_marked_value() -> None:
    env = LimitOrderBookMarket(2, decision_intervals=[1.0, 3.0], session_length=20.0)
    _, rewards = run_session(env, seed=1)
    book = env.book
    assert book.best_bid is not None and book.best_ask is not None
    values = env.cash + env.inventory * env.config.price((book.best_bid + book.best_ask) / 2)
    for i, agent in enumerate(env.possible_agents):
        assert rewards[agent] == pytest.approx(values[i] - env.config.initial_cash, abs=1e-6)


def test_same_seed_same_session() -> None:
    def trace(seed: int) -> list[float]:
        env = LimitOrderBookMarket(2, session_length=15.0)
        _, rewards = run_session(env, seed=seed)
        return [*rewards.values(), env.book.fill_count, float(env.cash.sum())]

    assert trace(7) == trace(7)
    assert trace(7) != trace(8)


def test_registered_without_time_limit_and_renders_ansi() -> None:
    env = sekai.make("LimitOrderBook-v0", n_traders=2, session_length=5.0, render_mode="ansi")
    assert isinstance(env, LimitOrderBookMarket) and env.spec.max_episode_steps is None
    env.reset(seed=0)
    env.step({a: np.array([3, 3, 1]) for a in env.possible_agents})
    text = env.render()
    assert "ask" in text and "bid" in text and "trade" in text
    assert "100.00" in text  # the first best bid


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"decision_intervals": [1.0]}, ValueError, "one interval per trader"),
        ({"decision_intervals": [1.0, 0.0]}, ValueError, "finite and > 0"),
        ({"session_length": -1.0}, ValueError, "session_length"),
        ({"order_size": 0}, ValueError, "order_size"),
        ({"flow": "cst"}, TypeError, "flow must be"),
        ({"render_mode": "svg"}, ValueError, "render_mode"),
    ],
)
def test_bad_parameters(kwargs, error, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(error, match=match):
        LimitOrderBookMarket(2, **kwargs)


def test_observation_holds_book_inventory_cash_orders_and_time() -> None:
    env = LimitOrderBookMarket(1, session_length=10.0, book_levels=3)
    obs = env.reset(seed=0).observations["trader_0"]
    assert env.observation_space("trader_0").contains(obs)
    assert obs[:3].tolist() == pytest.approx([100.0, 99.99, 99.98])  # bid prices
    assert obs[6:9].tolist() == pytest.approx([100.01, 100.02, 100.03])  # ask prices
    assert obs[12:14].tolist() == [0.0, 10_000.0]  # inventory, cash
    assert obs[-1] == 10.0
    result = env.step({"trader_0": np.array([3, 5, 0])})  # join the bid, ask two ticks behind
    own = result.observations["trader_0"][14:18]
    sells = [f for f in env.book.fills if f.maker_owner == 1 and f.taker_side == SELL]
    assert own[1] in (0.0, 1.0) and (own[0] == pytest.approx(100.0) or sells)


CAPPED = {"decision_intervals": [0.5, 1.0, 2.0], "session_length": 120.0, "order_size": 2}


@pytest.mark.parametrize("seed", range(6))
def test_inventory_never_passes_the_cap_over_long_random_sessions(seed: int) -> None:
    """240 steps of masked random actions: no fill ever takes a trader past max_inventory (the
    tape, replayed fill by fill after each step), and each resting quote fits in the room the
    cap leaves."""
    env = LimitOrderBookMarket(3, max_inventory=3, **CAPPED)
    cap = env.config.max_inventory
    running = np.zeros(env.config.n_traders + 1, np.int64)  # owner 0: the public
    seen, reached = 0, 0

    def check(env, result):  # type: ignore[no-untyped-def]
        nonlocal seen, reached
        new = env.book.fill_count - seen
        assert new <= len(env.book.fills)  # the tape still holds every fill of the step
        for fill in env.book.fills[len(env.book.fills) - new :]:
            buyer, seller = (
                (fill.taker_owner, fill.maker_owner)
                if fill.taker_side == BUY
                else (fill.maker_owner, fill.taker_owner)
            )
            running[buyer] += 1
            running[seller] -= 1
            reached = max(reached, int(np.abs(running[1:]).max()))
        seen = env.book.fill_count
        for i in range(env.config.n_traders):
            for side, sign in ((BUY, 1), (SELL, -1)):
                lots = sum(lots for owner, lots in _own_orders(env, side) if owner == i + 1)
                assert sign * env.inventory[i] + lots <= cap

    run_session(env, seed=seed, check=check)
    assert np.array_equal(running[1:], env.inventory)
    assert reached == cap  # the traders pressed against the cap, and it held


def _own_orders(env: LimitOrderBookMarket, side: int) -> list[tuple[int, int]]:
    """The traders' resting orders on ``side`` as (owner, lots), read from the book's queues."""
    return [
        order
        for price, _ in env.book.depth(side, env.config.n_ticks)
        for order in env.book.queue(side, price)
        if order[0] != 0
    ]
