"""LobsterReplayMarket: several agents, each with its own latencies, trading inside a
replayed LOBSTER day (of one day or a set). A thin driver over the replay market
(``sekai.finance.lob.replay_model``) with one window; see docs/limit-order-book.md, "A real day
as an env"."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from sekai.finance.arguments import check_int
from sekai.finance.lob.market import action_space_for
from sekai.finance.lob.replay_model import ReplayModel, build_terms
from sekai.multi_agent import MAResetResult, MAStepResult, MultiAgentEnv
from sekai.spaces import Box


class LobsterReplayMarket(MultiAgentEnv[np.ndarray, np.ndarray, str]):
    """``n_agents`` agents ``agent_0 ..`` in a window of one replayed day (of one day or a
    set, as ``LobsterReplayEnv``), every agent deciding every step.

    Takes ``LobsterReplayEnv``'s parameters; ``entry_latency`` and ``data_latency`` are
    a number for every agent or a sequence of one per agent (seconds). Agent orders are
    virtual, so agents never trade with each other: each sees the replayed book, its own
    orders and account. An action the masks forbid is a ValueError naming it, as in
    LimitOrderBookMarket. ``info[agent]`` holds the window's ``day``, ``timestamp``,
    ``message`` (the index in its day of the next message to replay), ``mid_price``, the
    instructions ``refused`` so far and the step's ``fills`` and ``ignored`` entries (always
    0 here)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": [], "render_fps": 30}

    def __init__(
        self,
        n_agents: int = 2,
        *,
        messages: Any = None,
        orderbook: Any = None,
        entry_latency: Any = 0.0,
        data_latency: Any = 0.0,
        **kwargs: Any,
    ) -> None:
        n_agents = check_int("n_agents", n_agents, 1)
        defaults = {
            "tick": 100,
            "price_offset": 0,
            "symbol": None,
            "days": None,
            "n_ticks": None,
            "step_seconds": 1.0,
            "episode_steps": 300,
            "order_size": 1,
            "max_inventory": 10,
            "initial_cash": 10_000.0,
            "book_levels": 5,
            "last_trades": 5,
            "maker_fee": 0.0,
            "taker_fee": 0.0,
            "sampler": None,
        }
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise TypeError(f"unknown parameters {sorted(unknown)}; known: {sorted(defaults)}")
        self.terms = build_terms(
            n_agents,
            messages=messages,
            orderbook=orderbook,
            entry_latency=entry_latency,
            data_latency=data_latency,
            **{**defaults, **kwargs},
        )
        self.model = ReplayModel(self.terms, 1)
        self.possible_agents = [f"agent_{i}" for i in range(n_agents)]
        self.agents = []
        space = Box(-np.inf, np.inf, shape=(self.terms.observation_size,), dtype=np.float32)
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {a: action_space_for() for a in self.possible_agents}
        self._set_render_mode(None)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> MAResetResult:
        self._set_rng(seed)
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
        infos = self.model.reset(np.zeros(1, np.int64), [options], self.rng)
        self.agents = list(self.possible_agents)
        return MAResetResult(self._observations(), self._infos(infos))

    def step(self, actions: dict[str, Any]) -> MAStepResult:
        if not self.agents:
            raise RuntimeError("the episode is over: call reset() before step()")
        if not isinstance(actions, dict) or set(actions) != set(self.possible_agents):
            given = sorted(actions) if isinstance(actions, dict) else actions
            raise ValueError(
                f"step() takes one action for every agent, {self.possible_agents}, got {given!r}"
            )
        for agent, action in actions.items():
            if not self.action_spaces[agent].contains(action):
                raise ValueError(
                    f"{agent}: action {action!r} is not in {self.action_spaces[agent]}"
                )
        stacked = np.array([[actions[a] for a in self.possible_agents]], np.int64)
        rewards, terminated, truncated, infos = self.model.step(
            stacked, self.possible_agents, strict=True
        )
        observations = self._observations()
        done = bool(truncated[0])
        if done:
            self.agents = []
        return MAStepResult(
            observations,
            dict(zip(self.possible_agents, rewards[0].tolist(), strict=True)),
            dict.fromkeys(self.possible_agents, bool(terminated[0])),
            dict.fromkeys(self.possible_agents, done),
            self._infos(infos),
        )

    def action_mask(self, agent: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Which values of each entry of ``agent``'s action are possible now (1) or not (0)."""
        if agent not in self.possible_agents:
            raise KeyError(f"no agent {agent!r}; agents: {self.possible_agents}")
        masks = self.model.masks(self.possible_agents.index(agent))
        return masks[0][0], masks[1][0], masks[2][0]

    def _observations(self) -> dict[str, np.ndarray]:
        rows = self.model.observe()[0]
        return {agent: rows[i] for i, agent in enumerate(self.possible_agents)}

    def _infos(self, arrays: dict[str, Any]) -> dict[str, dict[str, Any]]:
        info = {key: value[0].item() for key, value in arrays.items()}
        return {agent: dict(info) for agent in self.possible_agents}
