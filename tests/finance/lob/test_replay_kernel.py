"""The compiled replay over level arrays gives ``lobster.replay``'s book after every message of
the generated LOBSTER days (messages alone, from the opening book)."""

from __future__ import annotations

import numpy as np
import pytest
from lobster_days import N_TICKS, generate_day, ship

from sekai.finance import BUY, SELL
from sekai.finance._replay_kernel import replay_levels
from sekai.finance.lobster import initial_book, replay


@pytest.mark.parametrize(("seed", "levels"), [(0, 5), (0, 10), (1, 5), (2, 10)])
def test_the_compiled_replay_is_the_order_book_replay_after_every_message(
    seed: int, levels: int
) -> None:
    file = ship(generate_day(seed), levels)
    book = initial_book(file.messages, file.orderbook, n_ticks=N_TICKS)
    opening = np.zeros((2, N_TICKS), np.int64)
    for side in (BUY, SELL):
        for tick, volume in book.depth(side, N_TICKS):
            opening[side, tick] = volume
    top, volume, unmatched = replay_levels(file.messages, opening, n_ticks=N_TICKS, levels=levels)
    assert top.shape == (len(file.messages), 2, levels, 2)
    result = None
    for k in range(len(file.messages)):
        step = replay(book, file.messages[k : k + 1])
        result = step if result is None else [a + b for a, b in zip(result, step, strict=True)]
        for side in (BUY, SELL):
            levels_k = [(int(t), int(v)) for t, v in top[k, side] if v]
            assert levels_k == book.depth(side, levels), (k, side)
    assert result is not None and unmatched == result[1] > 0
    for side in (BUY, SELL):
        assert [(int(t), int(volume[side, t])) for t in np.flatnonzero(volume[side])] == sorted(
            book.depth(side, N_TICKS)
        )
