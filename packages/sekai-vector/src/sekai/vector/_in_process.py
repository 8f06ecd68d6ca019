"""What the in-process backends (SyncVecEnv, AsyncVecEnv) share: a list of sub-env objects."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sekai.core import Env
from sekai.vector.base import (
    AutoresetMode,
    VecEnv,
    _check_autoreset,
    _check_env_fns,
    _check_new_env,
    _prepare_env,
)


class _InProcessVecEnv(VecEnv):
    """Holds the sub-envs as ``self.envs`` and reaches them directly for attributes and close."""

    def __init__(
        self, env_fns: Iterable[Callable[[], Env[Any, Any]]], *, autoreset: AutoresetMode = True
    ) -> None:
        _check_autoreset(autoreset)
        self.envs = _build_envs(env_fns, autoreset)
        first = self.envs[0]
        try:
            for index, env in enumerate(self.envs[1:], start=1):
                _check_same_spaces(first, env, index)
        except ValueError:
            _close_all(self.envs, raise_first=False)
            raise
        super().__init__(
            len(self.envs), first.observation_space, first.action_space, autoreset=autoreset
        )

    def _get_attr(self, name: str) -> list[Any]:
        return [env.get_attr(name) for env in self.envs]

    def _set_attr(self, name: str, values: list[Any]) -> None:
        for env, value in zip(self.envs, values, strict=True):
            env.set_attr(name, value)

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        results = []
        for env in self.envs:
            attribute = env.get_attr(name)
            results.append(attribute(*args, **kwargs) if callable(attribute) else attribute)
        return results

    def _close(self) -> None:
        _close_all(self.envs)


def _build_envs(
    env_fns: Iterable[Callable[[], Env[Any, Any]]], autoreset: AutoresetMode
) -> list[Env[Any, Any]]:
    """Call every factory and prepare its env; close the ones built so far if one fails."""
    env_fns = _check_env_fns(env_fns)
    envs: list[Env[Any, Any]] = []
    seen: set[int] = set()
    try:
        for fn in env_fns:
            env = _prepare_env(fn(), autoreset)
            _check_new_env(env, seen)
            envs.append(env)
    except BaseException:
        _close_all(envs, raise_first=False)
        raise
    return envs


def _check_same_spaces(first: Env[Any, Any], env: Env[Any, Any], index: int) -> None:
    for name in ("observation_space", "action_space"):
        if getattr(env, name) != getattr(first, name):
            raise ValueError(
                f"every sub-env must have the same {name}: sub-env 0 has "
                f"{getattr(first, name)}, sub-env {index} has {getattr(env, name)}"
            )


def _close_all(envs: list[Env[Any, Any]], *, raise_first: bool = True) -> None:
    """Close every env even if some raise; then raise the first error."""
    first_error: BaseException | None = None
    for env in envs:
        try:
            env.close()
        except Exception as error:
            if first_error is None:
                first_error = error
    if first_error is not None and raise_first:
        raise first_error
