"""``MarketConfig``'s rules for a trader's actions, compiled, one row (book) at a time: which
instructions are possible on the book the trader sees (the masks), the check of actions
against them, what the actions ask of the book (the instructions), and the observation of
the view. ``MarketConfig``'s
array methods and the replay market's step call these loops, so the rules are written once;
a replay step checks and decodes a thousand windows' actions in one pass over their views.

A view is ``TraderView``'s arrays, the book axis first; ``grid`` is ``(initial_price,
first_bid, tick_size)``, a tick's price ``initial_price + (tick - first_bid) * tick_size``
(``MarketConfig.price``); ``limits`` is ``(order_size, max_inventory, n_ticks)``. numba is
imported here and in the other kernels only.
"""

from __future__ import annotations

import numba
import numpy as np

from sekai.finance.lob._engine import inline, room
from sekai.finance.lob.book import BUY, SELL

_jit = numba.njit(cache=True, _nrt=False)  # type: ignore[call-overload]
# values of ``market.INSTRUCTIONS`` (this module does not import ``market``, which imports it)
KEEP, CANCEL, IMPROVE = 0, 1, 2
N_INSTRUCTIONS = 6
# each instruction's tick relative to the best bid (keep and cancel place nothing); an ask's
# is the opposite
_BID_OFFSETS = (0, 0, 1, 0, -1, -2)


@_jit
def masks(view, halted, grid, limits, bid, ask, market):  # type: ignore[no-untyped-def]
    """Every row's masks into ``bid``, ``ask`` (m, 6) and ``market`` (m, 3): 1 where the value
    is possible; on a ``halted`` row, only keep and cancel."""
    for r in range(len(halted)):
        _row_masks(view, r, halted[r], grid, limits, bid[r], ask[r], market[r])


@_jit
def decide(view, halted, actions, grid, limits, masked, decoded, refused):  # type: ignore[no-untyped-def]
    """Check every row's (bid, ask, market order) action against its masks and decode it.
    ``masked`` = (bid, ask, market) masks, as ``masks`` writes them; ``decoded`` = (bid,
    ask, side) (m,): the tick asked for (-1 keep, -2 cancel), the market order's side (-1
    none, BUY, SELL). A value the masks forbid is decoded as 0 (keep, none) and counted in
    ``refused[r, 0]``; ``refused[r, 1]`` is the first such entry (0 bid, 1 ask, 2 market
    order; -1 none), for a strict caller to name."""
    for r in range(len(halted)):
        _decide_row(view, r, halted[r], actions, grid, limits, masked, decoded, refused)


@inline
def _decide_row(view, r, halted, actions, grid, limits, masked, decoded, refused):  # type: ignore[no-untyped-def]
    bid_mask, ask_mask, market_mask = masked[0][r], masked[1][r], masked[2][r]
    _row_masks(view, r, halted, grid, limits, bid_mask, ask_mask, market_mask)
    refused[r, 0], refused[r, 1] = 0, -1
    quote_bid = _checked(actions[r, 0], bid_mask, refused, r, 0)
    quote_ask = _checked(actions[r, 1], ask_mask, refused, r, 1)
    market = _checked(actions[r, 2], market_mask, refused, r, 2)
    _decode(view, r, quote_bid, quote_ask, market, decoded)


@inline
def _checked(value, mask, refused, r, entry):  # type: ignore[no-untyped-def]
    """``value`` if ``mask`` allows it, else 0, counted in ``refused``."""
    if value == 0 or mask[value]:
        return value
    if refused[r, 1] < 0:
        refused[r, 1] = entry
    refused[r, 0] += 1
    return 0


@inline
def _decode(view, r, bid, ask, market, decoded):  # type: ignore[no-untyped-def]
    decoded[0][r] = _quote_tick(bid, view[0][r, 0], 1)
    decoded[1][r] = _quote_tick(ask, view[2][r, 0], -1)
    decoded[2][r] = -1 if market == 0 else (BUY if market == 1 else SELL)


@_jit
def observe(view, price, time_left, out):  # type: ignore[no-untyped-def]
    """Every row's observation into ``out`` (m, 4K + 7), ``time_left`` (m,) seconds; ``price``
    per tick, and 0.0 last (a tick of -1, no level)."""
    for r in range(len(out)):
        observe_row(view, r, price, time_left[r], out[r])


@inline
def observe_row(view, r, price, time_left, out):  # type: ignore[no-untyped-def]
    """Row r's observation (``MarketConfig.observation``) into ``out`` (4K + 7,)."""
    bid_prices, bid_volumes, ask_prices, ask_volumes, inventory, cash, own_bid, own_ask = view
    k = bid_prices.shape[1]
    for j in range(k):
        out[j] = price[bid_prices[r, j]]
        out[k + j] = bid_volumes[r, j]
        out[2 * k + j] = price[ask_prices[r, j]]
        out[3 * k + j] = ask_volumes[r, j]
    out[4 * k] = inventory[r]
    out[4 * k + 1] = cash[r]
    out[4 * k + 2] = price[own_bid[r, 0]]
    out[4 * k + 3] = own_bid[r, 1]
    out[4 * k + 4] = price[own_ask[r, 0]]
    out[4 * k + 5] = own_ask[r, 1]
    out[4 * k + 6] = time_left


@inline
def _quote_tick(chosen, best, sign):  # type: ignore[no-untyped-def]
    """The tick a quote instruction asks for (-1 keep, -2 cancel); ``sign`` 1 for a bid,
    -1 for an ask."""
    if chosen == KEEP:
        return -1
    if chosen == CANCEL:
        return -2
    return best + sign * _BID_OFFSETS[chosen]


@inline
def _price(grid, tick):  # type: ignore[no-untyped-def]
    return grid[0] + (tick - grid[1]) * grid[2]


@inline
def _row_masks(view, r, halted, grid, limits, bid, ask, market):  # type: ignore[no-untyped-def]
    """Row r's masks (see ``masks``)."""
    bid_prices, bid_volumes, ask_prices, ask_volumes, inventory, cash, own_bid, own_ask = view
    order_size, max_inventory = limits[0], limits[1]
    best_bid, best_ask = bid_prices[r, 0], ask_prices[r, 0]
    improves = best_bid >= 0 and best_ask >= 0 and best_ask - best_bid > 1
    _quote_mask(BUY, best_bid, own_bid[r, 0], inventory[r], cash[r], halted, grid, limits, bid)
    _quote_mask(SELL, best_ask, own_ask[r, 0], inventory[r], cash[r], halted, grid, limits, ask)
    if not improves:
        bid[IMPROVE] = ask[IMPROVE] = 0
    market[0] = 1
    market[1] = market[2] = 0
    if halted:
        return
    other_asks = _row_sum(ask_volumes, r) - own_ask[r, 1] > 0
    buys = other_asks and room(inventory[r], BUY, max_inventory) >= order_size
    if buys and cash[r] >= _sweep_cost(ask_prices, ask_volumes, own_ask, r, grid, order_size):
        market[1] = 1
    other_bids = _row_sum(bid_volumes, r) - own_bid[r, 1] > 0
    if other_bids and room(inventory[r], SELL, max_inventory) >= order_size:
        market[2] = 1


@inline
def _quote_mask(side, best, own, inventory, cash, halted, grid, limits, mask):  # type: ignore[no-untyped-def]
    """One side's mask of INSTRUCTIONS: a quote rests within the grid and the inventory cap,
    and a bid within the cash."""
    order_size, max_inventory, n_ticks = limits
    mask[KEEP] = 1
    mask[CANCEL] = 1 if own >= 0 else 0
    places = not halted and best >= 0 and room(inventory, side, max_inventory) >= order_size
    for i in range(IMPROVE, N_INSTRUCTIONS):
        possible = places
        if side == BUY:
            tick = best + _BID_OFFSETS[i]
            possible = possible and tick >= 0 and cash >= _price(grid, tick) * order_size
        else:
            possible = possible and best - _BID_OFFSETS[i] < n_ticks
        mask[i] = 1 if possible else 0


@inline
def _row_sum(values, r):  # type: ignore[no-untyped-def]
    total = 0
    for j in range(values.shape[1]):
        total += values[r, j]
    return total


@inline
def _sweep_cost(ask_prices, ask_volumes, own_ask, r, grid, size):  # type: ignore[no-untyped-def]
    """What a market buy of ``size`` lots costs at row r's visible asks, less the trader's own
    (the last visible price for any lots beyond them)."""
    own_price, own_lots = own_ask[r, 0], own_ask[r, 1]
    cost, before, taken, highest = 0.0, 0, 0, -np.inf
    for j in range(ask_prices.shape[1]):
        tick = ask_prices[r, j]
        volume = ask_volumes[r, j] - (own_lots if own_price >= 0 and tick == own_price else 0)
        price = _price(grid, max(tick, 0))
        if j == 0 and volume >= size:  # the best level holds them all
            return size * price
        lots = min(max(size - before, 0), volume)
        cost += lots * price
        before += volume
        taken += lots
        highest = max(highest, price)
    return cost + (size - taken) * highest
