"""The compiled loop of ``order_replay.replay_orders``: a whole day replayed as one window of
one agent, its instructions reaching the book at their messages, in one call. Each message and
each instruction goes through ``_replay_windows``' own functions (``_message``,
``_corrections``, ``_instruct``, which fill and account through ``_fill`` and ``_account``) on
a one-window state, so that the rules are the replay env's; this loop only orders the calls and
moves each call's fills, with the message and the instruction that made them, to the output.
Compiled as ``_engine``'s kernels are, without reference counting: it allocates nothing."""

from __future__ import annotations

import numpy as np

from sekai.finance.lob._engine import inline, jit
from sekai.finance.lob._replay_windows import (
    FILLS,
    N_FILLS,
    ORDERS,
    REFUSED,
    _corrections,
    _instruct,
    _message,
)
from sekai.finance.lob.book import BUY, SELL

OUT_FIELDS = 6  # message, side (BUY: the agent bought), tick, lots, 1 maker / 0 taker, row


@jit
def replay_schedule(tape, entry, bids, asks, markets, lots, terms, state, out, refused):  # type: ignore[no-untyped-def]
    """Replay the messages of the one-day ``tape`` with the instruction of row i
    (``_instruct``'s ``bids[i]``, ``asks[i]``, ``markets[i]``, ``lots[i]``) reaching the book
    before message ``entry[i]`` (ascending), after the rows before it. ``state`` is
    ``_replay_windows``' state of one window and one agent, its fills buffer holding what one
    call makes (one fill a message, one a level walked by a market order). Each fill goes to
    the next row of ``out`` (``OUT_FIELDS``), with the row of the quote that rested or of the
    market order; ``refused[i]``: row i reached a halted book. Messages that find no quote
    resting are skipped: they change nothing. Returns the number of fills (more than
    ``len(out)`` if it was too short, those past its end not written)."""
    orders = state[ORDERS]
    rows = (-1, -1)  # per side, the row whose quote rests
    k = m = 0
    for i in range(len(entry) + 1):
        until = entry[i] if i < len(entry) else len(tape[0])
        if orders[0, 0, BUY, 0] >= 0 or orders[0, 0, SELL, 0] >= 0:
            fix = np.searchsorted(tape[12], k)  # the first correction after message k or later
            while k < until and (orders[0, 0, BUY, 0] >= 0 or orders[0, 0, SELL, 0] >= 0):
                _message(tape, k, 0, terms, state)
                m = _collect(state, k, -1, rows, out, m)
                fix = _corrections(tape, k, fix, 0, state)
                k += 1
        if i == len(entry):
            return m
        k = until
        bid, ask = orders[0, 0, BUY, 0], orders[0, 0, SELL, 0]
        refusals = state[REFUSED][0]
        _instruct(tape, k, 0, 0, bids[i], asks[i], markets[i], lots[i], terms, state)
        refused[i] = state[REFUSED][0] > refusals
        # a quote placed now (one at the tick already resting is kept: so is its row)
        if bids[i] >= 0 and bids[i] != bid and orders[0, 0, BUY, 0] == bids[i]:
            rows = (i, rows[SELL])
        if asks[i] >= 0 and asks[i] != ask and orders[0, 0, SELL, 0] == asks[i]:
            rows = (rows[BUY], i)
        m = _collect(state, k, i, rows, out, m)
    return m


@inline
def _collect(state, k, row, rows, out, m):  # type: ignore[no-untyped-def]
    """Move the fills of the last call (at message ``k``) from the state's buffer to
    ``out[m:]``: a maker's with the row of the quote resting on its side (``rows``), a
    taker's with ``row``. Returns the next ``m``."""
    fills, n_fills = state[FILLS], state[N_FILLS]
    for j in range(n_fills[0]):
        side, maker = fills[0, j, 1], fills[0, j, 4]
        if m < len(out):
            out[m, 0], out[m, 1], out[m, 2] = k, side, fills[0, j, 2]
            out[m, 3], out[m, 4] = fills[0, j, 3], maker
            out[m, 5] = rows[side] if maker else row
        m += 1
    n_fills[0] = 0
    return m
