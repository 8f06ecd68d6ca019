"""LobsterReplay-v0: trade inside replayed LOBSTER days, with orders in the real FIFO queue.

A thin driver over the replay market (``sekai.finance.lob.replay_model``) with one window and
one agent; its native vector env steps many windows in the same compiled call. See
docs/limit-order-book.md, "A real day as an env".
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from sekai.envs.finance._parameters import ReadOnly
from sekai.envs.finance._pictures import Picture
from sekai.envs.finance._single import FinanceEnv, InfoArrays
from sekai.finance.lob.market import action_space_for
from sekai.finance.lob.replay_model import ReplayModel, ReplayTerms, build_terms
from sekai.spaces import Box, MultiDiscrete

AGENT = "agent"


class LobsterReplayEnv(FinanceEnv):
    """One agent quoting and trading inside replayed days, one window of one day per episode.

    Data: ``messages``, a day's order events (``sekai.finance.lob.events``, as every reader
    yields them), LOBSTER messages (``MESSAGE_DTYPE``) or a file's path in any format
    ``sekai.finance.lob.files.read_events`` reads (LOBSTER, ITCH 5.0, Databento MBO;
    ``symbol`` chooses the instrument of a file of several), and ``orderbook`` (level rows,
    one per event, or a LOBSTER orderbook file, optional: the opening book, see
    ``lobster.initial_book``, and the rows the replay is reconciled with after every
    event, as ``lobster.replay(..., orderbook=...)`` is; ``terms.days[d].reconciliations``
    counts the messages that needed it), priced as ``lobster.replay`` does (``tick``,
    ``price_offset``, ``n_ticks``: by default one grid for every day). A set of days is a
    list of each (``orderbook``: one per day, or None), each day replayed on its own. Without
    data, an hour of synthetic flow recorded as LOBSTER messages: real use passes files.

    An episode is ``episode_steps`` steps of ``step_seconds`` of exchange time inside one day,
    starting at a step of that day (its first message's time plus ``start`` steps): the
    ``sampler`` draws among the windows of every day, ``reset(options={"day": d, "start":
    step})`` chooses (``day`` only with one day optional; ``start`` omitted: drawn in day d);
    ``info["day"]`` says which day. The agent's
    orders are virtual by default: they sit in the real queues but never change the replayed
    book. With ``impact=True`` its trades take the real lots they meet out of its window's
    book, later messages about those orders adapted (``sekai.finance.lob._impact_windows``);
    impact needs the messages alone (no ``orderbook``: its rows describe the day without the
    agent).
    Actions, masks and the inventory cap are LimitOrderBookMarket's (``order_size``,
    ``max_inventory``, ``initial_cash``); an entry the masks forbid is done as keep (or no
    market order) and counted in ``info["ignored"]``, so every action of the space is valid;
    ``maker_fee`` and ``taker_fee`` are paid per lot.
    ``entry_latency`` delays the agent's instructions, ``data_latency`` its view of the book
    (seconds). The reward is the change in cash plus inventory at the mid, net of fees.
    """

    picture = Picture(price="mid_price", equity="value", holding="inventory")
    parameters: ClassVar[tuple[str, ...]] = (
        "metadata",
        "terms",
    )
    state_attributes: ClassVar[tuple[str, ...]] = (
        "mid_price",
        "value",
        "inventory",
        "cash",
        "fees",
        "timestamp",
    )
    terms = ReadOnly("the replayed day and the market's terms fix every window's arrays")

    def __init__(
        self,
        messages: Any = None,
        orderbook: Any = None,
        *,
        symbol: str | None = None,
        days: Any = None,
        tick: int = 100,
        price_offset: int = 0,
        n_ticks: int | None = None,
        step_seconds: float = 1.0,
        episode_steps: int = 300,
        order_size: int = 1,
        max_inventory: int = 10,
        initial_cash: float = 10_000.0,
        book_levels: int = 5,
        last_trades: int = 5,
        maker_fee: float = 0.0,
        taker_fee: float = 0.0,
        entry_latency: float = 0.0,
        data_latency: float = 0.0,
        sampler: Any = None,
        impact: bool = False,
        render_mode: str | None = None,
    ) -> None:
        self._terms: ReplayTerms = build_terms(
            1,
            messages=messages,
            orderbook=orderbook,
            symbol=symbol,
            days=days,
            tick=tick,
            price_offset=price_offset,
            n_ticks=n_ticks,
            step_seconds=step_seconds,
            episode_steps=episode_steps,
            order_size=order_size,
            max_inventory=max_inventory,
            initial_cash=initial_cash,
            book_levels=book_levels,
            last_trades=last_trades,
            maker_fee=maker_fee,
            taker_fee=taker_fee,
            entry_latency=entry_latency,
            data_latency=data_latency,
            sampler=sampler,
            impact=impact,
        )
        self.action_space = action_space_for()
        size = self._terms.observation_size
        self.observation_space = Box(-np.inf, np.inf, shape=(size,), dtype=np.float32)
        super().__init__(render_mode)

    def _make_model(self, num_envs: int) -> OneAgent:
        return OneAgent(ReplayModel(self._terms, num_envs))

    def action_mask(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Which values of each entry of the action are possible now (1) or not (0)."""
        return tuple(mask[0] for mask in self._model.masks())  # type: ignore[attr-defined,return-value]

    @property
    def model(self) -> ReplayModel:
        """The replay market this env drives (one window, one agent)."""
        return self._model.model  # type: ignore[attr-defined,no-any-return]

    def fills(self) -> np.ndarray:
        """The last step's fills: rows (agent, side, tick, lots, 1 maker / 0 taker)."""
        return self.model.fill_log(0)


class OneAgent:
    """The replay market with one agent per window, as ``FinanceEnv``'s model: actions
    ``(num_envs, 3)``, observations ``(num_envs, size)``, per-window state arrays."""

    def __init__(self, model: ReplayModel) -> None:
        self.model = model

    def reset(self, indices: np.ndarray, options: Any, rng: np.random.Generator) -> InfoArrays:
        return self.model.reset(indices, options, rng)

    def observe(self) -> np.ndarray:
        return self.model.observe()[:, 0]

    def step(self, actions: np.ndarray, rng: np.random.Generator) -> tuple[Any, ...]:
        actions = np.asarray(actions)
        if not _rows_of(_ACTION_SPACE, actions):
            raise ValueError(f"actions must be rows of {_ACTION_SPACE}, got {actions.tolist()!r}")
        rewards, terminated, truncated, infos = self.model.step(
            actions.astype(np.int64)[:, None], [AGENT], strict=False
        )
        return rewards[:, 0], terminated, truncated, infos

    def masks(self) -> tuple[np.ndarray, ...]:
        return self.model.masks(0)

    @property
    def mid_price(self) -> np.ndarray:
        return self.model.mid

    @property
    def value(self) -> np.ndarray:
        return self.model.values[:, 0]

    @property
    def inventory(self) -> np.ndarray:
        return self.model.inventory[:, 0]

    @property
    def cash(self) -> np.ndarray:
        return self.model.cash[:, 0]

    @property
    def fees(self) -> np.ndarray:
        return self.model.fees[:, 0]

    @property
    def timestamp(self) -> np.ndarray:
        return self.model.now()


_ACTION_SPACE = action_space_for()


def _rows_of(space: MultiDiscrete, actions: np.ndarray) -> bool:
    """Whether every row of ``actions`` is in ``space``, as ``space.contains`` judges one
    (integers, each entry in its range), checked for the whole batch at once: a loop over
    the rows cost a native batch of 1,024 windows most of its step."""
    return (
        actions.ndim == 2
        and actions.shape[1:] == space.shape
        and actions.dtype.kind in "iu"
        and np.can_cast(actions.dtype, space.dtype, "same_kind")
        and bool(((actions >= space.start) & (actions < space.start + space.nvec)).all())
    )
