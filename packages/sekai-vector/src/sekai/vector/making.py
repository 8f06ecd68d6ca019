"""make_vec(): a VecEnv from a registry ID, native when the env has a native version."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from collections.abc import Callable, Iterable
from typing import Any

from sekai.checks import check_positive_int
from sekai.core import Env
from sekai.making import make
from sekai.registration import RESERVED_MODES, EnvSpec, load_entry_point, registry, spec
from sekai.vector.base import VecEnv

EnvWrapper = Callable[[Env[Any, Any]], Env[Any, Any]]


def make_vec(
    id: str | EnvSpec,
    num_envs: int = 1,
    vectorization_mode: str | None = None,
    *,
    wrappers: Iterable[EnvWrapper] | None = None,
    vector_kwargs: dict[str, Any] | None = None,
    **kwargs: Any,
) -> VecEnv:
    """Build ``num_envs`` copies of the env registered under ``id`` as one VecEnv.

    ``vectorization_mode``: None (the native env if the entry has a ``vector_entry_point`` and
    no ``wrappers`` are given, else SyncVecEnv), ``"native"`` (alias ``"vector_entry_point"``),
    or the name of a mode a plugin registered: ``"sync"``, ``"async"``, ``"proc"`` and any
    installed third-party backend (``sekai list --modes`` shows them). ``wrappers`` wrap each
    sub-env, ``vector_kwargs`` go to the VecEnv constructor and any other keyword argument to
    ``sekai.make``. Each sub-env gets ``sampler.spawn()`` of a ``sampler`` argument that has
    one. The result carries the registry entry, with these overrides, as ``vec.spec``.
    """
    backend = _backend(vectorization_mode)
    num_envs = check_positive_int(num_envs, "num_envs")
    if callable(wrappers):  # one wrapper where a list was expected
        name = getattr(wrappers, "__name__", repr(wrappers))
        raise TypeError(
            f"wrappers must be a list of callables taking and returning an env, got {name} "
            f"itself: pass wrappers=[{name}]"
        )
    wrappers = list(wrappers or [])
    for wrapper in wrappers:
        if not callable(wrapper):
            raise TypeError(
                f"wrappers must be callables taking and returning an env, got {wrapper!r}"
            )
    vector_kwargs = dict(vector_kwargs or {})
    env_spec = id if isinstance(id, EnvSpec) else spec(id)
    if vectorization_mode is None and (env_spec.vector_entry_point is None or wrappers):
        backend = _backend("sync")
    if backend is None:
        vec = _make_native(env_spec, num_envs, wrappers, vector_kwargs, kwargs)
    else:
        _check_vector_kwargs(backend, vector_kwargs)
        factories = [
            _SubEnvFactory(env_spec, _sub_env_kwargs(kwargs), wrappers) for _ in range(num_envs)
        ]
        vec = backend(factories, **vector_kwargs)
    vec.spec = _spec_with_overrides(env_spec, kwargs)
    return vec


def _make_native(
    env_spec: EnvSpec,
    num_envs: int,
    wrappers: list[EnvWrapper],
    vector_kwargs: dict[str, Any],
    kwargs: dict[str, Any],
) -> VecEnv:
    if env_spec.vector_entry_point is None:
        raise ValueError(
            f"{env_spec.id!r} has no native vector implementation (no vector_entry_point); "
            'use vectorization_mode="sync", "async" or "proc"'
        )
    if wrappers:
        raise ValueError(
            "wrappers= wraps each sub-env, but a native vector env has no sub-env objects; "
            'wrap the VecEnv in vector wrappers instead, or use vectorization_mode="sync"'
        )
    native_kwargs = {**copy.deepcopy(env_spec.kwargs), **kwargs}  # as make(): nothing shared
    if native_kwargs.get("max_episode_steps") is None:
        native_kwargs.pop("max_episode_steps", None)
        if env_spec.max_episode_steps is not None:
            native_kwargs["max_episode_steps"] = env_spec.max_episode_steps
    vec_class = load_entry_point(env_spec.vector_entry_point)
    vec: VecEnv = vec_class(num_envs=num_envs, **{**native_kwargs, **vector_kwargs})
    return vec


def _backend(mode: str | None) -> Callable[..., VecEnv] | None:
    """The VecEnv class registered for ``mode``; None for the env's own native version."""
    if mode is None or (isinstance(mode, str) and mode in RESERVED_MODES):
        return None
    modes = registry.vectorization_modes
    if not isinstance(mode, str) or mode not in modes:
        allowed = ", ".join(repr(name) for name in [None, *sorted(RESERVED_MODES), *modes])
        raise ValueError(
            f"vectorization_mode must be one of the installed modes {allowed}, got {mode!r}"
        )
    backend: Callable[..., VecEnv] = load_entry_point(modes[mode].entry_point)
    return backend


def _check_vector_kwargs(backend: Callable[..., VecEnv], vector_kwargs: dict[str, Any]) -> None:
    """TypeError naming the public backend for a keyword its constructor does not take (the
    constructor's own error may name a private base class)."""
    parameters = list(inspect.signature(backend).parameters.values())[1:]  # after env_fns
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return
    accepted = [p.name for p in parameters]
    unknown = sorted(set(vector_kwargs) - set(accepted))
    if unknown:
        name = getattr(backend, "__name__", repr(backend))
        raise TypeError(
            f"vector_kwargs {unknown} are not arguments of {name}; it accepts {accepted}"
        )


def _sub_env_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """One sub-env's kwargs: its own ``sampler.spawn()`` when the sampler can spawn."""
    spawn = getattr(kwargs.get("sampler"), "spawn", None)
    if callable(spawn):
        return {**kwargs, "sampler": spawn()}
    return kwargs


def _spec_with_overrides(env_spec: EnvSpec, kwargs: dict[str, Any]) -> EnvSpec:
    """A copy of ``env_spec`` with the overrides: changing vec.spec must not change the registry."""
    overrides = dict(kwargs)
    steps = overrides.pop("max_episode_steps", None)
    return dataclasses.replace(
        env_spec,
        kwargs={**env_spec.kwargs, **overrides},
        max_episode_steps=env_spec.max_episode_steps if steps is None else steps,
    )


class _SubEnvFactory:
    """Builds one sub-env: make() then the wrappers. A class, so it pickles for ProcVecEnv."""

    def __init__(
        self, env_spec: EnvSpec, kwargs: dict[str, Any], wrappers: list[EnvWrapper]
    ) -> None:
        self.env_spec = env_spec
        self.kwargs = kwargs
        self.wrappers = wrappers

    def __call__(self) -> Env[Any, Any]:
        env = make(self.env_spec, **self.kwargs)
        for wrapper in self.wrappers:
            env = wrapper(env)
        return env
