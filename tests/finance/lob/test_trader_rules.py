"""MarketConfig's rules for a trader's actions (masks, the check, the decoding), compiled row by
row, against a plain reading of the rules written here one value at a time, on random views."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sekai.finance import BUY, SELL
from sekai.finance.lob.market import MarketConfig, TraderView

KEEP, CANCEL, IMPROVE, JOIN, BEHIND, TWO_BEHIND = range(6)
OFFSETS = {IMPROVE: 1, JOIN: 0, BEHIND: -1, TWO_BEHIND: -2}  # a bid's; an ask's is the opposite


def reference_masks(config: MarketConfig, view: TraderView, r: int, halted: bool):  # type: ignore[no-untyped-def]
    """Row r's masks, from the rules: keep always; cancel with an own quote; a quote at the
    best's offset while the side has a best, the tick is on the grid, the cap leaves room for
    an order and (bids) the cash pays for it, improving only inside a spread of 2+ ticks; a
    market order while others' lots rest on the other side and the cap leaves room, a buy
    only if the cash pays for sweeping the visible asks (the last visible price beyond them).
    While halted, only keep and cancel."""
    size = config.order_size
    bid_best, ask_best = int(view.bid_prices[r, 0]), int(view.ask_prices[r, 0])
    inventory, cash = int(view.inventory[r]), float(view.cash[r])
    masks = []
    for side, best, own in ((BUY, bid_best, view.own_bid[r]), (SELL, ask_best, view.own_ask[r])):
        mask = [1, int(own[0] >= 0)]
        room = config.max_inventory - inventory if side == BUY else config.max_inventory + inventory
        for value in (IMPROVE, JOIN, BEHIND, TWO_BEHIND):
            tick = best + (OFFSETS[value] if side == BUY else -OFFSETS[value])
            ok = not halted and best >= 0 and room >= size and 0 <= tick < config.n_ticks
            if side == BUY:
                ok = ok and cash >= config.price(tick) * size
            if value == IMPROVE:
                ok = ok and bid_best >= 0 and ask_best >= 0 and ask_best - bid_best > 1
            mask.append(int(ok))
        masks.append(mask)
    own_ask_tick, own_ask_lots = int(view.own_ask[r, 0]), int(view.own_ask[r, 1])
    asks = [
        (int(t), int(v) - (own_ask_lots if own_ask_tick >= 0 and t == own_ask_tick else 0))
        for t, v in zip(view.ask_prices[r], view.ask_volumes[r], strict=True)
    ]
    prices = [config.price(max(t, 0)) for t, _ in asks]
    if asks[0][1] >= size:  # the best level holds the whole order
        cost = size * prices[0]
    else:  # each level's lots up to what is left, then the last visible price for the rest
        cost, before, taken = 0.0, 0, 0
        for (_, lots), price in zip(asks, prices, strict=True):
            take = min(max(size - before, 0), lots)
            cost, before, taken = cost + take * price, before + lots, taken + take
        cost += (size - taken) * max(prices)
    others_ask = int(view.ask_volumes[r].sum()) - own_ask_lots > 0
    others_bid = int(view.bid_volumes[r].sum()) - int(view.own_bid[r, 1]) > 0
    buy = others_ask and config.max_inventory - inventory >= size and cash >= cost
    sell = others_bid and config.max_inventory + inventory >= size
    masks.append([1, int(buy and not halted), int(sell and not halted)])
    return masks


@st.composite
def views(draw):  # type: ignore[no-untyped-def]
    """A config and m rows of views: books of 1 to 3 levels a side, anywhere on a small grid
    (empty sides, one-tick and wide spreads, the grid's edges), own quotes at a level or not,
    inventories near the cap and cash near what an order costs."""
    levels, m = draw(st.integers(1, 3)), draw(st.integers(1, 12))
    config = MarketConfig.build(
        1,
        n_ticks=12,
        tick_size=0.5,
        initial_price=3.0,
        order_size=draw(st.integers(1, 4)),
        max_inventory=draw(st.integers(1, 5)),
        book_levels=levels,
    )
    rows = []
    for _ in range(m):
        bid = draw(st.integers(-1, 10))
        ask = draw(st.integers(bid + 1, 11)) if draw(st.booleans()) else -1
        sides = []
        for best, step in ((bid, -1), (ask, 1)):
            ticks, lots = [], []
            tick = best
            for _ in range(levels):
                if 0 <= tick < 12 and best >= 0:
                    ticks.append(tick)
                    lots.append(draw(st.integers(1, 6)))
                    tick += step * draw(st.integers(1, 2))
                else:
                    ticks.append(-1)
                    lots.append(0)
            sides.append((ticks, lots))
        owns = []
        for ticks, _ in sides:
            if draw(st.booleans()):
                owns.append([-1, 0])
            else:
                j = draw(st.integers(0, levels - 1))
                tick = ticks[j] if ticks[j] >= 0 else draw(st.integers(0, 11))
                owns.append([tick, draw(st.integers(1, 4))])
        inventory = draw(st.integers(-config.max_inventory - 1, config.max_inventory + 1))
        cash = draw(st.integers(0, 80)) / 2  # prices are halves: cash often pays exactly
        rows.append((sides, owns, inventory, cash))
    view = TraderView(
        np.array([r[0][0][0] for r in rows], np.int64),
        np.array([r[0][0][1] for r in rows], np.int64),
        np.array([r[0][1][0] for r in rows], np.int64),
        np.array([r[0][1][1] for r in rows], np.int64),
        np.array([r[2] for r in rows], np.int64),
        np.array([r[3] for r in rows], np.float64),
        np.array([r[1][0] for r in rows], np.int64),
        np.array([r[1][1] for r in rows], np.int64),
    )
    halted = np.array([draw(st.booleans()) for _ in range(m)])
    actions = np.array(
        [[draw(st.integers(0, 5)), draw(st.integers(0, 5)), draw(st.integers(0, 2))] for _ in rows]
    )
    return config, view, halted, actions


@settings(max_examples=300, deadline=None)
@given(views())
def test_masks_the_check_and_the_decoding_follow_the_rules_row_by_row(case) -> None:  # type: ignore[no-untyped-def]
    config, view, halted, actions = case
    masks = config.masks(view, halted)
    (bids, asks, sides), refused = config.decide(view, halted, actions)
    for r in range(len(actions)):
        expected = reference_masks(config, view, r, bool(halted[r]))
        assert [m[r].tolist() for m in masks] == expected, r
        allowed = [expected[e][actions[r, e]] == 1 for e in range(3)]
        kept = [actions[r, e] if allowed[e] else 0 for e in range(3)]
        forbidden = [e for e in range(3) if not allowed[e]]
        assert refused[r].tolist() == [len(forbidden), forbidden[0] if forbidden else -1]
        for side, (best, got) in enumerate(
            ((view.bid_prices[r, 0], bids), (view.ask_prices[r, 0], asks))
        ):
            value = kept[side]
            offset = OFFSETS.get(value, 0) * (1 if side == 0 else -1)
            assert got[r] == {KEEP: -1, CANCEL: -2}.get(value, best + offset)
        assert sides[r] == (-1, BUY, SELL)[kept[2]]
    # decode: the same check and decoding on a book trading as usual, or the error
    free, refused_free = config.decide(view, np.zeros(len(actions), bool), actions)
    if refused_free[:, 0].any():
        with pytest.raises(ValueError, match="is masked as impossible now"):
            config.decode(view, actions, "t")
    else:
        decoded = config.decode(view, actions, "t")
        assert [d.tolist() for d in decoded] == [d.tolist() for d in free]


def test_decode_names_the_first_forbidden_entry_over_all_rows() -> None:
    """The bid is checked before the ask and the market order, whichever row they are in."""
    config = MarketConfig.build(1, n_ticks=12, tick_size=0.5, initial_price=3.0, book_levels=1)
    one = np.array([[5], [5]], np.int64)
    view = TraderView(
        one, one, one + 1, one, np.zeros(2, np.int64), np.full(2, 100.0),
        np.array([[-1, 0]] * 2), np.array([[-1, 0]] * 2),
    )  # fmt: skip
    actions = np.array(
        [[0, 1, 0], [2, 0, 0]]
    )  # row 0 cancels no ask; row 1 improves a 1-tick spread
    with pytest.raises(ValueError, match=r"t: the bid instruction 2 \('improve'\)"):
        config.decode(view, actions, "t")


@pytest.mark.parametrize(("cash", "buys"), [(10.0, True), (9.5, False)])
def test_a_market_buy_needs_the_cash_to_sweep_the_visible_asks_less_its_own(cash, buys) -> None:
    """Three lots against asks of 2 lots at $3.00 (one of them the trader's own) and 1 at
    $3.50, and nothing beyond: 1 x 3.00 + 1 x 3.50 + the missing lot at the last visible
    price, 3.50, is $10.00."""
    config = MarketConfig.build(
        1, n_ticks=12, tick_size=0.5, initial_price=3.0, order_size=3, book_levels=3
    )
    view = TraderView(
        np.array([[5, -1, -1]]), np.array([[4, 0, 0]]),
        np.array([[6, 7, -1]]), np.array([[2, 1, 0]]),
        np.zeros(1, np.int64), np.array([cash]),
        np.array([[-1, 0]]), np.array([[6, 1]]),
    )  # fmt: skip
    assert config.masks(view)[2][0].tolist() == [1, int(buys), 1]


def test_the_compiled_rules_number_the_instructions_as_the_action_space_names_them() -> None:
    from sekai.finance.lob import _trader_rows
    from sekai.finance.lob.market import INSTRUCTIONS

    numbered = (_trader_rows.KEEP, _trader_rows.CANCEL, _trader_rows.IMPROVE)
    assert [INSTRUCTIONS[i] for i in numbered] == ["keep", "cancel", "improve"]
    assert INSTRUCTIONS[JOIN] == "join" and INSTRUCTIONS[TWO_BEHIND] == "two ticks behind"
