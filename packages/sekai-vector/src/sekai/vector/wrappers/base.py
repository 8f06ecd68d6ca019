"""Vector wrapper base classes: one VecEnv wrapped in another, on every backend.

Like the single-env wrappers, a vector wrapper changes its VecEnv through hooks
(``before_reset``, ``after_reset``, ``before_step``, ``after_step``) that run around both
``step`` and ``await async_step``, so wrapping an AsyncVecEnv keeps it concurrent. Wrappers
only use the public VecEnv API, so they work on native vector envs too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sekai.spaces import Space, batch_space, concatenate, iterate
from sekai.vector._lazy_infos import _LazyInfos
from sekai.vector.base import AutoresetMode, OptionsArg, SeedArg, VecEnv
from sekai.vector.results import VecResetResult, VecStepResult
from sekai.wrappers import route_async_to_sync_overrides

Infos = Sequence[dict[str, Any]]


class VecWrapper(VecEnv):
    """Wrap ``venv`` and pass everything through; subclasses override the hooks they need.

    ``observation_space`` and ``action_space`` (and their batched versions) read through to the
    wrapped VecEnv until the wrapper assigns its own single-env space. Public attributes the
    wrapper lacks are read from the wrapped VecEnv; ``get_attr``/``set_attr``/``call`` reach
    the sub-envs, and ``unwrapped`` is the innermost VecEnv.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        route_async_to_sync_overrides(cls)  # a step()/reset() written without hooks is kept

    def __init__(self, venv: VecEnv) -> None:
        if not isinstance(venv, VecEnv):
            raise TypeError(f"a vector wrapper needs a VecEnv to wrap, got {type(venv).__name__}")
        self.venv = venv
        self._observation_space: Space[Any] | None = None
        self._batch_observation_space: Space[Any] | None = None
        self._action_space: Space[Any] | None = None
        self._batch_action_space: Space[Any] | None = None

    # -- hooks ---------------------------------------------------------------------------------
    def before_reset(self, seed: SeedArg, options: OptionsArg) -> None:
        """Called before the wrapped VecEnv resets."""

    def after_reset(self, result: VecResetResult) -> VecResetResult:
        """Transform the wrapped VecEnv's reset result."""
        return result

    def before_step(self, actions: Any) -> Any:
        """Transform the batch of actions before the wrapped VecEnv sees it."""
        return actions

    def after_step(self, result: VecStepResult) -> VecStepResult:
        """Transform the wrapped VecEnv's step result."""
        return result

    # -- VecEnv API ----------------------------------------------------------------------------
    def reset(self, *, seed: SeedArg = None, options: OptionsArg = None) -> VecResetResult:
        self.before_reset(seed, options)
        return self.after_reset(self.venv.reset(seed=seed, options=options))

    def step(self, actions: Any) -> VecStepResult:
        return self.after_step(self.venv.step(self.before_step(actions)))

    async def async_reset(
        self, *, seed: SeedArg = None, options: OptionsArg = None
    ) -> VecResetResult:
        self.before_reset(seed, options)
        return self.after_reset(await self.venv.async_reset(seed=seed, options=options))

    async def async_step(self, actions: Any) -> VecStepResult:
        return self.after_step(await self.venv.async_step(self.before_step(actions)))

    def get_attr(self, name: str) -> list[Any]:
        return self.venv.get_attr(name)

    def set_attr(self, name: str, value: Any) -> None:
        self.venv.set_attr(name, value)

    def call(self, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        return self.venv.call(name, *args, **kwargs)

    def render(self) -> Any:
        return self.venv.render()

    def close(self) -> None:
        self.venv.close()

    # -- read-through attributes ---------------------------------------------------------------
    @property
    def num_envs(self) -> int:  # type: ignore[override]
        return self.venv.num_envs

    @property
    def autoreset(self) -> AutoresetMode:  # type: ignore[override]
        return self.venv.autoreset

    @property
    def closed(self) -> bool:  # type: ignore[override]
        return self.venv.closed

    @property
    def spec(self) -> Any:  # type: ignore[override]
        return self.venv.spec

    @property
    def observation_space(self) -> Space[Any]:  # type: ignore[override]
        if self._observation_space is None:
            return self.venv.observation_space
        return self._observation_space

    @observation_space.setter
    def observation_space(self, space: Space[Any]) -> None:
        self._observation_space = space
        self._batch_observation_space = batch_space(space, self.num_envs)

    @property
    def batch_observation_space(self) -> Space[Any]:  # type: ignore[override]
        if self._batch_observation_space is None:
            return self.venv.batch_observation_space
        return self._batch_observation_space

    @property
    def action_space(self) -> Space[Any]:  # type: ignore[override]
        if self._action_space is None:
            return self.venv.action_space
        return self._action_space

    @action_space.setter
    def action_space(self, space: Space[Any]) -> None:
        self._action_space = space
        self._batch_action_space = batch_space(space, self.num_envs)

    @property
    def batch_action_space(self) -> Space[Any]:  # type: ignore[override]
        if self._batch_action_space is None:
            return self.venv.batch_action_space
        return self._batch_action_space

    @property
    def unwrapped(self) -> VecEnv:
        return self.venv.unwrapped

    def __getattr__(self, name: str) -> Any:
        # only called when normal lookup fails; private names and ``venv`` itself (missing while
        # the object is being built or unpickled) must not recurse
        if name.startswith("_") or name == "venv":
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self.venv, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.venv!r})"


class VecObservationWrapper(VecWrapper):
    """Transform every batch of observations with ``observation``, and every terminal
    observation that autoreset left in ``infos[i]["final_observation"]`` with
    ``final_observation``, so both reach the policy in the same representation."""

    def observation(self, batch: Any) -> Any:
        """Return the transformed batch (new arrays, never the wrapped env's buffers)."""
        raise NotImplementedError

    def final_observation(self, observation: Any) -> Any:
        """Transform one sub-env's terminal observation; by default ``observation`` on a
        batch of one. Override it when the transform has side effects or needs a full batch."""
        batch = self.observation(concatenate(self.venv.observation_space, [observation]))
        return next(iter(iterate(self.observation_space, batch)))

    def after_reset(self, result: VecResetResult) -> VecResetResult:
        return VecResetResult(self.observation(result.observations), result.infos)

    def after_step(self, result: VecStepResult) -> VecStepResult:
        observations = self.observation(result.observations)
        replaced = {
            i: {**info, "final_observation": self.final_observation(info["final_observation"])}
            for i, info in _finished_infos(result)
            if "final_observation" in info
        }
        return result._replace(
            observations=observations, infos=_replace_infos(result.infos, replaced)
        )


class VecRewardWrapper(VecWrapper):
    """Transform every ``(num_envs,)`` array of rewards with ``reward``."""

    def reward(self, rewards: np.ndarray) -> np.ndarray:
        """Return the transformed rewards (float64, one per sub-env)."""
        raise NotImplementedError

    def after_step(self, result: VecStepResult) -> VecStepResult:
        return result._replace(rewards=self.reward(result.rewards))


class VecActionWrapper(VecWrapper):
    """Transform every batch of actions with ``action`` before the wrapped VecEnv sees it."""

    def action(self, actions: Any) -> Any:
        """Return the batch of actions the wrapped VecEnv should receive."""
        raise NotImplementedError

    def before_step(self, actions: Any) -> Any:
        return self.action(actions)


def _finished_infos(result: VecStepResult) -> list[tuple[int, dict[str, Any]]]:
    """``(i, infos[i])`` for every sub-env that finished an episode in this step."""
    dones = result.dones
    if not dones.any():
        return []
    return [(i, result.infos[i]) for i in np.flatnonzero(dones).tolist()]


def _replace_infos(infos: Infos, replaced: dict[int, dict[str, Any]]) -> Infos:
    """``infos`` with the entries of ``replaced`` swapped in, keeping lazy infos lazy."""
    if not replaced:
        return infos
    if isinstance(infos, list):
        new = list(infos)
        for i, info in replaced.items():
            new[i] = info
        return new

    def build(i: int) -> dict[str, Any]:
        return replaced[i] if i in replaced else infos[i]

    return _LazyInfos(len(infos), build)
