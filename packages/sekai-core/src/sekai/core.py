"""The single-agent environment API: ``Env`` and its result types."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Generic, NamedTuple, TypeVar

import numpy as np

from sekai.checks import check_seed

if TYPE_CHECKING:
    from sekai._window import Window
    from sekai.registration import EnvSpec
    from sekai.spaces import Space

ObsType = TypeVar("ObsType")
ActType = TypeVar("ActType")


class EnvClosed(RuntimeError):
    """Raised by reset() and step() of an env made by ``sekai.make`` after its close();
    a VecEnv's ``VecEnvClosed`` is one too."""

    def __init__(self, message: str = "This env has been closed.") -> None:
        super().__init__(message)


class ResetResult(NamedTuple):
    """What ``Env.reset`` returns; unpacks as ``obs, info = env.reset()``."""

    observation: Any
    info: dict[str, Any]

    @property
    def done(self) -> bool:
        """Always False: a reset starts an episode. Lets one loop handle both result types."""
        return False

    @property
    def all_done(self) -> bool:
        """Always False, as ``done``."""
        return False

    @property
    def any_done(self) -> bool:
        """Always False, as ``done``."""
        return False


class StepResult(NamedTuple):
    """What ``Env.step`` returns; unpacks like gymnasium's five-tuple."""

    observation: Any
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]

    @property
    def done(self) -> bool:
        """True when the episode ended, by termination or truncation."""
        return bool(self.terminated or self.truncated)

    @property
    def all_done(self) -> bool:
        """The same as ``done`` for a single agent."""
        return self.done

    @property
    def any_done(self) -> bool:
        """The same as ``done`` for a single agent."""
        return self.done


# StepResult's own __new__ is Python code; hot paths build the tuple directly, 1 us faster
_step_result: Callable[[tuple[Any, ...]], StepResult] = functools.partial(tuple.__new__, StepResult)


class RngMixin:
    """The seeding contract every sekai env shares (single- and multi-agent).

    ``self._set_rng(seed)`` at the start of ``reset`` makes ``self.rng`` a
    ``numpy.random.Generator``: an int re-seeds, None continues the current stream.
    """

    _rng: np.random.Generator | None = None

    @property
    def rng(self) -> np.random.Generator:
        """The env's random generator, created from OS entropy on first use if never seeded."""
        if self._rng is None:
            self._rng = np.random.default_rng()
        return self._rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        self._rng = value

    def _set_rng(self, seed: int | None) -> None:
        """Re-seed ``self.rng`` from ``seed``; with None keep the current stream."""
        if seed is not None:
            self._rng = np.random.default_rng(check_seed(seed))
        elif self._rng is None:
            self._rng = np.random.default_rng()


class RenderMixin:
    """``render_mode``, ``render()`` and ``close()`` for ``Env`` and ``MultiAgentEnv``.

    An env that renders lists its modes in ``metadata["render_modes"]`` and stores the one it
    is made with by ``self._set_render_mode(render_mode)``. An env that draws frames implements
    ``_frame()`` once; then ``"rgb_array"`` and ``"human"`` both come from it: ``render()``
    returns ``self._render_frame()``, and ``reset``/``step`` end with ``self._show_frame()``,
    which in human mode shows the frame in a window, as gymnasium's envs do.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}
    render_mode: str | None = None
    _window: Window | None = None

    def _set_render_mode(self, render_mode: str | None) -> None:
        """Store ``render_mode`` as ``self.render_mode``, as gymnasium's envs do in ``__init__``;
        ValueError unless it is None or one of ``metadata["render_modes"]``. ``"human"`` opens
        the window now, so a missing pygame or display fails here, not mid-episode (unless the
        env draws no ``_frame``: then its own ``render`` shows what it likes)."""
        modes = self.metadata.get("render_modes", [])
        if render_mode is not None and render_mode not in modes:
            allowed = f"None or one of {modes}" if modes else "None: this env does not render"
            raise ValueError(f"render_mode must be {allowed}, got {render_mode!r}")
        self.render_mode = render_mode
        if render_mode == "human" and type(self)._frame is not RenderMixin._frame:
            from sekai._window import Window

            self._window = Window(type(self).__name__, self.metadata.get("render_fps", 30))

    def _frame(self) -> np.ndarray | None:
        """The current picture as a ``(height, width, 3)`` uint8 array, or None when there is
        nothing to draw yet; envs that draw frames override it."""
        return None

    def _render_frame(self) -> np.ndarray | None:
        """What ``render()`` gives in the frame modes: the frame with ``"rgb_array"``; with
        ``"human"`` the frame goes to the window and the result is None; else None."""
        if self.render_mode == "rgb_array":
            return self._frame()
        self._show_frame()
        return None

    def _show_frame(self) -> None:
        """In human mode, show the current frame in the window; otherwise do nothing."""
        if self._window is not None:
            frame = self._frame()
            if frame is not None:
                self._window.show(frame)

    def render(self) -> Any:
        """Render the current state according to ``render_mode``; None by default."""
        return None

    def close(self) -> None:
        """Release resources (the window of ``render_mode="human"``). Calling it again is
        harmless."""
        self._close_window()

    def _close_window(self) -> None:
        if self._window is not None:
            self._window.close()


class Env(RngMixin, RenderMixin, Generic[ObsType, ActType]):
    """A single-agent environment.

    Subclasses set ``observation_space`` and ``action_space`` and implement ``reset`` and
    ``step``. Randomness comes from ``self.rng``, (re)seeded by ``self._set_rng(seed)`` at the
    start of ``reset``: an int re-seeds, None continues the current stream. An env that renders
    lists its modes in ``metadata["render_modes"]``, takes ``render_mode`` in ``__init__`` and
    stores it with ``self._set_render_mode(render_mode)`` (see ``RenderMixin``).
    """

    observation_space: Space[ObsType]
    action_space: Space[ActType]
    spec: EnvSpec | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        """Start an episode and return its first observation."""
        if type(self).reset is Env.reset:
            raise NotImplementedError(
                f"{type(self).__name__} does not implement reset(): define "
                "reset(self, *, seed=None, options=None) that calls self._set_rng(seed) and "
                "returns sekai.ResetResult(observation, info)"
            )
        raise NotImplementedError(  # gymnasium's Env.reset seeds; sekai's has nothing to do
            "sekai.Env.reset() is abstract: seed with self._set_rng(seed) instead of "
            "super().reset(seed=seed), and draw randomness from self.rng"
        )

    def step(self, action: ActType) -> StepResult:
        """Advance the episode by one action."""
        if type(self).step is Env.step:
            raise NotImplementedError(
                f"{type(self).__name__} does not implement step(): define step(self, action) "
                "that returns sekai.StepResult(observation, reward, terminated, truncated, info)"
            )
        raise NotImplementedError(
            "sekai.Env.step() is abstract: a subclass's step() computes the whole transition, "
            "without calling super().step()"
        )

    async def async_reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        """Awaitable reset; override for envs that wait on I/O. Defaults to ``reset``."""
        return self.reset(seed=seed, options=options)

    async def async_step(self, action: ActType) -> StepResult:
        """Awaitable step; override for envs that wait on I/O. Defaults to ``step``."""
        return self.step(action)

    @property
    def unwrapped(self) -> Env[Any, Any]:
        """The innermost env below any wrappers (this env itself)."""
        return self

    def get_attr(self, name: str) -> Any:
        """Read ``name`` from this env (wrappers also look through the layers below)."""
        return getattr(self, name)

    def set_attr(self, name: str, value: Any) -> None:
        """Set ``name`` on this env (wrappers set it on the layer that has it)."""
        setattr(self, name, value)

    def __enter__(self) -> Env[ObsType, ActType]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.spec is None:
            return f"<{type(self).__name__}>"
        return f"<{type(self).__name__}<{self.spec.id}>>"
