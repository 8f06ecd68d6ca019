"""ThreadVecEnv: the sub-envs split into groups, each group stepped by a thread of a pool.

Useful for envs whose step releases the GIL (I/O, native code); built only from sekai's backend
toolkit, as a third-party backend can be.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sekai.core import Env
from sekai.vector import VecEnv, VecResetResult, VecStepResult
from sekai.vector.backend import (
    EnvGroup,
    check_env_fns,
    check_same_spaces,
    stack_reset_results,
    stack_step_results,
)
from sekai.vector.base import AutoresetMode


class ThreadVecEnv(VecEnv):
    """Run ``env_fns``' sub-envs in ``num_threads`` groups, one pool thread per group."""

    def __init__(
        self,
        env_fns: Iterable[Callable[[], Env[Any, Any]]],
        *,
        autoreset: AutoresetMode = True,
        num_threads: int = 2,
    ) -> None:
        env_fns = check_env_fns(env_fns)
        if not isinstance(num_threads, int) or not 1 <= num_threads <= len(env_fns):
            raise ValueError(f"num_threads must be an int in 1..{len(env_fns)}, got {num_threads}")
        size = -(-len(env_fns) // num_threads)
        self._groups = [EnvGroup(first_rank=start) for start in range(0, len(env_fns), size)]
        try:
            for group in self._groups:
                group.build(env_fns[group.first_rank : group.first_rank + size], autoreset)
            spaces = [pair for group in self._groups for pair in group.spaces]
            check_same_spaces(spaces)
        except BaseException:
            for group in self._groups:
                group.close()  # its errors would hide the one being raised
            raise
        self._pool = ThreadPoolExecutor(len(self._groups), thread_name_prefix="demo-threads")
        super().__init__(len(env_fns), *spaces[0], autoreset=autoreset)

    def _run(self, work: Callable[[EnvGroup], list[Any]]) -> list[Any]:
        futures = [self._pool.submit(work, group) for group in self._groups]
        return [result for future in futures for result in future.result()]

    def _reset_subenvs(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> VecResetResult:
        results = self._run(
            lambda group: group.reset(seeds[group.first_rank :], options[group.first_rank :])
        )
        return stack_reset_results(self.observation_space, results)

    def _step_subenvs(self, actions: list[Any]) -> VecStepResult:
        results = self._run(lambda group: group.step(actions[group.first_rank :]))
        return stack_step_results(self.observation_space, results)

    def _get_attr(self, name: str) -> list[Any]:
        return self._run(lambda group: group.get_attr(name))

    def _set_attr(self, name: str, values: list[Any]) -> None:
        self._run(lambda group: group.set_attr(name, values[group.first_rank :]) or [])

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        return self._run(lambda group: group.call(name, args, kwargs))

    def _close(self) -> None:
        self._pool.shutdown()
        self._close_groups()

    def _close_groups(self) -> None:
        errors = [group.close() for group in self._groups]
        first = next((error for error in errors if error is not None), None)
        if first is not None:
            raise first
