"""RayVecEnv: sub-envs run in Ray actors, on one machine or across a Ray cluster.

Each of ``num_workers`` actors holds a contiguous slice of the sub-envs in an
``EnvGroup``, or, when the slice comes from ``make_vec`` for an env
with a native version, as one native vector env: a step is then one round trip per actor,
whatever the number of sub-envs. Needs the ``ray`` extra (``pip install sekai-vector[ray]``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from sekai.core import Env
from sekai.vector._restart import RestartPolicy
from sekai.vector.backend import (
    ErrorReport,
    SliceServer,
    as_array_batch,
    check_env_fns,
    check_num_workers,
    check_same_spaces,
    dumps_slice,
    error_from_report,
    join_batches,
    join_infos,
    split_ranks,
)
from sekai.vector.base import AutoresetMode, VecEnv, _check_autoreset
from sekai.vector.errors import VecEnvWorkerError, worker_error
from sekai.vector.results import VecResetResult, VecStepResult

try:
    import ray
    from ray.exceptions import RayActorError
except ModuleNotFoundError as error:  # without the extra: say which one, keep the module's name
    raise ModuleNotFoundError(
        "RayVecEnv needs Ray: pip install 'sekai-vector[ray]'", name=error.name
    ) from error

__all__ = ["RayVecEnv"]

_log = logging.getLogger(__name__)


class RayVecEnv(VecEnv):
    """Run the sub-envs built by ``env_fns`` in ``num_workers`` Ray actors.

    ``env_fns`` are zero-argument callables, sent to the actors with cloudpickle. ``num_workers``
    (default: as many as the cluster's CPUs allow at ``num_cpus`` each, at most one per sub-env)
    actors each run an even share of the sub-envs. ``num_cpus`` is what each actor reserves and
    ``scheduling_strategy`` where Ray places it (any of Ray's strategies, e.g. ``"SPREAD"`` or a
    ``PlacementGroupSchedulingStrategy``).

    Ray itself is the user's: if this process has called ``ray.init`` its runtime is used;
    otherwise RayVecEnv connects to the cluster at ``address`` (or at ``RAY_ADDRESS``), and
    without either starts a local Ray of its own: it never joins a cluster running on the host
    unasked. The ``sekai.vector.ray`` logger says which.

    A slice built by ``make_vec`` for an env with a native version (same kwargs, no wrappers)
    runs as one native env; it is seeded as that native env is, from its sub-envs' seeds.

    A sub-env's exception is raised as VecEnvWorkerError (with the sub-env's ``rank``, type and
    remote traceback) after every actor has replied; the actors stay usable. A dead actor raises
    VecEnvWorkerError naming its first sub-env; the VecEnv can then only be closed.

    ``restart`` makes actors heal, as ProcVecEnv's workers do: the call that finds an actor dead
    (killed, its node lost, out of memory) starts a new actor with the same resources, which
    rebuilds its slice from the same factories; a step resets those sub-envs and returns, for
    them, reward 0, ``truncated=True`` and ``info["worker_restarted"] = True`` (no
    ``final_observation``: it died with the actor); other calls are simply answered by the new
    actor. ``True`` allows 3 restarts in any 60 seconds, ``(count, seconds)`` sets the limit;
    beyond it, or with the default False, a dead actor raises as above.
    """

    _takes_array_actions = True  # slices of it go to the workers

    def __init__(
        self,
        env_fns: Iterable[Callable[[], Env[Any, Any]]],
        *,
        autoreset: AutoresetMode = True,
        num_workers: int | None = None,
        num_cpus: float = 1,
        scheduling_strategy: Any = None,
        address: str | None = None,
        restart: bool | tuple[int, float] = False,
    ) -> None:
        env_fns = check_env_fns(env_fns)
        _check_autoreset(autoreset)
        if isinstance(num_cpus, bool) or not isinstance(num_cpus, int | float) or num_cpus < 0:
            raise ValueError(f"num_cpus must be a number >= 0, got {num_cpus!r}")
        self._restart = RestartPolicy.from_option(restart)
        _connect(address)
        num_envs = len(env_fns)
        self.num_workers = _num_workers(num_workers, num_envs, num_cpus)
        self._slices = split_ranks(num_envs, self.num_workers)
        self._payloads = [dumps_slice([env_fns[i] for i in r], autoreset) for r in self._slices]
        self._actor_class = ray.remote(_SliceActor).options(
            num_cpus=num_cpus, scheduling_strategy=scheduling_strategy
        )
        self._actors = [self._start_actor(worker) for worker in range(self.num_workers)]
        self._broken: VecEnvWorkerError | None = None
        try:
            spaces = [
                pair
                for reply in self._request("spaces", [None] * self.num_workers)
                for pair in reply
            ]
            observation_space, action_space = spaces[0]
            super().__init__(num_envs, observation_space, action_space, autoreset=autoreset)
            check_same_spaces(spaces)
        except BaseException:
            self._kill_actors()
            raise

    # -- backend hooks --------------------------------------------------------------------
    def _reset_subenvs(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> VecResetResult:
        result = self._reset_result(self._request("reset", self._reset_data(seeds, options)))
        self._note_seeds(seeds)
        return result

    def _step_subenvs(self, actions: list[Any] | np.ndarray) -> VecStepResult:
        return self._step_result(self._request("step", self._step_data(actions)))

    async def _async_reset_subenvs(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> VecResetResult:
        data = self._reset_data(seeds, options)
        result = self._reset_result(await self._async_request("reset", data))
        self._note_seeds(seeds)
        return result

    async def _async_step_subenvs(self, actions: list[Any] | np.ndarray) -> VecStepResult:
        return self._step_result(await self._async_request("step", self._step_data(actions)))

    def _get_attr(self, name: str) -> list[Any]:
        return _flat(self._request("get_attr", [name] * self.num_workers))

    def _set_attr(self, name: str, values: list[Any]) -> None:
        self._request("set_attr", [(name, part) for part in self._split(values)])

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        return _flat(self._request("call", [(name, args, kwargs)] * self.num_workers))

    def _close(self) -> None:
        if self._broken is None:
            try:
                self._request("close", [None] * self.num_workers)
            finally:
                self._kill_actors()
        else:
            self._kill_actors()

    # -- requests -------------------------------------------------------------------------
    def _refs(self, command: str, data: list[Any]) -> list[Any]:
        if self._broken is not None:
            raise self._broken
        return [
            actor.run.remote(command, part) for actor, part in zip(self._actors, data, strict=True)
        ]

    def _request(self, command: str, data: list[Any]) -> list[Any]:
        refs = self._refs(command, data)
        return self._replies(
            [self._reply(worker, ref, command, data[worker]) for worker, ref in enumerate(refs)]
        )

    async def _async_request(self, command: str, data: list[Any]) -> list[Any]:
        refs = self._refs(command, data)
        replies = []
        for worker, ref in enumerate(refs):  # awaiting a ref leaves the event loop free
            replies.append(await self._async_reply(worker, ref, command, data[worker]))
        return self._replies(replies)

    def _reply(self, worker: int, ref: Any, command: str, part: Any) -> tuple[str, Any]:
        """Actor ``worker``'s reply to ``command``; if the actor died, its replacement's."""
        try:
            reply: tuple[str, Any] = ray.get(ref)
            return reply
        except RayActorError as error:
            retry = self._after_death(worker, error, command, part)
        if isinstance(retry, tuple):
            return retry
        try:
            healed: tuple[str, Any] = ray.get(retry)
            return healed
        except RayActorError as error:
            self._died(worker, error)
            return _DIED

    async def _async_reply(self, worker: int, ref: Any, command: str, part: Any) -> tuple[str, Any]:
        """:meth:`_reply`, awaiting the refs."""
        try:
            reply: tuple[str, Any] = await ref
            return reply
        except RayActorError as error:
            retry = self._after_death(worker, error, command, part)
        if isinstance(retry, tuple):
            return retry
        try:
            healed: tuple[str, Any] = await retry
            return healed
        except RayActorError as error:
            self._died(worker, error)
            return _DIED

    def _after_death(
        self, worker: int, error: RayActorError, command: str, part: Any
    ) -> tuple[str, Any] | ray.ObjectRef:
        """What stands for the reply of dead actor ``worker``: the ref of its replacement's
        reply (its "heal", for a step), or a final reply when ``restart`` does not
        allow a replacement (then the VecEnv is broken) or none is needed (at close)."""
        if self._restart is None:
            self._died(worker, error)
            return _DIED
        if command == "close":
            return "ok", None  # its sub-envs are gone with it: nothing left to close
        if not self._restart.allow():
            self._restart.give_up(self._died(worker, error))
            return _DIED
        _log.warning(
            "the Ray actor running sub-envs %s died (%s); restarting it",
            _ranks(self._slices[worker]),
            type(error).__name__,
        )
        ray.kill(self._actors[worker])  # an actor only out of reach may still be running
        self._actors[worker] = actor = self._start_actor(worker)
        if command == "step":
            return actor.run.remote("heal", self._restart.seeds(self._slices[worker]))
        return actor.run.remote(command, part)

    def _start_actor(self, worker: int) -> Any:
        """A new actor holding slice ``worker`` (built from its factories on arrival)."""
        return self._actor_class.remote(self._payloads[worker], self._slices[worker].start)

    def _died(self, worker: int, error: BaseException) -> VecEnvWorkerError:
        """Remember that actor ``worker`` is gone; every later call raises the error."""
        rank = self._slices[worker].start
        message = f"the Ray actor running sub-envs {_ranks(self._slices[worker])} died: {error}"
        self._broken = worker_error(
            message, rank=rank, exc_type=type(error).__name__, remote_traceback=str(error)
        )
        return self._broken

    def _replies(self, replies: list[tuple[str, Any]]) -> list[Any]:
        """The values of every actor's reply; the first error raised once all have replied."""
        if self._broken is not None:
            raise self._broken
        for status, value in replies:
            if status == "error":
                raise error_from_report(value)
        return [value for _, value in replies]

    def _note_seeds(self, seeds: list[int | None]) -> None:
        if self._restart is not None:
            self._restart.note_reset(seeds)

    def _kill_actors(self) -> None:
        for actor in self._actors:
            ray.kill(actor)

    # -- data and results -----------------------------------------------------------------
    def _split(self, values: Any) -> list[Any]:
        return [values[ranks.start : ranks.stop] for ranks in self._slices]

    def _step_data(self, actions: list[Any] | np.ndarray) -> list[Any]:
        """Each actor's actions: a slice of one array when they stack into one (far cheaper to
        send than thousands of rows), else a slice of the list."""
        batch = as_array_batch(actions)
        return self._split(actions if batch is None else batch)

    def _reset_data(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> list[tuple[list[int | None], list[dict[str, Any] | None]]]:
        return list(zip(self._split(seeds), self._split(options), strict=True))

    def _reset_result(self, replies: list[tuple[Any, Any]]) -> VecResetResult:
        """The batch from each actor's ``(observations, infos)``."""
        return VecResetResult(
            join_batches(self.observation_space, [reply[0] for reply in replies]),
            join_infos([reply[1] for reply in replies]),
        )

    def _step_result(self, replies: list[tuple[Any, Any, Any]]) -> VecStepResult:
        """The batch from each actor's ``(observations, flags, infos)``."""
        rewards, terminated, truncated = (
            np.concatenate(parts) for parts in zip(*(reply[1] for reply in replies), strict=True)
        )
        return VecStepResult(
            join_batches(self.observation_space, [reply[0] for reply in replies]),
            rewards.astype(np.float64, copy=False),
            terminated.astype(bool, copy=False),
            truncated.astype(bool, copy=False),
            join_infos([reply[2] for reply in replies]),
        )


class _SliceActor:
    """What runs in one Ray actor: the SliceServer of its slice (as in a ProcVecEnv worker).

    A slice that fails to build is reported by the first command.
    """

    def __init__(self, payload: bytes, first_rank: int) -> None:
        self.server = SliceServer(first_rank)
        self.failure: ErrorReport | None = None
        try:
            self.server.build(payload)
        except BaseException as error:
            self.failure = self.server.describe(error)

    def run(self, command: str, data: Any) -> tuple[str, Any]:
        """The server's ``("ok", value)`` or ``("error", report)``."""
        if self.failure is not None:
            return "error", self.failure
        if command == "close":
            report = self.server.close()
            return ("ok", None) if report is None else ("error", report)
        return self.server.run(command, data)


_DIED = ("died", None)  # the reply of an actor found dead


def _connect(address: str | None) -> None:
    """Join the user's Ray: this process's runtime, or the cluster at ``address`` (else at
    ``RAY_ADDRESS``); otherwise start a local Ray of this process's own, never joining a cluster
    that happens to run on the host (another user's, on a shared machine). Logs which it did."""
    if ray.is_initialized():
        _log.info("RayVecEnv uses the Ray runtime this process has joined")
        return
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address is not None:
        ray.init(address=address)
        _log.info("RayVecEnv connected to the Ray cluster at %s", address)
        return
    ray.init(address="local", include_dashboard=False)
    _log.info("RayVecEnv started a local Ray (no address= given and RAY_ADDRESS is not set)")


def _num_workers(num_workers: int | None, num_envs: int, num_cpus: float) -> int:
    """``num_workers`` checked as ProcVecEnv does; None: as many actors as the cluster's CPUs
    hold at ``num_cpus`` each (at most one per sub-env), so that none waits for a CPU."""
    if num_workers is not None:
        return check_num_workers(num_workers, num_envs)
    if not num_cpus:
        return num_envs
    return max(1, min(num_envs, int(ray.cluster_resources().get("CPU", 1) // num_cpus)))


def _flat(parts: list[Any]) -> list[Any]:
    return [item for part in parts for item in part]


def _ranks(ranks: range) -> str:
    return f"{ranks.start}-{ranks.stop - 1}" if len(ranks) > 1 else str(ranks.start)
