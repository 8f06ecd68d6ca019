"""Invariants of the LOB engine's books, checked by the LOB tests after every step or event."""

from __future__ import annotations

import numpy as np

from sekai.finance import BUY, SELL
from sekai.finance.lob.level_books import AHEAD, PRICE, SEQ, SIZE, LevelBooks


def check_books(books: LevelBooks) -> None:
    """Conservation, never-crossed books, consistent quotes, level volumes and queues in every
    book."""
    config = books.config
    assert (books.accounts_inventory.sum(axis=1) == 0).all()
    cash = books.accounts_cash.sum(axis=1)
    assert np.allclose(cash, config.n_traders * config.initial_cash, rtol=0, atol=1e-6)
    bid, ask = books.best[:, BUY], books.best[:, SELL]
    assert ((bid < 0) | (ask >= config.n_ticks) | (bid < ask)).all()
    ticks = np.arange(config.n_ticks)
    for side, best in ((BUY, bid), (SELL, ask)):
        filled = books.volume[:, side] > 0
        beyond = ticks > best[:, None] if side == BUY else ticks < best[:, None]
        assert not (filled & beyond).any()  # nothing better than the best
        inside = (best >= 0) & (best < config.n_ticks)
        assert (books.volume[inside, side, best[inside]] > 0).all()
    check_queue_positions(books)


def check_queue_positions(books: LevelBooks) -> None:
    """Each level's volume is its public lots plus the traders' orders resting there; each
    resting order holds lots, and its public lots ahead fit the level and never fall behind
    those of a trader's order placed before it at the same tick."""
    orders = books.orders  # (n, 2, T, 4)
    price, ahead, seq = orders[..., PRICE], orders[..., AHEAD], orders[..., SEQ]
    live = price >= 0
    assert (orders[..., SIZE][live] > 0).all()
    assert (books.public >= 0).all()
    traders = np.zeros_like(books.public)
    book, side, _ = np.nonzero(live)
    np.add.at(traders, (book, side, price[live]), orders[..., SIZE][live])
    assert np.array_equal(books.volume, books.public + traders)
    public_there = np.take_along_axis(books.public, np.maximum(price, 0), axis=2)
    assert ((ahead >= 0) & (ahead <= public_there))[live].all()
    same_level = (
        live[..., :, None] & live[..., None, :] & (price[..., :, None] == price[..., None, :])
    )
    earlier = seq[..., :, None] < seq[..., None, :]
    assert not (same_level & earlier & (ahead[..., :, None] > ahead[..., None, :])).any()
