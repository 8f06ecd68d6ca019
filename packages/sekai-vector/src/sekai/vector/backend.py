"""The toolkit every vector backend is built from, sekai's own and third-party ones.

A backend subclasses ``VecEnv`` and implements its hooks (see
``sekai.vector.base``); what runs the sub-envs is the same everywhere:

- ``check_env_fns`` validates the factories a backend is given;
- ``EnvGroup`` builds a contiguous slice of sub-envs (each through ``prepare_env``, which
  applies the autoreset convention), keeps their ranks in the whole VecEnv, and resets, steps,
  reads, writes, calls and closes them. SyncVecEnv and AsyncVecEnv hold one group of every
  sub-env; a ProcVecEnv worker or a Ray actor holds one group of its slice;
- ``check_same_spaces`` refuses sub-envs whose spaces differ;
- ``stack_reset_results`` / ``stack_step_results`` turn a list of per-env results into
  the batch results.

A backend that runs slices of the sub-envs elsewhere (processes, actors) splits them with
``split_ranks``, ships each slice's factories with ``dumps_slice`` and serves it there with a
``SliceServer`` (native where it can be), as ProcVecEnv and RayVecEnv do; ``join_batches``,
``join_infos`` and ``error_from_report`` turn the slices' replies back into results and errors.

A backend registers itself for ``make_vec`` through the ``sekai_register_vectorization_modes``
hook of ``sekai.hookspecs``.
"""

from __future__ import annotations

import asyncio
import collections
import io
import linecache
import pickle
import traceback
import types
from collections.abc import Callable, Coroutine, Iterable, Sequence
from typing import Any, TypeVar

import cloudpickle
import numpy as np

from sekai.checks import is_whole_number
from sekai.core import Env, ResetResult, StepResult
from sekai.spaces import Dict, Space, Tuple, concatenate, iterate
from sekai.vector import _shared_memory
from sekai.vector._lazy_infos import _LazyInfos
from sekai.vector.base import AutoresetMode, VecEnv, _check_autoreset
from sekai.vector.errors import VecEnvWorkerError, worker_error
from sekai.vector.results import VecResetResult, VecStepResult

__all__ = [
    "EnvGroup",
    "ErrorReport",
    "SliceServer",
    "as_array_batch",
    "check_env_fns",
    "check_num_workers",
    "check_same_spaces",
    "dumps_slice",
    "error_from_report",
    "has_layer",
    "join_batches",
    "join_infos",
    "prepare_env",
    "split_ranks",
    "stack_reset_results",
    "stack_step_results",
]

EnvFactory = Callable[[], Env[Any, Any]]
_T = TypeVar("_T")


def check_env_fns(env_fns: Iterable[EnvFactory]) -> list[EnvFactory]:
    """``env_fns`` as a list: at least one factory, each callable."""
    env_fns = list(env_fns)
    if not env_fns:
        raise ValueError("a VecEnv needs at least one env factory, got none")
    for fn in env_fns:
        if not callable(fn):
            raise TypeError(
                f"env_fns must be zero-argument callables that build envs, got {type(fn).__name__}"
            )
    return env_fns


def prepare_env(env: Any, autoreset: AutoresetMode) -> Env[Any, Any]:
    """Apply the vector env's autoreset convention to one freshly built sub-env.

    True wraps it in AutoReset (unless it has one), ``"next_step"`` in gymnasium's next-step
    convention, False leaves it as it is. TypeError if ``env`` is not a sekai.Env.
    """
    if not isinstance(env, Env):
        raise TypeError(f"a sub-env factory must return a sekai.Env, got {type(env).__name__}")
    if autoreset is True:
        from sekai.wrappers import AutoReset

        return env if has_layer(env, AutoReset) else AutoReset(env)
    if autoreset == "next_step":
        from sekai.vector._next_step_autoreset import _NextStepAutoReset
        from sekai.wrappers import AutoReset

        if has_layer(env, AutoReset):  # reset in the same step, then once more in the next
            env.close()
            raise ValueError(
                'autoreset="next_step" needs sub-envs that do not reset themselves; this one '
                "is wrapped in AutoReset: drop that wrapper or use autoreset=True"
            )
        return _NextStepAutoReset(env)
    return env


def check_same_spaces(spaces: Sequence[tuple[Space[Any], Space[Any]]]) -> None:
    """ValueError naming the first sub-env whose (observation, action) spaces differ from
    sub-env 0's; ``spaces`` holds one pair per sub-env, in rank order."""
    first = spaces[0]
    for rank, pair in enumerate(spaces[1:], start=1):
        for name, first_space, space in zip(
            ("observation_space", "action_space"), first, pair, strict=True
        ):
            if space != first_space:
                raise ValueError(
                    f"every sub-env must have the same {name}: sub-env 0 has {first_space}, "
                    f"sub-env {rank} has {space}"
                )


def stack_reset_results(space: Space[Any], results: Sequence[ResetResult]) -> VecResetResult:
    """One VecResetResult from per-env reset results; ``space`` is the single observation space."""
    observations, infos = zip(*results, strict=True)
    return VecResetResult(concatenate(space, observations), list(infos))


def stack_step_results(space: Space[Any], results: Sequence[StepResult]) -> VecStepResult:
    """One VecStepResult from per-env step results; ValueError for a non-scalar reward or flag."""
    observations, rewards, terminated, truncated, infos = zip(*results, strict=True)
    return VecStepResult(
        concatenate(space, observations),
        *_flag_arrays(rewards, terminated, truncated),
        list(infos),
    )


def _flag_arrays(
    rewards: Sequence[Any], terminated: Sequence[Any], truncated: Sequence[Any]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sub-envs' rewards (float64), terminated and truncated (bool) as arrays of shape
    ``(len(rewards),)``; ValueError for a non-scalar value."""
    arrays = (
        np.array(rewards, dtype=np.float64),
        np.array(terminated, dtype=bool),
        np.array(truncated, dtype=bool),
    )
    for name, array in zip(("reward", "terminated", "truncated"), arrays, strict=True):
        if array.shape != (len(rewards),):  # an array per sub-env would broadcast in later math
            raise ValueError(
                f"each sub-env's step() must return a scalar {name}, got values of shape "
                f"{array.shape[1:]}"
            )
    return arrays


class EnvGroup:
    """A contiguous slice of a VecEnv's sub-envs, ``first_rank`` onwards, run in turn.

    Make it empty, then ``build`` its sub-envs. Every method works through the sub-envs in
    rank order; while one runs, ``rank`` is its rank in the whole VecEnv, so a backend that
    catches an exception knows which sub-env raised.
    """

    def __init__(self, first_rank: int = 0) -> None:
        self.envs: list[Env[Any, Any]] = []
        self.first_rank = first_rank
        self.rank = first_rank

    def build(self, env_fns: Iterable[EnvFactory], autoreset: AutoresetMode) -> None:
        """Call every factory and ``prepare_env`` its env.

        ValueError when two factories return the same env object; if a factory fails, the envs
        built so far are closed and the error is raised, ``rank`` naming the failing sub-env.
        """
        _check_autoreset(autoreset)
        seen: set[int] = set()
        try:
            for index, fn in enumerate(check_env_fns(env_fns)):
                self.rank = self.first_rank + index
                env = prepare_env(fn(), autoreset)
                _check_new_env(env, seen)
                self.envs.append(env)
        except BaseException:
            failing = self.rank
            self.close()
            self.rank = failing
            raise

    def __len__(self) -> int:
        return len(self.envs)

    @property
    def ranks(self) -> range:
        """The ranks of this group's sub-envs in the whole VecEnv."""
        return range(self.first_rank, self.first_rank + len(self.envs))

    @property
    def spaces(self) -> list[tuple[Space[Any], Space[Any]]]:
        """Each sub-env's (observation_space, action_space)."""
        return [(env.observation_space, env.action_space) for env in self.envs]

    def reset(
        self, seeds: Sequence[int | None], options: Sequence[dict[str, Any] | None]
    ) -> list[ResetResult]:
        """Reset each sub-env with its seed and options (one entry per sub-env of the group)."""
        return self._each(lambda env, index: env.reset(seed=seeds[index], options=options[index]))

    def step(self, actions: Sequence[Any]) -> list[StepResult]:
        """Step each sub-env with its action. The loop of ``_each`` written out: it is every
        SyncVecEnv step's hot path (``rank`` is set only when a sub-env raises, before the
        error leaves)."""
        results: list[StepResult] = []
        append = results.append
        index = 0
        try:
            for index, env in enumerate(self.envs):
                append(env.step(actions[index]))
        except BaseException:
            self.rank = self.first_rank + index
            raise
        self.rank = self.first_rank + index
        return results

    async def async_reset(
        self, seeds: Sequence[int | None], options: Sequence[dict[str, Any] | None]
    ) -> list[ResetResult]:
        """Await every sub-env's ``async_reset`` at once; see ``async_step``."""
        return await _gather(
            env.async_reset(seed=seed, options=env_options)
            for env, seed, env_options in zip(self.envs, seeds, options, strict=True)
        )

    async def async_step(self, actions: Sequence[Any]) -> list[StepResult]:
        """Await every sub-env's ``async_step`` at once; every sub-env finishes before the
        first error (if any) is raised."""
        return await _gather(
            env.async_step(action) for env, action in zip(self.envs, actions, strict=True)
        )

    def get_attr(self, name: str) -> list[Any]:
        """``name`` read from each sub-env through its wrapper stack."""
        return self._each(lambda env, index: env.get_attr(name))

    def set_attr(self, name: str, values: Sequence[Any]) -> None:
        """Set ``name`` on each sub-env to its entry of ``values``."""
        self._each(lambda env, index: env.set_attr(name, values[index]))

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """Call method ``name`` of each sub-env (or read it, if it is not callable)."""

        def call_one(env: Env[Any, Any], index: int) -> Any:
            attribute = env.get_attr(name)
            return attribute(*args, **kwargs) if callable(attribute) else attribute

        return self._each(call_one)

    def close(self) -> BaseException | None:
        """Close every sub-env, even if some raise; return the first error (``rank`` names it)."""
        first_error: tuple[int, BaseException] | None = None
        for index, env in enumerate(self.envs):
            try:
                env.close()
            except Exception as error:  # the others are still closed
                if first_error is None:
                    first_error = (self.first_rank + index, error)
        if first_error is None:
            return None
        self.rank = first_error[0]
        return first_error[1]

    def _each(self, run: Callable[[Env[Any, Any], int], _T]) -> list[_T]:
        results = []
        for index, env in enumerate(self.envs):
            self.rank = self.first_rank + index
            results.append(run(env, index))
        return results


async def _gather(awaitables: Iterable[Coroutine[Any, Any, _T]]) -> list[_T]:
    results = await asyncio.gather(*awaitables, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results  # type: ignore[return-value]


def _check_new_env(env: Env[Any, Any], seen: set[int]) -> None:
    """ValueError when ``env`` is (or wraps) the same env object as an earlier sub-env.

    ``seen`` holds the ids of the earlier sub-envs' innermost envs (below every sekai Wrapper,
    not trusting ``unwrapped``, which an adapter may override); ``env``'s is added.
    """
    from sekai.wrappers import Wrapper

    while isinstance(env, Wrapper):
        env = env.env
    base = id(env)
    if base in seen:
        raise ValueError(
            "two sub-envs are (or wrap) the same env object, so one env would be stepped "
            "several times per step: each factory must build a new env, e.g. "
            "lambda: sekai.make(id), not lambda: env"
        )
    seen.add(base)


def has_layer(env: Env[Any, Any], layer_type: type) -> bool:
    """True when ``env`` or any wrapper below it is a ``layer_type``."""
    from sekai.wrappers import Wrapper

    while True:
        if isinstance(env, layer_type):
            return True
        if not isinstance(env, Wrapper):
            return False
        env = env.env


# -- slices of sub-envs in workers: what ProcVecEnv's processes and RayVecEnv's actors share ----
ErrorReport = tuple[int, str, str, str]  # rank, exc_type, message, remote traceback


def split_ranks(num_envs: int, num_workers: int) -> list[range]:
    """The contiguous slices of ``range(num_envs)`` that ``num_workers`` workers run, as even
    as can be (the first ones one longer)."""
    return [
        range(int(part[0]), int(part[-1]) + 1)
        for part in np.array_split(np.arange(num_envs), num_workers)
    ]


def check_num_workers(num_workers: int | None, num_envs: int) -> int:
    """``num_workers`` checked against ``num_envs``; None means one worker per sub-env."""
    if num_workers is None:
        return num_envs
    if not is_whole_number(num_workers):
        raise TypeError(f"num_workers must be an int or None, got {type(num_workers).__name__}")
    if not 1 <= num_workers <= num_envs:
        raise ValueError(
            f"num_workers must be between 1 and the number of sub-envs ({num_envs}), "
            f"got {num_workers}"
        )
    return int(num_workers)


def as_array_batch(actions: list[Any] | np.ndarray) -> np.ndarray | None:
    """The actions as one array when they are NumPy values of one dtype and shape (or such an
    array already), else None.

    A slice of one array travels far cheaper than NumPy scalars or rows one by one; the slice's
    server hands the sub-envs the same per-env values (NumPy scalars or rows) from it.
    """
    # the array itself, or the one VecEnv.step split into these rows
    batch = actions if isinstance(actions, np.ndarray) else getattr(actions, "batch", None)
    if isinstance(batch, np.ndarray) and not batch.dtype.hasobject:
        return batch
    first = actions[0]
    kind = type(first)
    if kind is np.ndarray:
        dtype, shape = first.dtype, first.shape
        if any(
            type(action) is not np.ndarray or action.dtype != dtype or action.shape != shape
            for action in actions
        ):
            return None
    elif not issubclass(kind, np.generic) or any(type(action) is not kind for action in actions):
        return None  # a NumPy scalar type fixes the dtype, up to the length of str/bytes
    batch = np.array(actions)
    return None if batch.dtype != first.dtype or batch.dtype.hasobject else batch


def join_batches(space: Space[Any], batches: Sequence[Any]) -> Any:
    """The slices' observation batches of single-env ``space`` as one batch, in order."""
    if len(batches) == 1:
        return batches[0]
    if isinstance(space, Dict):
        return {key: join_batches(part, [b[key] for b in batches]) for key, part in space.items()}
    if isinstance(space, Tuple):
        return tuple(
            join_batches(part, [batch[index] for batch in batches])
            for index, part in enumerate(space.spaces)
        )
    if all(isinstance(batch, np.ndarray) for batch in batches):
        return np.concatenate(batches)
    return concatenate(space, [item for batch in batches for item in iterate(space, batch)])


def join_infos(parts: Sequence[Sequence[dict[str, Any]]]) -> Sequence[dict[str, Any]]:
    """The slices' infos as one sequence, built on access if any slice's are (a native one's)."""
    if not any(isinstance(part, _LazyInfos) for part in parts):
        return [info for part in parts for info in part]
    ends = np.cumsum([len(part) for part in parts])

    def build(i: int) -> dict[str, Any]:
        part = int(np.searchsorted(ends, i, side="right"))
        return parts[part][i - (int(ends[part - 1]) if part else 0)]

    return _LazyInfos(int(ends[-1]), build)


def error_from_report(report: ErrorReport) -> VecEnvWorkerError:
    """The VecEnvWorkerError to raise for a slice server's error report."""
    rank, exc_type, message, remote_traceback = report
    return worker_error(
        f"sub-env {rank} raised {exc_type}: {message}",
        rank=rank,
        exc_type=exc_type,
        remote_traceback=remote_traceback,
    )


def dumps_slice(env_fns: Sequence[EnvFactory], autoreset: AutoresetMode) -> bytes:
    """A slice's factories and autoreset mode, pickled for a ``SliceServer`` elsewhere.

    Functions and classes pickled by value (those of a script or a notebook) keep their file
    names, and the source lines of those files travel along, so that a traceback in the
    worker shows the line that raised. TypeError if something cannot be pickled.
    """
    buffer = io.BytesIO()
    pickler = _SourcePickler(buffer)
    try:
        pickler.dump((list(env_fns), autoreset))
    except Exception as error:
        raise TypeError(
            f"env_fns must be picklable to reach the worker processes: {error}"
        ) from error
    sources = {name: linecache.getlines(name) for name in sorted(pickler.filenames)}
    return pickle.dumps((sources, buffer.getvalue()), -1)


class _SourcePickler(cloudpickle.Pickler):
    """cloudpickle, keeping the file names of the code it pickles by value.

    cloudpickle writes ``"<dynamic-code>"`` in their place; ``filenames`` collects them.
    """

    def __init__(self, file: io.BytesIO) -> None:
        self.filenames: set[str] = set()
        self.dispatch_table = collections.ChainMap(
            {types.CodeType: self._reduce_code}, cloudpickle.Pickler.dispatch_table
        )
        super().__init__(file)

    def _reduce_code(self, code: types.CodeType) -> Any:
        constructor, args = cloudpickle.Pickler.dispatch_table[types.CodeType](code)
        self.filenames.add(code.co_filename)
        # the file name is the first string among the constructor's arguments
        position = next(i for i, arg in enumerate(args) if isinstance(arg, str))
        return constructor, (*args[:position], code.co_filename, *args[position + 1 :])


def _load_slice(payload: bytes) -> tuple[list[EnvFactory], AutoresetMode]:
    """``dumps_slice``'s factories; their files' lines are put in ``linecache`` first, for
    files this process cannot read (a notebook's cells, a script on another machine)."""
    sources, pickled = pickle.loads(payload)
    for filename, lines in sources.items():
        if lines and not linecache.getlines(filename):
            linecache.cache[filename] = (sum(map(len, lines)), None, lines, filename)
    env_fns, autoreset = pickle.loads(pickled)
    return env_fns, autoreset


class SliceServer:
    """Answers the commands for one contiguous slice of a VecEnv's sub-envs, where it lives: in
    a ProcVecEnv worker process, a RayVecEnv actor, or a third-party backend's worker.

    ``build(payload)`` makes the slice from ``dumps_slice``'s payload: one native vector env
    when every factory is ``make_vec``'s for the same env (same kwargs, no wrappers) and that
    env has a native version, else an ``EnvGroup`` of its sub-envs. ``run(command, data)``
    replies ``("ok", value)`` or ``("error", report)`` (``ErrorReport``: the failing sub-env's
    rank in the whole VecEnv, exception type, message and traceback); an error leaves the
    server usable. The commands and their values:

    - ``"spaces"``, None: one ``(observation_space, action_space)`` pair per sub-env;
    - ``"reset"``, ``(seeds, options)``: ``(observations, infos)``;
    - ``"step"``, actions (a list, or an array of the slice's rows): ``(observations, flags,
      infos)``, flags being ``(rewards, terminated, truncated)`` arrays;
    - ``"heal"``, seeds: what ``"step"`` answers for a slice rebuilt after its worker died: the
      first observations after a reset with ``seeds``, reward 0, truncated, and
      ``info["worker_restarted"] = True`` (no ``final_observation``: it died with the worker);
    - ``"get_attr"``, name; ``"set_attr"``, ``(name, values)``; ``"call"``, ``(name, args,
      kwargs)``: as the VecEnv methods, for the slice.

    Observations are the slice's batch; once ``share`` has given the server the whole VecEnv's
    batch arrays, it writes its rows of observations and flags there instead and replies ``()``
    and None in their place. Infos are a list, or, from a native slice, an object that unpickles
    (with cloudpickle) as the lazy infos it stands for.
    """

    def __init__(self, first_rank: int = 0) -> None:
        self.group = EnvGroup(first_rank)
        self.native: VecEnv | None = None
        self._observations: Any = None  # the shared batch's observation arrays, once shared
        self._flags: tuple[np.ndarray, ...] | None = None  # its rewards, terminated, truncated
        self._commands: dict[str, Callable[[Any], Any]] = {
            "spaces": self._spaces,
            "reset": self._reset,
            "step": self._step,
            "heal": self._heal,
            "get_attr": self._get_attr,
            "set_attr": self._set_attr,
            "call": self._call,
        }

    @property
    def first_rank(self) -> int:
        return self.group.first_rank

    @property
    def num_envs(self) -> int:
        return self.native.num_envs if self.native is not None else len(self.group)

    def build(self, payload: bytes) -> None:
        """Build the slice from ``dumps_slice``'s payload; on failure the sub-envs built so far
        are closed and the error raised (``describe`` it for the parent)."""
        env_fns, autoreset = _load_slice(payload)
        self.native = _native_slice(env_fns, autoreset)
        if self.native is None:
            self.group.build(env_fns, autoreset)

    def run(self, command: str, data: Any) -> tuple[str, Any]:
        """Run one command; ``("ok", value)`` or ``("error", report)``."""
        self.group.rank = self.group.first_rank
        try:
            return "ok", self._commands[command](data)
        except BaseException as error:  # reported, the server stays usable
            return "error", self.describe(error)

    def describe(self, error: BaseException) -> ErrorReport:
        """What the parent needs to raise VecEnvWorkerError for ``error``."""
        remote = "".join(traceback.format_exception(error))
        return self.group.rank, type(error).__name__, str(error), remote

    def share(self, observations: Any, flags: tuple[np.ndarray, ...]) -> None:
        """Write observations and flags into these whole-batch arrays (this slice's rows) from
        now on, instead of replying with them."""
        self._observations, self._flags = observations, flags

    def unshare(self) -> None:
        """Drop the shared arrays (before the memory behind them goes)."""
        self._observations = self._flags = None

    def close(self) -> ErrorReport | None:
        """Close the slice's sub-envs, even if some raise; describe the first error."""
        if self.native is not None:
            try:
                self.native.close()
            except Exception as error:
                return self.describe(error)
            return None
        failure = self.group.close()
        return None if failure is None else self.describe(failure)

    # -- commands ---------------------------------------------------------------------------
    def _spaces(self, _: None) -> list[tuple[Space[Any], Space[Any]]]:
        if self.native is not None:
            pair = (self.native.single_observation_space, self.native.single_action_space)
            return [pair] * self.native.num_envs
        return self.group.spaces

    def _reset(
        self, data: tuple[Sequence[int | None], Sequence[dict[str, Any] | None]]
    ) -> tuple[Any, Any]:
        seeds, options = data
        if self.native is not None:
            seed = None if any(s is None for s in seeds) else list(seeds)
            result = self.native.reset(seed=seed, options=list(options))
            return self._store_batch(result.observations), _shippable(result.infos)
        observations, infos = zip(*self.group.reset(seeds, options), strict=True)
        return self._store(observations), list(infos)

    def _step(self, actions: Any) -> tuple[Any, Any, Any]:
        if self.native is not None:
            result = self.native.step(actions)
            flags = (result.rewards, result.terminated, result.truncated)
            observations = self._store_batch(result.observations)
            return observations, self._store_flags(flags), _shippable(result.infos)
        observations, rewards, terminated, truncated, infos = zip(
            *self.group.step(actions), strict=True
        )
        flags = _flag_arrays(rewards, terminated, truncated)
        return self._store(observations), self._store_flags(flags), list(infos)

    def _heal(self, seeds: Sequence[int | None]) -> tuple[Any, Any, Any]:
        size = self.num_envs
        observations, infos = self._reset((seeds, [None] * size))
        flags = (np.zeros(size), np.zeros(size, dtype=bool), np.ones(size, dtype=bool))
        infos = [{**info, "worker_restarted": True} for info in _unshipped(infos)]
        return observations, self._store_flags(flags), infos

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

    # -- results into the shared batch ------------------------------------------------------
    def _store(self, observations: tuple[Any, ...]) -> Any:
        """The sub-envs' observations as the slice's batch, or written into the shared batch."""
        if self._observations is None:
            return concatenate(self.group.envs[0].observation_space, observations)
        first = self.first_rank
        if isinstance(self._observations, np.ndarray) and _shared_memory.write_rows(
            self._observations[first : first + len(observations)], observations
        ):
            return ()
        # one by one, each shape checked (numpy would broadcast a wrong one into its row)
        for index, observation in enumerate(observations, start=first):
            self.group.rank = index
            _shared_memory.write(self._observations, index, observation)
        return ()

    def _store_batch(self, batch: Any) -> Any:
        """A native slice's batch as it is, or written into the shared batch."""
        if self._observations is None:
            return batch
        _shared_memory.write_batch(self._observations, self.first_rank, batch)
        return ()

    def _store_flags(self, flags: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...] | None:
        if self._flags is None:
            return flags
        rows = slice(self.first_rank, self.first_rank + len(flags[0]))
        for shared, array in zip(self._flags, flags, strict=True):
            shared[rows] = array
        return None


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


def _shippable(infos: Sequence[dict[str, Any]]) -> Any:
    """A native env's lazy infos, to travel as the arrays they are built from, not as dicts."""
    if isinstance(infos, _LazyInfos):
        return _ShippedInfos(len(infos), infos._build)
    return list(infos)


def _unshipped(infos: Any) -> Sequence[dict[str, Any]]:
    if isinstance(infos, _ShippedInfos):
        return _LazyInfos(infos.num_envs, infos.build)
    return infos  # type: ignore[no-any-return]


class _ShippedInfos:
    """Unpickles as the _LazyInfos it stands for; its builder travels by value (cloudpickle)."""

    def __init__(self, num_envs: int, build: Callable[[int], dict[str, Any]]) -> None:
        self.num_envs = num_envs
        self.build = build

    def __reduce__(self) -> tuple[Any, ...]:
        return _LazyInfos, (self.num_envs, self.build)
