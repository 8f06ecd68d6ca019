"""AsyncVecEnv: the sub-envs' async_reset()/async_step() run concurrently with asyncio.gather."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

from sekai.core import Env
from sekai.vector._in_process import _InProcessVecEnv
from sekai.vector.backend import stack_reset_results, stack_step_results
from sekai.vector.base import AutoresetMode
from sekai.vector.results import VecResetResult, VecStepResult

_T = TypeVar("_T")


class AsyncVecEnv(_InProcessVecEnv):
    """Await every sub-env's ``async_step``/``async_reset`` at once, in this process.

    For I/O-bound envs (live feeds, REST or websocket simulators): while one sub-env waits,
    the others proceed. Inside a running event loop, use ``async_reset`` and
    ``async_step``; the blocking ``reset``/``step`` run a private event loop of
    their own, created on first use and closed by ``close``.
    """

    def __init__(
        self, env_fns: Iterable[Callable[[], Env[Any, Any]]], *, autoreset: AutoresetMode = True
    ) -> None:
        super().__init__(env_fns, autoreset=autoreset)
        self._loop: asyncio.AbstractEventLoop | None = None

    async def _async_reset_subenvs(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> VecResetResult:
        results = await self._group.async_reset(seeds, options)
        return stack_reset_results(self.observation_space, results)

    async def _async_step_subenvs(self, actions: list[Any]) -> VecStepResult:
        results = await self._group.async_step(actions)
        return stack_step_results(self.observation_space, results)

    def _reset_subenvs(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> VecResetResult:
        return self._run(self._async_reset_subenvs(seeds, options))

    def _step_subenvs(self, actions: list[Any]) -> VecStepResult:
        return self._run(self._async_step_subenvs(actions))

    def _run(self, coroutine: Coroutine[Any, Any, _T]) -> _T:
        if _in_running_loop():
            coroutine.close()
            raise RuntimeError(
                "AsyncVecEnv.reset()/step() block, so they cannot run inside a running event "
                "loop; use `await vec.async_reset()` / `await vec.async_step(actions)` there"
            )
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coroutine)

    def _close(self) -> None:
        try:
            super()._close()
        finally:
            if self._loop is not None:
                loop, self._loop = self._loop, None
                if not _in_running_loop():  # else run_until_complete would refuse
                    loop.run_until_complete(loop.shutdown_asyncgens())
                    loop.run_until_complete(loop.shutdown_default_executor())
                loop.close()


def _in_running_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
