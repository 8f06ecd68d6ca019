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

A backend registers itself for ``make_vec`` through the ``sekai_register_vectorization_modes``
hook of ``sekai.hookspecs``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Sequence
from typing import Any, TypeVar

import numpy as np

from sekai.core import Env, ResetResult, StepResult
from sekai.spaces import Space, concatenate
from sekai.vector.base import AutoresetMode, _check_autoreset
from sekai.vector.results import VecResetResult, VecStepResult

__all__ = [
    "EnvGroup",
    "check_env_fns",
    "check_same_spaces",
    "has_layer",
    "prepare_env",
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
        """Step each sub-env with its action."""
        return self._each(lambda env, index: env.step(actions[index]))

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
