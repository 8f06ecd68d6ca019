"""check_env: run an env through the ``sekai.Env`` contract and say exactly what it breaks.

A broken contract raises ``EnvCheckError`` naming the problem. Things that work but will
bite later (float64 observations in a float32 space, a ``reset`` that never seeds ``self.rng``)
only warn, with ``EnvCheckWarning``.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
import numbers
from typing import Any

import numpy as np

from sekai._warnings import warn
from sekai.core import Env, ResetResult, StepResult
from sekai.multi_agent import MultiAgentEnv
from sekai.spaces import Box, Dict, Space, Tuple

__all__ = ["EnvCheckError", "EnvCheckWarning", "check_env"]

_SEED = 123
_STEPS = 10  # steps per rollout of the determinism check


class EnvCheckError(AssertionError):
    """The env breaks the ``sekai.Env`` contract; the message says how."""


class EnvCheckWarning(UserWarning):
    """The env works, but does something its users will trip over."""


def check_env(env: Env[Any, Any], *, warn: bool = True, skip_render_check: bool = True) -> None:
    """Check that ``env`` keeps the ``sekai.Env`` contract; raise EnvCheckError if not.

    Checked, through any wrappers: the spaces are sekai spaces; ``reset`` and ``step`` return
    ``ResetResult`` / ``StepResult`` with observations in the
    observation space, a finite real reward, bool flags and a dict info; the same seed gives the
    same first observation and the same transitions under the same actions, and
    ``reset(seed=None)`` continues the stream instead of re-seeding (from fresh entropy or with
    the last seed); returned observations are
    not buffers the env later overwrites; ``action_mask()``, if the env has one, returns masks
    that ``action_space.sample(mask=...)`` accepts and that yield valid actions; ``close()`` may
    be called twice. With ``warn=True`` soft problems emit ``EnvCheckWarning``. The env is
    reset, stepped and finally closed.

    Wrappers that learn as they go (``NormalizeObservation``, ``NormalizeReward``) make results
    depend on more than the seed; freeze them (``update_running_mean = False``) before checking.
    """
    if isinstance(env, MultiAgentEnv):
        raise TypeError(
            f"check_env checks single-agent sekai.Env objects; {type(env).__name__} is a "
            "MultiAgentEnv, whose dict-keyed API it does not cover"
        )
    if not isinstance(env, Env):
        raise TypeError(f"check_env expects a sekai.Env, got {type(env).__name__}")
    checker = _Checker(env, warn)
    checker.check_spaces()
    checker.check_reset_signature()
    checker.check_seeding()
    checker.check_observations_not_reused()
    if not skip_render_check:
        checker.check_render()
    checker.check_close_twice()


class _Checker:
    """The individual checks, sharing the env and the warnings already given."""

    def __init__(self, env: Env[Any, Any], warn: bool) -> None:
        self.env = env
        self.warn = warn
        self._warned: set[str] = set()

    # -- the checks ----------------------------------------------------------------------------

    def check_spaces(self) -> None:
        for name in ("observation_space", "action_space"):
            space = getattr(self.env, name, None)
            if not isinstance(space, Space):
                raise EnvCheckError(
                    f"env.{name} must be a sekai space (sekai.spaces.Space), "
                    f"got {type(space).__name__}: {space!r}"
                )

    def check_reset_signature(self) -> None:
        parameters = inspect.signature(self.env.reset).parameters.values()
        keywords = {p.name for p in parameters if p.kind is not inspect.Parameter.POSITIONAL_ONLY}
        takes_any_keyword = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
        if not takes_any_keyword and not {"seed", "options"} <= keywords:
            raise EnvCheckError(
                "reset() must accept the keyword arguments seed and options: "
                "def reset(self, *, seed=None, options=None)"
            )

    def check_seeding(self) -> None:
        """The same seed gives the same episode; reset(seed=None) continues the stream."""
        seeded = self.rollout(_SEED)
        again = self.rollout(_SEED)
        _compare(
            seeded, again, f"after reset(seed={_SEED})", "between two runs", _fix_seeding(self.env)
        )
        self.check_rng_reseeded(seeded.rng_state, again.rng_state)

        continued = self.rollout(None)
        self.rollout(_SEED)
        continued_again = self.rollout(None)
        _compare(
            continued,
            continued_again,
            f"after reset(), following reset(seed={_SEED}),",
            "between two runs",
            "reset(seed=None) must continue the current random stream, not re-seed it",
        )
        restarted = (
            seeded.rng_state is not None
            and continued.rng_state == seeded.rng_state
            and _same_rollout(continued, seeded)
            and not _same_rollout(self.rollout(_SEED + 1), seeded)
        )
        if restarted:
            raise EnvCheckError(
                f"reset() after reset(seed={_SEED}) replayed the seeded episode: reset(seed=None) "
                "must continue the current random stream, not re-seed it with an earlier seed"
            )

    def check_rng_reseeded(self, state: Any, state_again: Any) -> None:
        """Soft: reset(seed=s) should re-seed self.rng through self._set_rng(seed)."""
        if state is None:
            self.soft(
                "reset(seed=...) did not seed self.rng: call self._set_rng(seed) at the start "
                "of reset() so that seeding works the same way for every sekai env"
            )
        elif state != state_again:
            self.soft(
                f"after reset(seed={_SEED}) twice, self.rng is in different states: reset() "
                "should call self._set_rng(seed), which re-seeds it"
            )

    def check_observations_not_reused(self) -> None:
        """An observation returned earlier must not change when the env moves on."""
        action_space = self.env.action_space
        earlier: ResetResult | StepResult = self.reset(seed=_SEED)
        for _ in range(2):  # the observation of a reset(), then of a step()
            kept = copy.deepcopy(earlier.observation)
            later = self.reset() if earlier.done else self.step(self.sample_action(action_space))
            if not _same(earlier.observation, kept):
                call = "reset()" if isinstance(earlier, ResetResult) else "step()"
                raise EnvCheckError(
                    f"the observation returned by {call} changed during the next call (it was "
                    f"{kept!r}, it is now {earlier.observation!r}): return a new object every "
                    "time instead of a buffer the env keeps writing to"
                )
            earlier = later

    def check_render(self) -> None:
        modes = self.env.metadata.get("render_modes", [])
        if self.env.render_mode is not None and self.env.render_mode not in modes:
            raise EnvCheckError(
                f"render_mode {self.env.render_mode!r} is not in metadata['render_modes'] {modes}"
            )
        self.reset(seed=_SEED)
        self.env.render()

    def check_close_twice(self) -> None:
        for call in ("calling close()", "calling close() a second time"):
            try:
                self.env.close()
            except Exception as error:
                raise EnvCheckError(
                    f"{call} raised {type(error).__name__}: {error}; close() must release the "
                    "env's resources without raising, also when the env is already closed"
                ) from error

    # -- checked calls -------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None) -> ResetResult:
        try:
            result = self.env.reset(seed=seed)
        except NotImplementedError as error:
            raise EnvCheckError(f"reset() raised NotImplementedError: {error}") from error
        if not isinstance(result, ResetResult):
            raise EnvCheckError(
                "reset() must return sekai.ResetResult(observation, info), "
                f"got {type(result).__name__}: {result!r}"
            )
        self.check_observation(result.observation, "reset()")
        _check_info(result.info, "reset()")
        return result

    def step(self, action: Any) -> StepResult:
        try:
            result = self.env.step(action)
        except NotImplementedError as error:
            raise EnvCheckError(f"step() raised NotImplementedError: {error}") from error
        if not isinstance(result, StepResult):
            raise EnvCheckError(
                "step() must return sekai.StepResult(observation, reward, terminated, truncated, "
                f"info), got {type(result).__name__}: {result!r}"
            )
        self.check_observation(result.observation, "step()")
        reward = result.reward
        if not isinstance(reward, numbers.Real) or isinstance(reward, bool):
            raise EnvCheckError(
                f"step() returned reward {reward!r} of type {type(reward).__name__}; "
                "rewards must be real numbers (float, int or a NumPy scalar), not bools or arrays"
            )
        if not math.isfinite(reward):
            raise EnvCheckError(f"step() returned the non-finite reward {reward!r}")
        for flag in ("terminated", "truncated"):
            value = getattr(result, flag)
            if not isinstance(value, bool | np.bool_):
                raise EnvCheckError(
                    f"step() returned {flag}={value!r} of type {type(value).__name__}; "
                    "it must be a bool (or numpy.bool_)"
                )
        _check_info(result.info, "step()")
        return result

    def rollout(self, seed: int | None) -> _Rollout:
        """reset(seed=seed), then up to _STEPS steps with actions sampled from a seeded space.

        Results are kept as copies, so an env that reuses its buffers fails the buffer check,
        not this one.
        """
        space = self.env.action_space  # one object: a property may build a new space per access
        space.seed(_SEED)
        reset = self.reset(seed=seed)
        generator = getattr(self.env.unwrapped, "_rng", None)
        rollout = _Rollout(
            reset_observation=copy.deepcopy(reset.observation),
            rng_state=None if generator is None else generator.bit_generator.state,
        )
        for _ in range(_STEPS):
            result = self.step(self.sample_action(space))
            rollout.steps.append(result._replace(observation=copy.deepcopy(result.observation)))
            if result.done:
                break
        return rollout

    def sample_action(self, space: Space[Any]) -> Any:
        """A random action from ``space``, drawn with the env's action mask when it has one."""
        action_mask = getattr(self.env, "action_mask", None)
        if not callable(action_mask):
            return space.sample()
        mask = action_mask()
        try:
            action = space.sample(mask=mask)
        except Exception as error:
            raise EnvCheckError(
                f"action_mask() returned {mask!r}, which action_space.sample(mask=...) rejects "
                f"({type(error).__name__}: {error}); see the mask format of {space}"
            ) from error
        if action not in space:
            raise EnvCheckError(
                f"action {action!r}, sampled from action_space with the mask {mask!r} from "
                f"action_mask(), is not in the action space {space}"
            )
        return action

    def check_observation(self, observation: Any, where: str) -> None:
        space = self.env.observation_space
        if observation not in space:
            raise EnvCheckError(
                f"{where} returned an observation outside observation_space {space}: "
                f"{observation!r}"
            )
        for path, box, value in _box_parts(space, observation, ""):
            if not isinstance(value, np.ndarray | np.generic):
                self.soft(
                    f"the env returns observation{path} as a {type(value).__name__}, not a NumPy "
                    f"array: return np.asarray(..., dtype=np.{box.dtype}) so that wrappers and "
                    "vector envs get the array the Box promises"
                )
            elif value.dtype != box.dtype:
                self.soft(
                    f"the env returns observation{path} of dtype {value.dtype}, but the "
                    f"observation space has dtype {box.dtype}: cast it to {box.dtype} so it "
                    "matches what the space promises"
                )

    def soft(self, message: str) -> None:
        if self.warn and message not in self._warned:
            self._warned.add(message)
            warn(message, EnvCheckWarning)


def _check_info(info: Any, where: str) -> None:
    if not isinstance(info, dict):
        raise EnvCheckError(
            f"{where} returned info of type {type(info).__name__}; info must be a dict"
        )


def _box_parts(space: Space[Any], x: Any, path: str) -> list[tuple[str, Box, Any]]:
    """(path, Box, value) for every Box part of ``x``, through Dict and Tuple spaces."""
    if isinstance(space, Box):
        return [(path, space, x)]
    if isinstance(space, Dict):
        return [
            part
            for key, subspace in space.items()
            for part in _box_parts(subspace, x[key], f"{path}[{key!r}]")
        ]
    if isinstance(space, Tuple):
        return [
            part
            for index in range(len(space))
            for part in _box_parts(space[index], x[index], f"{path}[{index}]")
        ]
    return []


def _same(a: Any, b: Any) -> bool:
    """Whether two observations (arrays, scalars, dicts, tuples of them) are identical."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (
            isinstance(a, dict)
            and isinstance(b, dict)
            and a.keys() == b.keys()
            and all(_same(a[key], b[key]) for key in a)
        )
    if isinstance(a, tuple | list) or isinstance(b, tuple | list):
        return (
            isinstance(a, tuple | list)
            and isinstance(b, tuple | list)
            and len(a) == len(b)
            and all(map(_same, a, b))
        )
    a, b = np.asarray(a), np.asarray(b)
    return (
        a.shape == b.shape
        and a.dtype == b.dtype
        and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    )


def _fix_seeding(env: Env[Any, Any]) -> str:
    """The advice for an env whose seeded episodes differ: freeze a wrapper that learns as it
    goes (its statistics, not the env's randomness, make the runs differ), else seed properly."""
    from sekai.wrappers import Wrapper

    layer: Env[Any, Any] = env
    while isinstance(layer, Wrapper):
        if vars(layer).get("update_running_mean") is True:  # its own, not read through
            name = type(layer).__name__
            return (
                f"{name} updates its running statistics on every call, so results depend on "
                f"more than the seed: set update_running_mean = False on the {name} layer "
                "before checking"
            )
        layer = layer.env
    return "seed the env's randomness with self._set_rng(seed) in reset() and draw it from self.rng"


@dataclasses.dataclass
class _Rollout:
    """What one reset and the steps after it returned, and self.rng's state after the reset."""

    reset_observation: Any
    rng_state: Any
    steps: list[StepResult] = dataclasses.field(default_factory=list)


def _compare(expected: _Rollout, actual: _Rollout, after: str, between: str, fix: str) -> None:
    """Raise EnvCheckError at the first difference between two rollouts."""
    if not _same(expected.reset_observation, actual.reset_observation):
        raise EnvCheckError(
            f"the first observation {after} differs {between} ({expected.reset_observation!r} and "
            f"{actual.reset_observation!r}): {fix}"
        )
    if len(expected.steps) != len(actual.steps):
        raise EnvCheckError(
            f"the episode {after} lasted {len(expected.steps)} and then {len(actual.steps)} "
            f"steps under the same actions: {fix}"
        )
    for number, (a, b) in enumerate(zip(expected.steps, actual.steps, strict=True), 1):
        if not _same_transition(a, b):
            raise EnvCheckError(
                f"step {number} {after} differs {between} with the same actions: "
                f"{_transition(a)} then {_transition(b)}; {fix}"
            )


def _same_rollout(a: _Rollout, b: _Rollout) -> bool:
    return (
        _same(a.reset_observation, b.reset_observation)
        and len(a.steps) == len(b.steps)
        and all(map(_same_transition, a.steps, b.steps))
    )


def _same_transition(a: StepResult, b: StepResult) -> bool:
    return (
        _same(a.observation, b.observation)
        and a.reward == b.reward
        and bool(a.terminated) == bool(b.terminated)
        and bool(a.truncated) == bool(b.truncated)
    )


def _transition(result: StepResult) -> str:
    return (
        f"(observation={result.observation!r}, reward={result.reward!r}, "
        f"terminated={result.terminated!r}, truncated={result.truncated!r})"
    )
