"""The VecEnv base class: everything the vector backends share.

A backend (SyncVecEnv, AsyncVecEnv, ProcVecEnv) only says how its sub-envs are driven, by
implementing these hooks; the public methods validate their input, check ``closed`` and call them:

- ``_reset_subenvs(seeds, options) -> VecResetResult``: ``seeds`` and ``options`` are lists with one
  entry (int or None, dict or None) per sub-env, already derived by ``VecEnv.reset``.
- ``_step_subenvs(actions) -> VecStepResult``: ``actions`` is a list of ``num_envs`` per-env
  actions.
- ``_async_reset_subenvs`` / ``_async_step_subenvs``: awaitable versions; default to the above.
- ``_get_attr(name) -> list``, ``_set_attr(name, values)`` (``values`` a list of ``num_envs``),
  ``_call(name, args, kwargs) -> list``: reach each sub-env through its wrapper stack.
- ``_close()``: release the sub-envs; called once, by the first ``VecEnv.close``.

Autoreset is not re-implemented per backend: every backend runs its sub-envs with the toolkit
of ``sekai.vector.backend`` (an ``EnvGroup`` of prepared sub-envs, and the stacking of their
results), which applies the autoreset convention once for all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from sekai.checks import check_positive_int, check_seed, is_whole_number
from sekai.spaces import Space, batch_space, iterate
from sekai.vector.errors import VecEnvClosed, VecEnvWorkerError
from sekai.vector.results import VecResetResult, VecStepResult

__all__ = [
    "AutoresetMode",
    "VecEnv",
    "VecEnvClosed",
    "VecEnvWorkerError",
    "VecResetResult",
    "VecStepResult",
]

AutoresetMode = bool | Literal["next_step"]
SeedArg = int | Sequence[int | None] | None
OptionsArg = dict[str, Any] | Sequence[dict[str, Any] | None] | None


class VecEnv:
    """``num_envs`` copies of an environment, reset and stepped as one batch.

    ``observation_space`` and ``action_space`` are the single-env spaces;
    ``batch_observation_space`` and ``batch_action_space`` the batched ones. ``autoreset`` is
    True (same-step: a finished sub-env is reset inside the same step, its last observation in
    ``infos[i]["final_observation"]``), ``"next_step"`` (gymnasium's convention) or False.
    """

    spec: Any = None
    # A backend that ships an array of actions to its workers in slices sets this: its step
    # hooks then get that array itself, not one row view per sub-env, which it would never read
    # (making and freeing 256 views costs about 0.1 ms of a step on a busy 2-core machine).
    _takes_array_actions = False

    def __init__(
        self,
        num_envs: int,
        observation_space: Space[Any],
        action_space: Space[Any],
        *,
        autoreset: AutoresetMode = True,
    ) -> None:
        self.num_envs = check_positive_int(num_envs, "num_envs")
        _check_autoreset(autoreset)
        self.observation_space = observation_space
        self.action_space = action_space
        self.batch_observation_space = batch_space(observation_space, self.num_envs)
        self.batch_action_space = batch_space(action_space, self.num_envs)
        self.autoreset = autoreset
        self.closed = False

    # -- public API ---------------------------------------------------------------------------
    def reset(self, *, seed: SeedArg = None, options: OptionsArg = None) -> VecResetResult:
        """Reset every sub-env. ``seed``: an int (spawns independent child seeds), a list of
        ``num_envs`` seeds, or None (continue); ``options``: one dict or a list of ``num_envs``."""
        self._check_open()
        return self._reset_subenvs(self._child_seeds(seed), self._per_env_options(options))

    def step(self, actions: Any) -> VecStepResult:
        """Step every sub-env with its action from the batch ``actions``."""
        self._check_open()
        return self._step_subenvs(self._split_actions(actions))

    async def async_reset(
        self, *, seed: SeedArg = None, options: OptionsArg = None
    ) -> VecResetResult:
        """Awaitable ``reset``; concurrent on backends whose sub-envs do I/O."""
        self._check_open()
        seeds, per_env = self._child_seeds(seed), self._per_env_options(options)
        return await self._async_reset_subenvs(seeds, per_env)

    async def async_step(self, actions: Any) -> VecStepResult:
        """Awaitable ``step``; concurrent on backends whose sub-envs do I/O."""
        self._check_open()
        return await self._async_step_subenvs(self._split_actions(actions))

    def get_attr(self, name: str) -> list[Any]:
        """Read ``name`` from each sub-env, looking through its wrapper stack."""
        self._check_open()
        return self._get_attr(name)

    def set_attr(self, name: str, value: Any) -> None:
        """Set ``name`` on each sub-env: one value for all, or a list of ``num_envs`` values."""
        self._check_open()
        self._set_attr(name, self._per_env_values(name, value))

    def call(self, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        """Call method ``name`` on each sub-env (or read it, if it is not callable)."""
        self._check_open()
        return self._call(name, args, kwargs)

    def render(self) -> list[Any]:
        """One frame per sub-env, each what the sub-env's ``render()`` returns (with
        ``render_mode="rgb_array"``, an RGB array)."""
        return self.call("render")

    @property
    def metadata(self) -> dict[str, Any]:
        """The sub-envs' ``metadata`` (``render_modes``, ``render_fps``, ...), unless a
        subclass assigns its own."""
        if "_metadata" in vars(self):
            return vars(self)["_metadata"]  # type: ignore[no-any-return]
        metadata: dict[str, Any] = self.get_attr("metadata")[0]
        return metadata

    @metadata.setter
    def metadata(self, value: dict[str, Any]) -> None:
        vars(self)["_metadata"] = value

    @property
    def render_mode(self) -> str | None:
        """The sub-envs' ``render_mode``: what ``render`` gives a frame of, unless a
        subclass assigns its own."""
        if "_render_mode" in vars(self):
            return vars(self)["_render_mode"]  # type: ignore[no-any-return]
        render_mode: str | None = self.get_attr("render_mode")[0]
        return render_mode

    @render_mode.setter
    def render_mode(self, value: str | None) -> None:
        vars(self)["_render_mode"] = value

    def close(self) -> None:
        """Close the sub-envs and release everything; calling it again does nothing."""
        if self.closed:
            return
        self.closed = True
        self._close()

    @property
    def single_observation_space(self) -> Space[Any]:
        """gymnasium's name for ``observation_space``, one sub-env's space."""
        return self.observation_space

    @property
    def single_action_space(self) -> Space[Any]:
        """gymnasium's name for ``action_space``, one sub-env's space."""
        return self.action_space

    @property
    def unwrapped(self) -> VecEnv:
        """The innermost VecEnv below any vector wrappers (this one)."""
        return self

    def __len__(self) -> int:
        return self.num_envs

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_envs={self.num_envs})"

    def __enter__(self) -> VecEnv:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- backend hooks ------------------------------------------------------------------------
    def _reset_subenvs(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> VecResetResult:
        raise NotImplementedError

    def _step_subenvs(self, actions: list[Any]) -> VecStepResult:
        raise NotImplementedError

    async def _async_reset_subenvs(
        self, seeds: list[int | None], options: list[dict[str, Any] | None]
    ) -> VecResetResult:
        return self._reset_subenvs(seeds, options)

    async def _async_step_subenvs(self, actions: list[Any]) -> VecStepResult:
        return self._step_subenvs(actions)

    def _get_attr(self, name: str) -> list[Any]:
        raise NotImplementedError

    def _set_attr(self, name: str, values: list[Any]) -> None:
        raise NotImplementedError

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        raise NotImplementedError

    def _close(self) -> None:
        """Release the sub-envs; the base has already marked the VecEnv closed."""

    # -- input checks shared by every backend -------------------------------------------------
    def _check_open(self) -> None:
        if self.closed:
            raise VecEnvClosed()

    def _child_seeds(self, seed: SeedArg) -> list[int | None]:
        n = self.num_envs
        if seed is None:
            return [None] * n
        if isinstance(seed, list | tuple | np.ndarray):
            if len(seed) != n:
                raise ValueError(f"seed needs one entry per sub-env ({n}), got {len(seed)}")
            return [check_seed(s) for s in seed]  # all checked before any sub-env is reset
        if is_whole_number(seed):
            root = np.random.SeedSequence(check_seed(seed))
            return [_child_seed(child) for child in root.spawn(n)]
        raise TypeError(
            f"seed must be an int, a list of {n} ints or None, got {type(seed).__name__}"
        )

    def _per_env_options(self, options: OptionsArg) -> list[dict[str, Any] | None]:
        n = self.num_envs
        if options is None or isinstance(options, dict):
            return [options] * n
        if isinstance(options, list | tuple):
            if len(options) != n:
                raise ValueError(
                    f"options needs one dict per sub-env ({n}), got a list of {len(options)}"
                )
            for entry in options:
                if entry is not None and not isinstance(entry, dict):
                    raise TypeError(
                        f"each entry of options must be a dict or None, got {type(entry).__name__}"
                    )
            return list(options)
        raise TypeError(
            f"options must be a dict, a list of {n} dicts or None, got {type(options).__name__}"
        )

    def _split_actions(self, actions: Any) -> list[Any]:
        """The per-env actions the step hooks get (typed as the hooks' list: a backend taking
        array actions, the only one that gets an array here, accepts both)."""
        per_env: Any
        if isinstance(actions, list):
            per_env = actions
        elif isinstance(actions, np.ndarray) and actions.ndim > 0:
            # a batch of discrete actions becomes Python ints (cheap to make and to compare)
            discrete = actions.ndim == 1 and actions.dtype.kind in "biu"
            if discrete:
                per_env = actions.tolist()
            elif self._takes_array_actions:
                per_env = actions
            else:
                per_env = _ActionRows(actions)
        elif _is_single_value(actions):  # iterate() would fail on it with a bare TypeError
            raise ValueError(_single_value_message(self.num_envs, actions))
        else:
            per_env = list(iterate(self.action_space, actions))
        if len(per_env) != self.num_envs:
            raise ValueError(
                f"actions must hold one action per sub-env ({self.num_envs}), got {len(per_env)}"
            )
        if isinstance(actions, np.ndarray):
            _check_batch_shape(self.batch_action_space, actions)
        return per_env  # type: ignore[no-any-return]

    def _per_env_values(self, name: str, value: Any) -> list[Any]:
        if not isinstance(value, list):
            return [value] * self.num_envs
        if len(value) != self.num_envs:
            raise ValueError(
                f"set_attr({name!r}, ...) takes one value for all sub-envs or a list of "
                f"{self.num_envs} values (one per sub-env), got a list of {len(value)}; "
                "to set a list-valued attribute on every sub-env, pass [value] * num_envs"
            )
        return value


class _ActionRows(list[Any]):
    """The per-env actions of an array batch (its rows), keeping the array as ``batch``: a
    backend that ships slices of it need not stack the rows again."""

    __slots__ = ("batch",)

    def __init__(self, batch: np.ndarray) -> None:
        super().__init__(batch)
        self.batch = batch


# -- checks shared by every backend ------------------------------------------------------------
def _check_autoreset(autoreset: object) -> None:
    if autoreset is not True and autoreset is not False and autoreset != "next_step":
        raise ValueError(f'autoreset must be True, False or "next_step", got {autoreset!r}')


def _is_single_value(actions: Any) -> bool:
    """True for a scalar (a number or a 0-d array), which is one action, not a batch."""
    return not isinstance(actions, dict | tuple) and np.ndim(actions) == 0


def _single_value_message(num_envs: int, actions: Any) -> str:
    """Why one action is not a batch; a gymnasium user expects ``action_space`` to be batched."""
    return (
        f"actions must hold one action per sub-env ({num_envs}), got the single value "
        f"{actions!r}: vec.action_space is one sub-env's space (gymnasium's "
        "single_action_space); sample a batch with vec.batch_action_space.sample()"
    )


def _check_batch_shape(batch_space: Space[Any], actions: np.ndarray) -> None:
    """ValueError for an array of actions whose shape is not the batch space's (when it has
    one): an extra axis would reach every sub-env as a wrongly shaped action, or broadcast."""
    shape = getattr(batch_space, "shape", None)
    if shape is not None and actions.shape != shape:
        raise ValueError(
            f"actions of shape {actions.shape} do not fit batch_action_space {batch_space}, "
            f"of shape {shape}"
        )


def _child_seed(seed_sequence: np.random.SeedSequence) -> int:
    """A plain int seed drawn from ``seed_sequence``, so it pickles and prints simply."""
    return int(seed_sequence.generate_state(1, dtype=np.uint64)[0])
