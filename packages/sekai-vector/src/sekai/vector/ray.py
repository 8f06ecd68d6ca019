"""RayVecEnv: sub-envs run in Ray actors, on one machine or across a Ray cluster.

Each of ``num_workers`` actors holds a contiguous slice of the sub-envs in an
``EnvGroup``, or, when the slice comes from ``make_vec`` for an env
with a native version, as one native vector env: a step is then one round trip per actor,
whatever the number of sub-envs. Needs the ``ray`` extra (``pip install sekai-vector[ray]``).
"""

from __future__ import annotations

import logging
import os
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import cloudpickle
import numpy as np

from sekai.core import Env
from sekai.spaces import Space, concatenate
from sekai.vector._lazy_infos import _LazyInfos
from sekai.vector._restart import RestartPolicy
from sekai.vector._worker_pool import _worker_error
from sekai.vector.backend import EnvGroup, check_env_fns, check_same_spaces
from sekai.vector.base import AutoresetMode, VecEnv, _check_autoreset
from sekai.vector.errors import VecEnvWorkerError, worker_error
from sekai.vector.proc import _as_array_batch, _check_num_workers
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
        self._slices = [
            range(int(part[0]), int(part[-1]) + 1)
            for part in np.array_split(np.arange(num_envs), self.num_workers)
        ]
        try:
            self._payloads = [
                cloudpickle.dumps(([env_fns[i] for i in r], autoreset)) for r in self._slices
            ]
        except Exception as error:
            raise TypeError(
                f"env_fns must be picklable to reach the Ray actors: {error}"
            ) from error
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
        return self._reset_result(self._request("reset", self._reset_data(seeds, options)))

    def _step_subenvs(self, actions: list[Any]) -> VecStepResult:
        return self._step_result(self._request("step", self._step_data(actions)))

    async def _async_reset_subenvs(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> VecResetResult:
        data = self._reset_data(seeds, options)
        return self._reset_result(await self._async_request("reset", data))

    async def _async_step_subenvs(self, actions: list[Any]) -> VecStepResult:
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
            return _healed(command, ray.get(retry))
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
            return _healed(command, await retry)
        except RayActorError as error:
            self._died(worker, error)
            return _DIED

    def _after_death(
        self, worker: int, error: RayActorError, command: str, part: Any
    ) -> tuple[str, Any] | ray.ObjectRef:
        """What stands for the reply of dead actor ``worker``: the ref of its replacement's
        reply (a reset of the slice, for a step), or a final reply when ``restart`` does not
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
            size = len(self._slices[worker])
            return actor.run.remote("reset", ([None] * size, [None] * size))
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
                raise _worker_error(value)
        return [value for _, value in replies]

    def _kill_actors(self) -> None:
        for actor in self._actors:
            ray.kill(actor)

    # -- data and results -----------------------------------------------------------------
    def _split(self, values: Any) -> list[Any]:
        return [values[ranks.start : ranks.stop] for ranks in self._slices]

    def _step_data(self, actions: list[Any]) -> list[Any]:
        """Each actor's actions: a slice of one array when they stack into one (far cheaper to
        send than thousands of rows), else a slice of the list."""
        batch = _as_array_batch(actions)
        return self._split(actions if batch is None else batch)

    def _reset_data(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> list[tuple[list[int | None], list[dict[str, Any] | None]]]:
        return list(zip(self._split(seeds), self._split(options), strict=True))

    def _reset_result(self, replies: list[VecResetResult]) -> VecResetResult:
        return VecResetResult(
            _join([reply.observations for reply in replies]),
            _join_infos([r.infos for r in replies]),
        )

    def _step_result(self, replies: list[VecStepResult]) -> VecStepResult:
        return VecStepResult(
            _join([reply.observations for reply in replies]),
            np.concatenate([reply.rewards for reply in replies]).astype(np.float64, copy=False),
            np.concatenate([reply.terminated for reply in replies]).astype(bool, copy=False),
            np.concatenate([reply.truncated for reply in replies]).astype(bool, copy=False),
            _join_infos([reply.infos for reply in replies]),
        )


class _SliceActor:
    """What runs in one Ray actor: a slice of sub-envs, as an EnvGroup or one native env.

    Every command replies ``("ok", value)`` or ``("error", (rank, exc_type, message,
    traceback))``, so a sub-env's exception leaves the actor alive and names the sub-env.
    """

    def __init__(self, payload: bytes, first_rank: int) -> None:
        self.group = EnvGroup(first_rank)
        self.native: VecEnv | None = None
        self.failure: tuple[int, str, str, str] | None = None
        try:
            env_fns, autoreset = cloudpickle.loads(payload)
            self.native = _native_slice(env_fns, autoreset)
            if self.native is None:
                self.group.build(env_fns, autoreset)
        except BaseException as error:  # reported by the first command
            self.failure = self._describe(error)

    def run(self, command: str, data: Any) -> tuple[str, Any]:
        if self.failure is not None:
            return "error", self.failure
        self.group.rank = self.group.first_rank
        try:
            return "ok", getattr(self, "_" + command)(data)
        except BaseException as error:  # reported, the actor stays alive
            return "error", self._describe(error)

    def _describe(self, error: BaseException) -> tuple[int, str, str, str]:
        remote = "".join(traceback.format_exception(error))
        return self.group.rank, type(error).__name__, str(error), remote

    @property
    def _space(self) -> Space[Any]:
        if self.native is not None:
            return self.native.single_observation_space
        return self.group.envs[0].observation_space

    def _spaces(self, _: None) -> list[tuple[Space[Any], Space[Any]]]:
        if self.native is not None:
            pair = (self.native.single_observation_space, self.native.single_action_space)
            return [pair] * self.native.num_envs
        return self.group.spaces

    def _reset(self, data: tuple[list[int | None], list[dict[str, Any] | None]]) -> VecResetResult:
        seeds, options = data
        if self.native is not None:
            seed = None if any(s is None for s in seeds) else seeds
            result = self.native.reset(seed=seed, options=options)
            return result._replace(infos=_shippable(result.infos))
        observations, infos = zip(*self.group.reset(seeds, options), strict=True)
        return VecResetResult(concatenate(self._space, observations), list(infos))

    def _step(self, actions: list[Any]) -> VecStepResult:
        if self.native is not None:
            result = self.native.step(actions)
            return result._replace(infos=_shippable(result.infos))
        observations, rewards, terminated, truncated, infos = zip(
            *self.group.step(actions), strict=True
        )
        return VecStepResult(
            concatenate(self._space, observations),
            np.array(rewards, dtype=np.float64),
            np.array(terminated, dtype=bool),
            np.array(truncated, dtype=bool),
            list(infos),
        )

    def _get_attr(self, name: str) -> list[Any]:
        if self.native is not None:
            return self.native.get_attr(name)
        return self.group.get_attr(name)

    def _set_attr(self, data: tuple[str, list[Any]]) -> None:
        name, values = data
        if self.native is not None:
            self.native.set_attr(name, values)
        else:
            self.group.set_attr(name, values)

    def _call(self, data: tuple[str, tuple[Any, ...], dict[str, Any]]) -> list[Any]:
        name, args, kwargs = data
        if self.native is not None:
            return self.native.call(name, *args, **kwargs)
        return self.group.call(name, args, kwargs)

    def _close(self, _: None) -> None:
        if self.native is not None:
            self.native.close()
            return
        error = self.group.close()
        if error is not None:
            raise error


_DIED = ("died", None)  # the reply of an actor found dead


def _healed(command: str, reply: tuple[str, Any]) -> tuple[str, Any]:
    """A new actor's reply in place of a dead one's: for a step, its slice's reset turned into
    a step result (reward 0, truncated, ``info["worker_restarted"] = True``)."""
    status, value = reply
    if command != "step" or status != "ok":
        return reply
    size = len(value.infos)
    infos = [{**info, "worker_restarted": True} for info in value.infos]
    flags = np.zeros(size), np.zeros(size, dtype=bool), np.ones(size, dtype=bool)
    return "ok", VecStepResult(value.observations, *flags, infos)


def _native_slice(env_fns: list[Any], autoreset: AutoresetMode) -> VecEnv | None:
    """One native env standing for the slice, when every factory is make_vec's for the same
    env (same kwargs, no wrappers) and that env has a native version; else None."""
    from sekai.vector.making import _SubEnvFactory, make_vec

    first = env_fns[0]
    if not (
        isinstance(first, _SubEnvFactory)
        and first.env_spec.vector_entry_point is not None
        and not first.wrappers
        and all(
            isinstance(fn, _SubEnvFactory)
            and fn.env_spec == first.env_spec
            and not fn.wrappers
            and fn.kwargs == first.kwargs
            for fn in env_fns
        )
    ):
        return None
    return make_vec(
        first.env_spec,
        len(env_fns),
        vectorization_mode="native",
        vector_kwargs={"autoreset": autoreset},
        **first.kwargs,
    )


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
        return _check_num_workers(num_workers, num_envs)
    if not num_cpus:
        return num_envs
    return max(1, min(num_envs, int(ray.cluster_resources().get("CPU", 1) // num_cpus)))


def _join(batches: list[Any]) -> Any:
    """The actors' observation batches as one batch, part by part for Dict and Tuple spaces."""
    first = batches[0]
    if isinstance(first, dict):
        return {key: _join([batch[key] for batch in batches]) for key in first}
    if isinstance(first, tuple):
        return tuple(_join(list(parts)) for parts in zip(*batches, strict=True))
    if isinstance(first, np.ndarray):
        return np.concatenate(batches)
    return [item for batch in batches for item in batch]


def _join_infos(parts: list[Sequence[dict[str, Any]]]) -> Sequence[dict[str, Any]]:
    """The actors' infos as one sequence: built on access if any actor's are (a native slice's)."""
    if not any(isinstance(part, _LazyInfos) for part in parts):
        return _flat(parts)
    ends = np.cumsum([len(part) for part in parts])

    def build(i: int) -> dict[str, Any]:
        actor = int(np.searchsorted(ends, i, side="right"))
        return parts[actor][i - (int(ends[actor - 1]) if actor else 0)]

    return _LazyInfos(int(ends[-1]), build)


def _shippable(infos: Sequence[dict[str, Any]]) -> Any:
    """A native env's lazy infos, to travel as the arrays they are built from, not as dicts."""
    if isinstance(infos, _LazyInfos):
        return _ShippedInfos(len(infos), infos._build)
    return list(infos)


class _ShippedInfos:
    """Unpickles as the _LazyInfos it stands for; its builder travels by value (cloudpickle)."""

    def __init__(self, num_envs: int, build: Callable[[int], dict[str, Any]]) -> None:
        self.num_envs = num_envs
        self.build = build

    def __reduce__(self) -> tuple[Any, ...]:
        return _LazyInfos, (self.num_envs, self.build)


def _flat(parts: list[Any]) -> list[Any]:
    return [item for part in parts for item in part]


def _ranks(ranks: range) -> str:
    return f"{ranks.start}-{ranks.stop - 1}" if len(ranks) > 1 else str(ranks.start)
