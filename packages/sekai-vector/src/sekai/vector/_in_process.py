"""What the in-process backends (SyncVecEnv, AsyncVecEnv) share: one EnvGroup of every sub-env."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from sekai.core import Env
from sekai.vector.backend import EnvGroup, check_same_spaces
from sekai.vector.base import AutoresetMode, VecEnv


class _InProcessVecEnv(VecEnv):
    """Holds the sub-envs as ``self.envs`` (one ``EnvGroup``) and reaches them directly."""

    def __init__(
        self, env_fns: Iterable[Callable[[], Env[Any, Any]]], *, autoreset: AutoresetMode = True
    ) -> None:
        self._group = EnvGroup()
        self._group.build(env_fns, autoreset)
        self.envs = self._group.envs
        try:
            check_same_spaces(self._group.spaces)
        except ValueError:
            self._group.close()
            raise
        first = self.envs[0]
        super().__init__(
            len(self.envs), first.observation_space, first.action_space, autoreset=autoreset
        )

    def _get_attr(self, name: str) -> list[Any]:
        return self._group.get_attr(name)

    def _set_attr(self, name: str, values: list[Any]) -> None:
        self._group.set_attr(name, values)

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        return self._group.call(name, args, kwargs)

    def _close(self) -> None:
        error = self._group.close()
        if error is not None:
            raise error
