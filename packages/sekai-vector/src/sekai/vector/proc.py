"""ProcVecEnv: sub-envs run in parallel in worker processes.

Each worker runs a contiguous slice of the sub-envs in a loop, so one small pickled message per
worker carries a whole slice's actions in and its infos out. Observations, rewards and flags go
through one shared-memory batch buffer when the observation space is made of arrays: workers
write their rows in place and the parent copies each field out once per call. The parent does no
per-sub-env work on a step: a worker pickles its slice's infos itself, and the parent unpickles
them only when the caller reads an info.
"""

from __future__ import annotations

import bisect
import multiprocessing
import os
import pickle
import sys
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import cloudpickle
import numpy as np

from sekai.core import Env
from sekai.vector import _shared_memory
from sekai.vector._lazy_infos import _LazyInfos
from sekai.vector._restart import RestartPolicy
from sekai.vector._worker_pool import REIMPORTED_MAIN_EXIT, WORKER_NAME, ProcessContext, WorkerPool
from sekai.vector.backend import (
    as_array_batch,
    check_env_fns,
    check_num_workers,
    check_same_spaces,
    dumps_slice,
    error_from_report,
    join_batches,
    split_ranks,
)
from sekai.vector.base import AutoresetMode, VecEnv, _check_autoreset
from sekai.vector.results import VecResetResult, VecStepResult

__all__ = ["ProcVecEnv"]

_DEFAULT_CONTEXT = "spawn" if sys.platform == "win32" else "forkserver"
# Imported once by the forkserver, so each worker forks with them already loaded.
_FORKSERVER_PRELOAD = ["sekai.vector._worker", "sekai.wrappers"]


class ProcVecEnv(VecEnv):
    """Run the sub-envs built by ``env_fns`` in worker processes.

    ``env_fns`` are zero-argument callables, sent to the workers with cloudpickle (lambdas and
    classes defined in your script work). ``num_workers`` processes (default: one per sub-env)
    each run an even share of the sub-envs. ``shared_memory``: None passes observations through
    shared memory when the observation space allows it, True requires it (TypeError otherwise),
    False never uses it. ``context`` is the multiprocessing start method; ``close_timeout`` how
    many seconds ``close`` waits for the workers before terminating them. ``timeout``: None
    (wait as long as it takes) or how many seconds every call (reset, step, get_attr, ...) waits
    for the workers' replies (building the sub-envs at construction is not limited); a worker
    that has not answered by then is stopped and the call raises a VecEnvWorkerError that is
    also a TimeoutError, naming its sub-envs. The VecEnv can then only be closed.

    ``restart`` makes workers heal: when a worker has died (SIGKILL, segfault, out of memory),
    the call that finds it dead starts a new one, which rebuilds its sub-envs from the same
    factories; a step resets them and returns, for those sub-envs, reward 0, ``truncated=True``
    and ``info["worker_restarted"] = True`` (no ``final_observation``: it died with the worker),
    so a training loop goes on; other calls are simply answered by the new worker. ``True``
    allows 3 restarts in any 60 seconds, ``(count, seconds)`` sets the limit; beyond it, or with
    the default False, a dead worker raises VecEnvWorkerError and the VecEnv can only be closed.

    ``import_main``: whether workers import your main module first, as multiprocessing's spawn
    and forkserver workers do. By default (False) they do not: they get everything they run from
    ``env_fns`` by value, a script needs no ``if __name__ == "__main__":`` guard (its top level
    never runs again in a worker) and workers start faster. Pass True when the workers must find
    something in ``__main__`` by name (an object pickled by reference there, such as an action of
    a class your script defines); then the script needs the guard. No effect with ``"fork"``,
    whose workers are copies of this process.

    A sub-env's exception is raised here as VecEnvWorkerError (with the sub-env's ``rank``) after
    every worker has replied; the workers stay usable.

    ``async_reset`` and ``async_step`` leave the event loop free while the workers
    compute; a cancelled one leaves the workers in step, like a Ctrl-C during ``step``.
    One call at a time: another call made while one awaits its replies raises RuntimeError.
    """

    _takes_array_actions = True  # slices of it go to the workers

    def __init__(
        self,
        env_fns: Iterable[Callable[[], Env[Any, Any]]],
        *,
        autoreset: AutoresetMode = True,
        context: str | None = None,
        close_timeout: float = 5.0,
        num_workers: int | None = None,
        shared_memory: bool | None = None,
        timeout: float | None = None,
        restart: bool | tuple[int, float] = False,
        import_main: bool = False,
    ) -> None:
        _exit_if_reimported_by_a_worker()
        if not isinstance(import_main, bool):
            raise TypeError(f"import_main must be True or False, got {import_main!r}")
        env_fns = check_env_fns(env_fns)
        _check_autoreset(autoreset)
        _check_seconds(close_timeout, "close_timeout")
        if timeout is not None:
            _check_seconds(timeout, "timeout")
        if shared_memory not in (None, True, False):
            raise TypeError(f"shared_memory must be None, True or False, got {shared_memory!r}")
        restart_policy = RestartPolicy.from_option(restart)
        num_envs = len(env_fns)
        self.num_workers = check_num_workers(num_workers, num_envs)
        slices = split_ranks(num_envs, self.num_workers)
        payloads = [dumps_slice([env_fns[i] for i in ranks], autoreset) for ranks in slices]
        self._slices = slices
        self.shared_memory = False
        self._pool = WorkerPool(
            _get_context(context), payloads, slices, close_timeout, restart_policy, import_main
        )
        self._finalizer = weakref.finalize(self, self._pool.close)
        try:
            spaces = self._gather(self._pool.collect())
            observation_space, action_space = spaces[0]
            super().__init__(num_envs, observation_space, action_space, autoreset=autoreset)
            check_same_spaces(spaces)
            self._share_observations(shared_memory)
        except BaseException:
            self._finalizer()
            raise
        self._pool.timeout = timeout  # calls only: building the sub-envs may take long

    def _share_observations(self, shared_memory: bool | None) -> None:
        if shared_memory is False:
            return
        layout = _shared_memory.batch_layout(self.batch_observation_space, self.num_envs)
        if layout is None:
            if shared_memory:
                raise TypeError(
                    "shared_memory=True needs an observation space made of Box, Discrete, "
                    "MultiDiscrete or MultiBinary parts (possibly in a Dict, Tuple or "
                    f"MaskedBox), got {self.observation_space}; pass shared_memory=None or False"
                )
            return
        self._pool.share_observations(*layout)
        self.shared_memory = True

    # -- backend hooks --------------------------------------------------------------------
    def _reset_subenvs(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> VecResetResult:
        result = self._reset_result(self._pool.request(self._reset_messages(seeds, options)))
        self._note_seeds(seeds)
        return result

    def _step_subenvs(self, actions: list[Any] | np.ndarray) -> VecStepResult:
        replies = self._pool.request(self._step_messages(actions), self._restarted_step)
        return self._step_result(replies)

    async def _async_reset_subenvs(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> VecResetResult:
        messages = self._reset_messages(seeds, options)
        result = self._reset_result(await self._pool.async_request(messages))
        self._note_seeds(seeds)
        return result

    async def _async_step_subenvs(self, actions: list[Any] | np.ndarray) -> VecStepResult:
        messages = self._step_messages(actions)
        return self._step_result(await self._pool.async_request(messages, self._restarted_step))

    def _get_attr(self, name: str) -> list[Any]:
        message = _dumps(("get_attr", name), "the attribute name")
        return self._gather(self._pool.request([message] * self.num_workers))

    def _set_attr(self, name: str, values: list[Any]) -> None:
        messages = [
            _dumps(("set_attr", (name, values[ranks.start : ranks.stop])), "set_attr values")
            for ranks in self._slices
        ]
        self._pool.request(messages)

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        message = _dumps(("call", (name, args, kwargs)), "call arguments")
        return self._gather(self._pool.request([message] * self.num_workers))

    def _close(self) -> None:
        error = self._finalizer()  # runs the pool's close() once, whoever calls first
        if error is not None:
            raise error_from_report(error)

    # -- messages and results, shared by the blocking and the async calls -----------------
    def _reset_messages(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> list[bytes]:
        return [
            _dumps(("reset", ([seeds[i] for i in ranks], [options[i] for i in ranks])), "options")
            for ranks in self._slices
        ]

    def _restarted_step(self, worker: int) -> tuple[str, Any]:
        """What a step returns for the sub-envs of a restarted worker: the new worker's "heal"
        (a reset with seeds derived from the restart, reported as a truncated step)."""
        assert self._pool.restart is not None
        seeds = self._pool.restart.seeds(self._slices[worker])
        return self._pool.exchange(worker, _dumps(("heal", seeds), "seeds"))

    def _note_seeds(self, seeds: list[int | None]) -> None:
        if self._pool.restart is not None:
            self._pool.restart.note_reset(seeds)

    def _reset_result(self, replies: list[Any]) -> VecResetResult:
        observations = [reply[0] for reply in replies]
        infos = self._lazy_infos([reply[1] for reply in replies])
        return VecResetResult(self._observations(observations), infos)

    def _step_messages(self, actions: list[Any] | np.ndarray) -> list[bytes]:
        """One pickled command per worker, all made before anything is sent."""
        batch = as_array_batch(actions)
        messages = []
        for ranks in self._slices:
            if batch is not None:
                part = batch[ranks.start : ranks.stop]
                data: Any = (part.dtype.str, part.shape, part.tobytes())
            else:
                data = actions[ranks.start : ranks.stop]
            try:
                messages.append(pickle.dumps(("step", data), -1))
            except Exception as error:
                raise TypeError(
                    f"actions must be picklable to reach the worker processes: {error}"
                ) from error
        return messages

    def _step_result(self, replies: list[Any]) -> VecStepResult:
        """The batch from each worker's ``(observations, flags, pickled infos)`` reply;
        observations and flags are () and None when they are in shared memory."""
        if self.shared_memory:
            flags = [array.copy() for array in self._pool.views[1:]]
        else:
            flags = [np.concatenate(parts) for parts in zip(*(r[1] for r in replies), strict=True)]
        rewards, terminated, truncated = flags
        infos = self._lazy_infos([reply[2] for reply in replies])
        observations = self._observations([reply[0] for reply in replies])
        return VecStepResult(observations, rewards, terminated, truncated, infos)

    # -- helpers --------------------------------------------------------------------------
    def _observations(self, batches: list[Any]) -> Any:
        """The whole batch: from shared memory, or joined from the workers' batches."""
        if self.shared_memory:
            return _shared_memory.read(self._pool.views[0])
        return join_batches(self.observation_space, batches)

    def _lazy_infos(self, pickled: list[bytes]) -> _LazyInfos:
        """The infos of every sub-env; a worker's slice is unpickled when one of them is read."""
        starts = [ranks.start for ranks in self._slices]
        unpickled: dict[int, list[dict[str, Any]]] = {}

        def worker_infos(worker: int) -> list[dict[str, Any]]:
            if worker not in unpickled:
                unpickled[worker] = pickle.loads(pickled[worker])
            return unpickled[worker]

        def build(rank: int) -> dict[str, Any]:
            worker = bisect.bisect_right(starts, rank) - 1
            return worker_infos(worker)[rank - starts[worker]]

        def build_all() -> list[dict[str, Any]]:
            return [info for worker in range(len(pickled)) for info in worker_infos(worker)]

        return _LazyInfos(self.num_envs, build, build_all=build_all)

    @staticmethod
    def _gather(replies: list[bytes]) -> list[Any]:
        return [value for reply in replies for value in pickle.loads(reply)]


def _exit_if_reimported_by_a_worker() -> None:
    """In a worker importing the parent's main module (spawn and forkserver workers, with
    ``import_main=True``) which builds a ProcVecEnv at its top level: exit quietly, with a code
    that the parent explains.

    Going on would start workers from a worker; multiprocessing refuses with a traceback from
    every worker at once, which never names the missing main guard.
    """
    process = multiprocessing.current_process()
    if getattr(process, "_inheriting", False) and process.name.startswith(WORKER_NAME):
        os._exit(REIMPORTED_MAIN_EXIT)


def _dumps(value: Any, what: str) -> bytes:
    """Pickle with cloudpickle before anything is sent; a TypeError names what failed."""
    try:
        return cloudpickle.dumps(value)
    except Exception as error:
        message = f"{what} must be picklable to reach the worker processes: {error}"
        raise TypeError(message) from error


def _get_context(method: str | None) -> ProcessContext:
    if method is not None and not isinstance(method, str):
        raise TypeError(f"context must be a start method name or None, got {method!r}")
    try:
        context: Any = multiprocessing.get_context(method or _DEFAULT_CONTEXT)
    except ValueError:
        raise ValueError(
            f"context must be one of {multiprocessing.get_all_start_methods()}, got {method!r}"
        ) from None
    if context.get_start_method() == "forkserver":
        context.set_forkserver_preload(_FORKSERVER_PRELOAD)
    return context


def _check_seconds(seconds: float, name: str) -> None:
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise TypeError(f"{name} must be a number of seconds, got {seconds!r}")
    if not seconds >= 0:
        raise ValueError(f"{name} must be >= 0 seconds, got {seconds}")
