"""NativeVecEnv: all sub-envs' state in arrays, advanced together by array operations.

A subclass implements the hooks ``_reset_envs(indices, options)``, ``_observe()``,
``_step(actions)`` and optionally ``_reset_infos(indices)``; this base adds seeding, per-env
options, the time limit, autoreset and the per-env info dicts. A step costs a fixed number of
array operations however many sub-envs there are, and the info dicts are only built for the
sub-envs whose ``infos[i]`` the caller reads.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from itertools import islice
from typing import Any, ClassVar, cast

import numpy as np

from sekai.checks import check_positive_int, check_seed, is_whole_number
from sekai.core import ResetResult, RngMixin, StepResult
from sekai.spaces import Space, concatenate, iterate
from sekai.vector._lazy_infos import InfoColumns, _LazyInfos
from sekai.vector.base import (
    AutoresetMode,
    OptionsArg,
    SeedArg,
    VecEnv,
    _check_batch_shape,
    _is_single_value,
    _single_value_message,
)
from sekai.vector.errors import VecEnvClosed
from sekai.vector.results import VecResetResult, VecStepResult
from sekai.wrappers import autoreset_result

InfoArrays = dict[str, Any]
_NO_ROWS = np.zeros(0, dtype=np.intp)
# VecStepResult's own __new__ is Python code; the tuple's is not
_vec_step_result = functools.partial(tuple.__new__, VecStepResult)


class NativeVecEnv(RngMixin, VecEnv):
    """Base class for vector envs simulated in array form; see the module docstring for hooks.

    ``max_episode_steps=n`` truncates every sub-env after n steps and puts
    ``infos[i]["elapsed_steps"]`` in each step's info, like the TimeLimit that make() adds to
    every sub-env of a SyncVecEnv. Every sub-env draws from the one generator ``self.rng``.
    A subclass that renders lists its modes in ``metadata``, sets ``render_mode`` and overrides
    ``render``, returning whatever suits it (a list of frames, one image of the batch).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}  # type: ignore[misc]
    render_mode: str | None = None  # type: ignore[assignment]

    def __init__(
        self,
        num_envs: int,
        observation_space: Space[Any],
        action_space: Space[Any],
        *,
        autoreset: AutoresetMode = True,
        max_episode_steps: int | None = None,
    ) -> None:
        super().__init__(num_envs, observation_space, action_space, autoreset=autoreset)
        if max_episode_steps is not None:
            max_episode_steps = check_positive_int(max_episode_steps, "max_episode_steps")
        self.max_episode_steps = max_episode_steps
        self.elapsed_steps = np.zeros(self.num_envs, dtype=np.int64)
        self._all_indices = np.arange(self.num_envs)
        self._reset_pending = np.zeros(self.num_envs, dtype=bool)  # autoreset="next_step"

    # -- hooks for subclasses -----------------------------------------------------------------
    def _reset_envs(self, indices: np.ndarray, options: list[dict[str, Any] | None]) -> None:
        """(Re)initialise the sub-envs in ``indices``, with one options dict (or None) each."""
        raise NotImplementedError

    def _observe(self) -> Any:
        """Return the batched observation of all sub-envs, as new arrays."""
        raise NotImplementedError

    def _step(self, actions: Any) -> tuple[Any, Any, Any, InfoArrays]:
        """Advance every sub-env; return ``(rewards, terminated, truncated, infos)``.

        The first three have shape ``(num_envs,)``; ``infos`` is a dict of arrays with a leading
        ``num_envs`` axis (a ``numpy.ma.MaskedArray`` leaves the key out of the masked sub-envs'
        infos). Return new arrays, not the env's own state.
        """
        raise NotImplementedError

    def _reset_infos(self, indices: np.ndarray) -> InfoArrays:
        """Info arrays (leading axis ``len(indices)``) for the sub-envs just reset."""
        return {}

    # -- public API ---------------------------------------------------------------------------
    def reset(self, *, seed: SeedArg = None, options: OptionsArg = None) -> VecResetResult:
        """Reset every sub-env. ``seed`` (an int, or a list of ints combined into one seed)
        re-seeds ``self.rng``; None continues it."""
        self._check_open()
        per_env_options = self._per_env_options(options)
        native_seed = _native_seed(seed)
        if native_seed is not None:
            self.rng = np.random.default_rng(native_seed)
        indices = self._all_indices
        self._reset_envs(indices, per_env_options)
        self.elapsed_steps[:] = 0
        self._reset_pending[:] = False
        observations = self._observe()
        reset_infos = self._reset_infos(indices)
        return VecResetResult(observations, _step_infos(reset_infos, self.num_envs))

    def step(self, actions: Any) -> VecStepResult:
        """Step every sub-env with one array operation per quantity, whatever ``num_envs``."""
        if self.closed:  # _check_open, inlined: a step's fixed cost is what small batches pay
            raise VecEnvClosed()
        n = self.num_envs
        rewards, terminated, truncated, step_infos = self._step(self._batch_actions(actions))
        rewards = np.asarray(rewards, dtype=np.float64)
        terminated = np.asarray(terminated, dtype=bool)
        truncated = np.asarray(truncated, dtype=bool)
        if not rewards.shape == terminated.shape == truncated.shape == (n,):
            raise ValueError(
                f"{type(self).__name__}._step() must return rewards, terminated and truncated "
                f"of shape ({n},), got shapes {rewards.shape}, {terminated.shape} and "
                f"{truncated.shape}"
            )
        self.elapsed_steps += 1

        replaced: np.ndarray | None = None  # rows whose info is a reset's, not the step's
        replaced_infos: InfoArrays | None = None
        if self.autoreset == "next_step" and self._reset_pending.any():
            pending = self._reset_pending
            replaced = np.flatnonzero(pending)
            self._reset_envs(replaced, [None] * len(replaced))
            self.elapsed_steps[replaced] = 0
            rewards = np.where(pending, 0.0, rewards)
            terminated = terminated & ~pending
            truncated = truncated & ~pending
            replaced_infos = self._reset_infos(replaced)

        if self.max_episode_steps is not None:  # into a new array: _step may reuse its own
            over = self.elapsed_steps >= self.max_episode_steps
            over |= truncated
            truncated = over
            step_infos = {**step_infos, "elapsed_steps": self.elapsed_steps.copy()}
        observations = self._observe()
        dones = terminated | truncated

        if self.autoreset == "next_step":
            self._reset_pending = dones
            if replaced is None or replaced_infos is None:
                infos = _step_infos(step_infos, n)
            else:
                build = _next_step_info_builder(step_infos, n, replaced, replaced_infos)
                columns = InfoColumns(step_infos, replaced, replaced_infos)
                infos = _LazyInfos(n, build, columns)
        # dones.nonzero() is one C call; any() and flatnonzero() each go through Python
        elif self.autoreset and len(finished := dones.nonzero()[0]):
            self._reset_envs(finished, [None] * len(finished))
            self.elapsed_steps[finished] = 0
            rows = _AutoresetRows(
                self.observation_space,
                observations,
                rewards,
                terminated,
                truncated,
                step_infos,
                finished,
                self._reset_infos(finished),
            )
            observations = self._observe()
            infos = _LazyInfos(n, rows.info, rows.columns)
        else:
            infos = _step_infos(step_infos, n)
        return _vec_step_result((observations, rewards, terminated, truncated, infos))

    async def async_reset(
        self, *, seed: SeedArg = None, options: OptionsArg = None
    ) -> VecResetResult:
        return self.reset(seed=seed, options=options)

    async def async_step(self, actions: Any) -> VecStepResult:
        return self.step(actions)

    def set_attr(self, name: str, value: Any) -> None:
        """Change the existing attribute ``name``: a list of ``num_envs`` values becomes one
        array, any other value (a list of another length too) is stored as it is.
        AttributeError for a name this env does not have: it would change nothing."""
        self._check_open()
        if not hasattr(self, name):
            raise AttributeError(
                f"{type(self).__name__} has no attribute {name!r}; set_attr only changes "
                "existing attributes, since a new one would not change the simulation"
            )
        if isinstance(value, list) and len(value) == self.num_envs:
            value = np.asarray(value)
        setattr(self, name, value)

    def render(self) -> Any:  # type: ignore[override]
        """Nothing by default: a native env has no sub-env objects to ask for frames."""
        return None

    # -- get_attr/call on the native object itself --------------------------------------------
    def _get_attr(self, name: str) -> list[Any]:
        return self._split_per_env(getattr(self, name))

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        attribute = getattr(self, name)
        value = attribute(*args, **kwargs) if callable(attribute) else attribute
        return self._split_per_env(value)

    def _split_per_env(self, value: Any) -> list[Any]:
        """An array with a leading num_envs axis gives one value per sub-env; else repeat it."""
        if isinstance(value, np.ndarray) and value.ndim >= 1 and len(value) == self.num_envs:
            return value.tolist() if value.ndim == 1 else list(value)
        return [value] * self.num_envs

    def _batch_actions(self, actions: Any) -> Any:
        if type(actions) is np.ndarray and actions.ndim:  # the usual batch: one check left
            self._check_action_array(actions)
            return actions
        if isinstance(actions, list):
            if len(actions) != self.num_envs:
                raise ValueError(
                    f"actions must hold one action per sub-env ({self.num_envs}), "
                    f"got {len(actions)}"
                )
            return concatenate(self.action_space, actions)
        if _is_single_value(actions):  # array operations would broadcast it to every sub-env
            raise ValueError(_single_value_message(self.num_envs, actions))
        if isinstance(actions, np.ndarray):
            self._check_action_array(actions)
        return actions

    def _check_action_array(self, actions: np.ndarray) -> None:
        """A batch of actions as an array: num_envs of them, each in the action space's shape."""
        if len(actions) != self.num_envs:
            raise ValueError(
                f"actions must have a leading axis of num_envs ({self.num_envs}), "
                f"got shape {actions.shape}"
            )
        _check_batch_shape(self.batch_action_space, actions)


def _native_seed(seed: SeedArg) -> int | list[int] | None:
    if seed is None:
        return None
    if isinstance(seed, list | tuple | np.ndarray) and all(s is not None for s in seed):
        return [cast(int, check_seed(s)) for s in seed]
    if is_whole_number(seed):
        return check_seed(seed)
    raise TypeError(
        "a native vector env takes seed as an int, a list of ints (combined into one seed) "
        f"or None, got {seed!r}"
    )


# -- per-env info dicts, built on access ------------------------------------------------------
def info_row(arrays: InfoArrays, i: int, n: int) -> dict[str, Any]:
    """Sub-env i's info: row i of each array with a leading n axis (1-D rows as Python scalars).
    A masked array's masked rows have no such key: figures only some sub-envs have this step."""
    info = {}
    for key, value in arrays.items():
        if isinstance(value, np.ma.MaskedArray):
            if np.ma.getmaskarray(value)[i]:
                continue
            value = value.data
        info[key] = _row(value, i, n)
    return info


def _row(value: Any, i: int, n: int) -> Any:
    if isinstance(value, np.ndarray) and value.ndim >= 1 and len(value) == n:
        return value[i].item() if value.ndim == 1 else value[i]
    return value


def _rows(value: Any, indices: np.ndarray, n: int) -> Any:
    """The entries of ``indices`` of a per-env array (leading axis n); other values as they are."""
    if isinstance(value, np.ndarray) and value.ndim >= 1 and len(value) == n:
        return value[indices]
    return value


# The builders of lazy infos are partials of module functions, not closures: a ProcVecEnv worker
# or Ray actor running a native slice pickles them every step, and a closure would travel by value
# (code and all) where a partial travels as a reference and its arrays.
def _step_infos(step_infos: InfoArrays, n: int) -> _LazyInfos:
    """Infos that are each sub-env's row of ``step_infos``."""
    columns = InfoColumns(step_infos, _NO_ROWS, None)
    return _LazyInfos(n, functools.partial(_step_info, step_infos, n), columns)


def _step_info(step_infos: InfoArrays, n: int, i: int) -> dict[str, Any]:
    return info_row(step_infos, i, n)


def _next_step_info_builder(
    step_infos: InfoArrays, n: int, replaced: np.ndarray, reset_infos: InfoArrays
) -> Callable[[int], dict[str, Any]]:
    return functools.partial(_next_step_info, step_infos, n, replaced, reset_infos)


def _next_step_info(
    step_infos: InfoArrays, n: int, replaced: np.ndarray, reset_infos: InfoArrays, i: int
) -> dict[str, Any]:
    position = _position(replaced, i)
    if position is None:
        return info_row(step_infos, i, n)
    return info_row(reset_infos, position, len(replaced))


class _AutoresetRows:
    """What a step whose finished sub-envs were reset in it left: the step's info arrays and
    results, and the resets' infos. Their per-env infos (``info``) and the infos as columns
    (``columns``) are built from it only when read; a caller who reads neither pays one
    object per step."""

    __slots__ = (
        "finished",
        "observations",
        "reset_infos",
        "rewards",
        "space",
        "step_infos",
        "terminated",
        "truncated",
    )

    def __init__(
        self,
        space: Space[Any],
        observations: Any,
        rewards: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
        step_infos: InfoArrays,
        finished: np.ndarray,
        reset_infos: InfoArrays,
    ) -> None:
        self.space = space
        self.observations = observations  # the step's, before the resets
        self.rewards = rewards
        self.terminated = terminated
        self.truncated = truncated
        self.step_infos = step_infos
        self.finished = finished
        self.reset_infos = reset_infos

    def info(self, i: int) -> dict[str, Any]:
        """Sub-env i's info: its row of the step's, with the autoreset keys if it finished."""
        n = len(self.rewards)
        info = info_row(self.step_infos, i, n)
        position = _position(self.finished, i)
        if position is None:
            return info
        reset = ResetResult(None, info_row(self.reset_infos, position, len(self.finished)))
        return autoreset_result(self._step_result(i, info), reset).info

    def columns(self) -> InfoColumns:
        """The infos as arrays: the finished rows' as arrays too when the observations are."""
        if not isinstance(self.observations, np.ndarray):
            return InfoColumns(self.step_infos, self.finished, None)
        finished, n = self.finished, len(self.rewards)
        finished_infos = {key: _rows(value, finished, n) for key, value in self.step_infos.items()}
        irregular_arrays = {
            **finished_infos,
            "final_observation": self.observations[finished],
            "final_info": finished_infos,
            "reset_info": self.reset_infos,
        }
        return InfoColumns(self.step_infos, finished, irregular_arrays)

    def _step_result(self, i: int, info: dict[str, Any]) -> StepResult:
        if isinstance(self.observations, np.ndarray):
            observation = self.observations[i]
        else:
            observation = next(islice(iterate(self.space, self.observations), i, None))
        return StepResult(
            observation,
            float(self.rewards[i]),
            bool(self.terminated[i]),
            bool(self.truncated[i]),
            info,
        )


def _position(indices: np.ndarray, i: int) -> int | None:
    """Where ``i`` sits in the sorted array ``indices``, or None if it is not there."""
    position = int(np.searchsorted(indices, i))
    if position < len(indices) and indices[position] == i:
        return position
    return None
