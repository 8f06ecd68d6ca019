"""Wrapper base classes: one env wrapped in another, sync and async from the same transform.

A wrapper changes an env through hooks rather than by overriding ``step``/``reset``:
``before_reset``, ``after_reset``, ``before_step`` and ``after_step``. The base class runs them
around both ``env.step`` and ``await env.async_step`` (and likewise for reset), so every wrapper
written against the hooks keeps an ``AsyncVecEnv`` concurrent for free.

A wrapper that must call the inner env more than once per step (``RepeatAction``) writes that
logic once as a *plan*: a generator that yields ``EnvCall`` requests and returns the result.
``run_plan`` executes a plan synchronously, ``async_run_plan`` awaits it.

A subclass that overrides ``step``/``reset`` but not their async twins (gymnasium style) gets
async twins that call its overrides, as ``Env``'s defaults do, so async callers never
skip them (``route_async_to_sync_overrides``).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, NamedTuple, TypeVar

from sekai.core import ActType, Env, ObsType, ResetResult, StepResult

_Result = TypeVar("_Result")


def route_async_to_sync_overrides(cls: type) -> None:
    """Make ``cls.async_step``/``async_reset`` call ``cls.step``/``reset`` where ``cls`` defines
    the sync method but not its async twin.

    Such a class is written against ``step``/``reset`` rather than the hooks; the inherited async
    twin would run the hooks around the inner env's async method and silently skip the override.
    Used by ``Wrapper`` and sekai-vector's ``VecWrapper`` when a subclass is defined.
    """
    for name, via_sync in (("step", _async_step_via_step), ("reset", _async_reset_via_reset)):
        if name in vars(cls) and f"async_{name}" not in vars(cls):
            setattr(cls, f"async_{name}", via_sync)


def _inline_step_hooks(step: Any) -> Any:
    """Mark a wrapper's ``step`` as ``Wrapper.step`` with the class's own step hooks written
    inline (a speed-up for wrappers around every env). Its async twin stays the hook-based
    one, and a subclass that overrides ``before_step`` or ``after_step`` gets the hook-based
    ``step`` back, so the hooks keep their documented meaning."""
    step._inlined_step_hooks = True
    return step


def _keep_step_hooks(cls: Any) -> None:  # a Wrapper subclass, its methods replaced
    """``_inline_step_hooks``'s promise, for a subclass being defined."""
    if "step" in vars(cls):
        if getattr(vars(cls)["step"], "_inlined_step_hooks", False) and "async_step" not in vars(
            cls
        ):
            cls.async_step = Wrapper.async_step
        return
    if not getattr(cls.step, "_inlined_step_hooks", False):
        return
    owner = next(base for base in cls.__mro__ if "step" in vars(base))
    if any(
        getattr(cls, hook) is not getattr(owner, hook) for hook in ("before_step", "after_step")
    ):
        cls.step = Wrapper.step


async def _async_step_via_step(self: Any, action: Any) -> Any:
    return self.step(action)


async def _async_reset_via_reset(self: Any, *, seed: Any = None, options: Any = None) -> Any:
    return self.reset(seed=seed, options=options)


class Wrapper(Env[ObsType, ActType]):
    """Wrap ``env`` and pass everything through; subclasses override the hooks they need.

    Spaces, ``metadata``, ``render_mode`` and ``spec`` read through to the inner env until the
    wrapper assigns its own. Public attributes the wrapper lacks are read from the inner env.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _keep_step_hooks(cls)
        route_async_to_sync_overrides(cls)

    def __init__(self, env: Env[Any, Any]) -> None:
        _check_single_agent_env(env, type(self))
        self.env = env
        self._observation_space: Any = None
        self._action_space: Any = None
        self._metadata: dict[str, Any] | None = None
        self._render_mode: str | None = None
        self._spec: Any = None

    # -- hooks -------------------------------------------------------------------------------
    def before_reset(self, seed: int | None, options: dict[str, Any] | None) -> None:
        """Called before the inner env resets, e.g. to seed a wrapper's own generator."""

    def after_reset(self, result: ResetResult) -> ResetResult:
        """Transform the inner env's reset result."""
        return result

    def before_step(self, action: Any) -> Any:
        """Transform the action before it reaches the inner env."""
        return action

    def after_step(self, result: StepResult) -> StepResult:
        """Transform the inner env's step result."""
        return result

    # -- env API -----------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        self.before_reset(seed, options)
        return self.after_reset(self.env.reset(seed=seed, options=options))

    async def async_reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> ResetResult:
        self.before_reset(seed, options)
        return self.after_reset(await self.env.async_reset(seed=seed, options=options))

    def step(self, action: ActType) -> StepResult:
        return self.after_step(self.env.step(self.before_step(action)))

    async def async_step(self, action: ActType) -> StepResult:
        return self.after_step(await self.env.async_step(self.before_step(action)))

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    # -- read-through attributes -------------------------------------------------------------
    @property
    def observation_space(self) -> Any:
        if self._observation_space is None:
            return self.env.observation_space
        return self._observation_space

    @observation_space.setter
    def observation_space(self, space: Any) -> None:
        self._observation_space = space

    @property
    def action_space(self) -> Any:
        if self._action_space is None:
            return self.env.action_space
        return self._action_space

    @action_space.setter
    def action_space(self, space: Any) -> None:
        self._action_space = space

    @property
    def metadata(self) -> dict[str, Any]:  # type: ignore[override]
        if self._metadata is None:
            return self.env.metadata
        return self._metadata

    @metadata.setter
    def metadata(self, value: dict[str, Any]) -> None:
        self._metadata = value

    @property
    def render_mode(self) -> str | None:  # type: ignore[override]
        if self._render_mode is None:
            return self.env.render_mode
        return self._render_mode

    @render_mode.setter
    def render_mode(self, value: str | None) -> None:
        self._render_mode = value

    @property
    def spec(self) -> Any:  # type: ignore[override]
        if self._spec is None:
            return self.env.spec
        return self._spec

    @spec.setter
    def spec(self, value: Any) -> None:
        self._spec = value

    @property
    def rng(self) -> Any:
        """The inner env's generator: a wrapper has no randomness of its own by default."""
        return self.env.rng

    @rng.setter
    def rng(self, value: Any) -> None:
        self.env.rng = value

    @property
    def unwrapped(self) -> Env[Any, Any]:
        return self.env.unwrapped

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails. Private names and ``env`` itself (missing while
        # the object is being built or unpickled) must not recurse into the inner env.
        if name.startswith("_") or name == "env":
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self.env, name)

    def get_attr(self, name: str) -> Any:
        """Read ``name`` from the outermost layer that has it, down to the unwrapped env."""
        try:
            return object.__getattribute__(self, name)
        except AttributeError:
            return self.env.get_attr(name)

    def set_attr(self, name: str, value: Any) -> None:
        """Set ``name`` on the outermost layer that has it, else on the unwrapped env."""
        try:
            object.__getattribute__(self, name)
        except AttributeError:
            self.env.set_attr(name, value)
        else:
            setattr(self, name, value)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.env!r})"


class ObservationWrapper(Wrapper[ObsType, ActType]):
    """Transform every observation with ``observation`` (reset and step alike)."""

    def observation(self, observation: Any) -> ObsType:
        """Return the transformed observation (a new object, never the env's own buffer)."""
        raise NotImplementedError

    def after_reset(self, result: ResetResult) -> ResetResult:
        return ResetResult(self.observation(result.observation), result.info)

    def after_step(self, result: StepResult) -> StepResult:
        observation, reward, terminated, truncated, info = result
        return StepResult(self.observation(observation), reward, terminated, truncated, info)


class RewardWrapper(Wrapper[ObsType, ActType]):
    """Transform every reward with ``reward``."""

    def reward(self, reward: float) -> float:
        """Return the transformed reward."""
        raise NotImplementedError

    def after_step(self, result: StepResult) -> StepResult:
        observation, reward, terminated, truncated, info = result
        return StepResult(observation, self.reward(reward), terminated, truncated, info)


class ActionWrapper(Wrapper[ObsType, ActType]):
    """Transform every action with ``action`` before the inner env sees it."""

    def action(self, action: ActType) -> Any:
        """Return the action the inner env should receive."""
        raise NotImplementedError

    def before_step(self, action: ActType) -> Any:
        return self.action(action)


class EnvCall(NamedTuple):
    """A request from a plan to the inner env: ``reset`` or ``step`` with its arguments."""

    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    @classmethod
    def step(cls, action: Any) -> EnvCall:
        return cls("step", (action,), {})

    @classmethod
    def reset(cls, seed: int | None = None, options: dict[str, Any] | None = None) -> EnvCall:
        return cls("reset", (), {"seed": seed, "options": options})


Plan = Generator[EnvCall, Any, _Result]


def run_plan(env: Env[Any, Any], plan: Plan[_Result]) -> _Result:
    """Run ``plan`` against ``env`` with the blocking ``reset``/``step``."""
    try:
        call = next(plan)
        while True:
            call = plan.send(getattr(env, call.method)(*call.args, **call.kwargs))
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


async def async_run_plan(env: Env[Any, Any], plan: Plan[_Result]) -> _Result:
    """Run ``plan`` against ``env`` with the awaitable ``async_reset``/``async_step``."""
    try:
        call = next(plan)
        while True:
            method = getattr(env, f"async_{call.method}")
            call = plan.send(await method(*call.args, **call.kwargs))
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def _check_single_agent_env(env: object, wrapper_type: type) -> None:
    if isinstance(env, Env):
        return
    from sekai.multi_agent import MultiAgentEnv

    if isinstance(env, MultiAgentEnv):
        raise TypeError(
            f"wrappers are single-agent: cannot wrap the MultiAgentEnv {type(env).__name__}; "
            "wrap a sekai.Env (e.g. a single-agent adapter of it) instead"
        )
    if isinstance(getattr(env, "num_envs", None), int):  # a vector env, whichever backend
        raise TypeError(_vec_env_message(env, wrapper_type))
    raise TypeError(f"a wrapper needs a sekai.Env to wrap, got {type(env).__name__}")


def _vec_env_message(vec: object, wrapper_type: type) -> str:
    """Why a single-env wrapper cannot wrap ``vec``, and what to use instead: its vector twin
    ``sekai.Vec<Name>`` where an installed distribution provides one."""
    import sekai

    name = wrapper_type.__name__
    message = f"{name} wraps a single env, got the VecEnv {type(vec).__name__}: "
    if f"Vec{name}" in dir(sekai):
        return message + f"use sekai.Vec{name}, its vector version"
    return (
        message + f"wrap each sub-env instead, with make_vec(..., wrappers=[{name}]) "
        "(a lambda for extra arguments), or write a sekai.VecWrapper"
    )
