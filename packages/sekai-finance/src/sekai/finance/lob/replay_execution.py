"""Selling a block on replayed days: the execution market ``ReplayExecution-v0`` and its
native vector env drive. Each window of the replay market (``replay_model``, one agent)
starts holding ``block`` lots and sells them with market orders that walk the window's book
(with ``impact``, taking the real lots they meet out of it), by the end of the episode. The
reward is the implementation shortfall's negative against the mid at arrival, step by step."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from sekai.finance.arguments import check_box_actions
from sekai.finance.lob._replay_windows import KEEP_ORDER, NO_MARKET
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.replay_model import ReplayModel, ReplayTerms


def observation_size(book_levels: int) -> int:
    """The observation's length with ``book_levels`` levels shown."""
    return 4 + 2 * book_levels


class ReplayExecution:
    """``num_envs`` windows of the replay market, each selling a block of ``block`` lots.

    Action per window: ``[fraction]`` in [0, 1], the fraction of the lots still held to sell
    at market now (rounded to whole lots); the last step sells all that is left. The episode
    ends when nothing is left or at its last step. Lots the book's ``book_levels`` levels
    cannot take then are valued at the deepest bid left (the mid, with no bid): a block too
    large for the book shows as a cost, not as lots that vanish.
    """

    def __init__(self, terms: ReplayTerms, num_envs: int, block: int) -> None:
        self.model = ReplayModel(terms, num_envs)
        self.block = block
        self.arrival_mid = np.zeros(num_envs)
        self.shortfall = np.zeros(num_envs)  # dollars: the block's arrival value less so far
        self.sold = np.zeros(num_envs, np.int64)  # lots the last step sold
        self.unsold = np.zeros(num_envs, np.int64)  # lots left when the episode ended

    @property
    def terms(self) -> ReplayTerms:
        return self.model.terms

    def reset(
        self, indices: NDArray[np.int64], options: list[dict[str, Any] | None], rng: Any
    ) -> dict[str, Any]:
        model = self.model
        infos = model.reset(indices, options, rng)
        model.inventory[indices, 0] = self.block
        self.arrival_mid[indices] = model.mid[indices]
        self.shortfall[indices] = 0.0
        self.sold[indices] = 0
        self.unsold[indices] = 0
        return self._infos(infos, indices)

    def observe(self) -> NDArray[np.float32]:
        """Per window: the lots held over the block, the steps left over the episode's, the
        mid the agent sees less the arrival mid and the spread (ticks), the lots at each of the
        ``book_levels`` best bids over the block, how far below the best bid the deeper levels
        are (ticks, 0 past the last), and the lots at the best ask over the block."""
        model, terms = self.model, self.terms
        levels = terms.market.book_levels
        view = model.view(0)
        bid, ask = view.bid_prices, view.ask_prices
        out = np.zeros((model.num_envs, observation_size(levels)), np.float32)
        out[:, 0] = model.inventory[:, 0] / self.block
        out[:, 1] = (terms.episode_steps - model.steps) / terms.episode_steps
        both = (bid[:, 0] >= 0) & (ask[:, 0] >= 0)
        price = model._price
        seen = (price[np.maximum(bid[:, 0], 0)] + price[np.maximum(ask[:, 0], 0)]) / 2
        mid = np.where(both, seen, model.mid)
        out[:, 2] = (mid - self.arrival_mid) / terms.market.tick_size
        out[:, 3] = np.where(both, ask[:, 0] - bid[:, 0], 0)
        out[:, 4 : 4 + levels] = view.bid_volumes / self.block
        below = np.where(bid[:, 1:] >= 0, bid[:, :1] - bid[:, 1:], 0)
        out[:, 4 + levels : 3 + 2 * levels] = below
        out[:, 3 + 2 * levels] = view.ask_volumes[:, 0] / self.block
        return out

    def step(self, actions: NDArray[Any], rng: Any) -> tuple[Any, ...]:
        model, terms = self.model, self.terms
        n = model.num_envs
        fraction = check_box_actions(actions, 0.0, 1.0, (n, 1), "fractions of the lots held")
        held = model.inventory[:, 0].copy()
        last = model.steps + 1 >= terms.episode_steps
        lots = np.where(last, held, np.minimum(np.rint(fraction[:, 0] * held), held))
        lots = lots.astype(np.int64)[:, None]
        keep = np.full((n, 1), KEEP_ORDER, np.int64)
        sides = np.where(lots > 0, SELL, NO_MARKET)
        cash = model.cash[:, 0].copy()
        _, _, _, infos = model.advance(keep, keep, sides, lots)
        left = model.inventory[:, 0]
        self.sold = held - left
        rewards = model.cash[:, 0] - cash - self.sold * self.arrival_mid
        ended = last | (left == 0)
        self.unsold = np.where(ended, left, 0)
        stuck = np.flatnonzero(self.unsold)
        if len(stuck):
            rewards[stuck] += self.unsold[stuck] * (self._last_bid(stuck) - self.arrival_mid[stuck])
        self.shortfall -= rewards
        everyone = np.arange(n)
        return rewards, ended, np.zeros(n, bool), self._infos(infos, everyone)

    def _last_bid(self, windows: NDArray[np.int64]) -> NDArray[np.float64]:
        """The price of the deepest bid level of ``windows``' books now (the mid if none)."""
        model = self.model
        top = model._top(model.cursor[windows], windows)[:, BUY, :, 0]
        deepest = np.where(top >= 0, top, top.max(axis=1, keepdims=True)).min(axis=1)
        return np.where(deepest >= 0, model._price[np.maximum(deepest, 0)], model.mid[windows])  # type: ignore[no-any-return]

    def _infos(self, infos: dict[str, Any], indices: NDArray[np.int64]) -> dict[str, Any]:
        return {
            "day": infos["day"],
            "timestamp": infos["timestamp"],
            "mid_price": infos["mid_price"],
            "arrival_mid": self.arrival_mid[indices].copy(),
            "sold": self.sold[indices].copy(),
            "remaining": self.model.inventory[indices, 0].copy(),
            "shortfall": self.shortfall[indices].copy(),
            "unsold": self.unsold[indices].copy(),
            "refused": infos["refused"],
        }

    # -- the env's state attributes ---------------------------------------------------------
    @property
    def mid_price(self) -> NDArray[np.float64]:
        return self.model.mid

    @property
    def remaining(self) -> NDArray[np.int64]:
        return self.model.inventory[:, 0]

    @property
    def proceeds(self) -> NDArray[np.float64]:
        """Dollars the block's sales have brought in this episode."""
        return self.model.cash[:, 0] - self.terms.market.initial_cash  # type: ignore[no-any-return]

    @property
    def timestamp(self) -> NDArray[np.float64]:
        return self.model.now()
