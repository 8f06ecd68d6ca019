"""The base of the single finance envs: a thin driver over a market model of one env.

A finance env's market model is written once, over a leading env axis, in ``sekai.finance``;
the single env drives it with ``num_envs=1`` and its native vector env (``_native.py``) with
``num_envs=N``, both reading the parameters from a single env (``self`` here, ``vec.template``
there) every step. This module must not import sekai.vector: sekai-finance works without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Protocol, cast

import numpy as np

from sekai.core import Env, ResetResult, StepResult
from sekai.envs.finance._parameters import ReadOnly
from sekai.envs.finance._pictures import EpisodeTrace, Picture
from sekai.finance.arguments import check_box_actions

InfoArrays = dict[str, Any]


class OneEnvModel(Protocol):
    """What a single env's model provides: the array model with ``N = 1``, or a scalar form
    of it whose env steps it by its own ``step_one``."""

    def reset(
        self,
        indices: np.ndarray,
        options: list[dict[str, Any] | None],
        rng: np.random.Generator,
    ) -> InfoArrays:
        """Start an episode; return its info arrays (leading axis 1)."""
        ...

    def observe(self) -> np.ndarray:
        """The observation, a new array with a leading axis of 1."""
        ...


class MarketModel(Protocol):
    """What a finance env's model provides, for any number of envs ``N``."""

    def reset(
        self,
        indices: np.ndarray,
        options: list[dict[str, Any] | None],
        rng: np.random.Generator,
    ) -> InfoArrays:
        """Start episodes for ``indices``; return their info arrays (leading axis
        ``len(indices)``)."""
        ...

    def observe(self) -> np.ndarray:
        """Every env's observation, a new array with a leading ``N`` axis."""
        ...

    def step(
        self, actions: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, InfoArrays]:
        """Advance every env: ``(rewards, terminated, truncated, infos)``, leading axis ``N``.
        Info arrays that only some envs have this step are masked arrays (masked: absent)."""
        ...


class FinanceEnv(Env[np.ndarray, Any]):
    """Base of the single finance envs.

    Subclasses declare ``parameters`` (every parameter name; read-only ones as
    ``ReadOnly``, changeable ones as ``Parameter``) and ``state_attributes`` (names
    of the model's state arrays with a leading N axis, exposed read-only as env 0's row), set
    their parameters and spaces, then call ``super().__init__(render_mode)``, and implement
    ``_make_model``.
    ``render_mode="ansi"`` makes ``render`` return one line describing the last step;
    ``render_mode="rgb_array"`` a frame of the episode so far, showing the state attributes
    the subclass's ``picture`` names; ``render_mode="human"`` shows that frame in a window
    after the reset and each step.
    """

    metadata = ReadOnly(  # type: ignore[assignment]
        "it describes the env class",
        {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 30},
    )
    parameters: ClassVar[tuple[str, ...]] = ("metadata",)
    state_attributes: ClassVar[tuple[str, ...]] = ()
    picture: ClassVar[Picture]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in cls.state_attributes:
            if name not in cls.__dict__:
                setattr(cls, name, property(_state_scalar(name), doc=f"This env's {name}."))

    def __init__(self, render_mode: str | None = None) -> None:
        self._set_render_mode(render_mode)
        self._model = self._make_one_model()
        draws = render_mode in ("human", "rgb_array")
        self._trace = EpisodeTrace(self.picture, self) if draws else None
        self._last: ResetResult | StepResult = ResetResult(None, {})
        self._indices = np.zeros(1, dtype=np.int64)

    def _make_model(self, num_envs: int) -> MarketModel:
        """The market model for ``num_envs`` envs, reading its parameters from ``self``."""
        raise NotImplementedError

    def _make_one_model(self) -> OneEnvModel:
        """The model this single env drives: the array model with ``num_envs=1``. A subclass
        may return a scalar form of it instead, with a test proving they agree exactly."""
        return self._make_model(1)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        self._set_rng(seed)
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
        info = _row(self._model.reset(self._indices, [options], self.rng))
        self._last = ResetResult(self._model.observe()[0], info)
        if self._trace is not None:
            self._trace.start(self._state)
            self._show_frame()
        return self._last

    def step(self, action: Any) -> StepResult:
        self._check_shape(action)
        model = cast(MarketModel, self._model)  # a subclass with a scalar form steps it itself
        rewards, terminated, truncated, infos = model.step(np.asarray([action]), self.rng)
        result = StepResult(
            model.observe()[0],
            float(rewards[0]),
            bool(terminated[0]),
            bool(truncated[0]),
            _row(infos),
        )
        return self._finish_step(result)

    def _check_shape(self, action: Any) -> None:
        """ValueError unless ``action`` has the action space's shape (a single env's, not
        ``(1, ...)``)."""
        shape = self.action_space.shape
        if shape is not None and np.shape(action) != shape:
            raise ValueError(
                f"{type(self).__name__} takes one action of shape {shape} ({self.action_space}), "
                f"got shape {np.shape(action)}"
            )

    def _finish_step(self, result: StepResult) -> StepResult:
        """Keep ``result`` for ``render`` and record it in the episode's picture."""
        self._last = result
        if self._trace is not None:
            self._trace.record(self._state)
            self._show_frame()
        return result

    def _box_values(self, action: Any, low: float, high: float, what: str) -> list[float]:
        """A continuous action as Python floats, for the scalar fast paths: a float array of
        the action space's shape within ``[low, high]`` is read at once; anything else goes
        through the array model's checks (``_check_shape`` and ``check_box_actions``), so bad
        input gets the same errors."""
        if type(action) is np.ndarray and action.shape == self.action_space.shape:
            values: list[float] = action.tolist()
            for value in values:
                if not low <= value <= high:  # NaN too
                    break
            else:
                if action.dtype.kind == "f":
                    return values
        self._check_shape(action)
        shape = (1, *np.shape(action))
        checked = check_box_actions(np.asarray([action]), low, high, shape, what)
        return checked[0].tolist()  # type: ignore[no-any-return]

    def _state(self, name: str) -> Any:
        return getattr(self, name)

    def _frame(self) -> np.ndarray | None:
        return None if self._trace is None else self._trace.draw()

    def render(self) -> str | np.ndarray | None:
        """``render_mode="ansi"``: one line with the last step's figures; ``"rgb_array"``: the
        episode so far as a (400, 600, 3) uint8 image (None before the first reset);
        ``"human"``: that image in a window, and None; else None."""
        if self._trace is not None:
            return self._render_frame()
        if self.render_mode != "ansi":
            return None
        last = self._last
        if isinstance(last, ResetResult):
            return _describe(last.info)
        return f"{_describe(last.info)} reward={last.reward:+.6f}"


def _state_scalar(name: str) -> Callable[[FinanceEnv], Any]:
    def read(env: FinanceEnv) -> Any:
        value = getattr(env._model, name)
        if isinstance(value, np.ndarray):  # the array model's state: env 0's row
            value = value[0]
            return value.item() if value.ndim == 0 else value.copy()
        return value  # a scalar model's Python scalar

    return read


def _row(arrays: InfoArrays) -> dict[str, Any]:
    """Env 0's info from the model's info arrays: a masked row has no key."""
    info = {}
    for key, value in arrays.items():
        if type(value) is np.ndarray and value.ndim == 1:  # most keys: a scalar, read quickly
            info[key] = value.item(0)
            continue
        if isinstance(value, np.ma.MaskedArray):
            if np.ma.getmaskarray(value)[0]:
                continue
            value = value.data
        item = value[0]
        info[key] = item.item() if np.ndim(item) == 0 else item
    return info


def _describe(info: dict[str, Any]) -> str:
    """``key=value`` for every scalar of the info, in the info's order."""
    return " ".join(
        f"{key}={value:.6g}" if isinstance(value, float) else f"{key}={value}"
        for key, value in info.items()
        if isinstance(value, int | float | str)
    )
