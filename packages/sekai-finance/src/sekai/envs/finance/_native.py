"""The base of the native finance vector envs: the spec's rules, implemented once.

- ``vec.template`` is a single env built from the same keyword arguments; it holds the
  parameters, which the market model reads every step.
- ``get_attr``/``set_attr``/``call`` reach parameters by name. ``set_attr`` takes one value (or a
  list repeating one value) for every sub-env; different values per sub-env raise ValueError,
  since they need ``vectorization_mode="sync"``. Read-only parameters raise the single env's
  AttributeError.
- State attributes (``equity``, ``position``, ...) and ``elapsed_steps`` have one value per
  sub-env.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from sekai.envs.finance._pictures import EpisodeTrace
from sekai.envs.finance._single import FinanceEnv, InfoArrays
from sekai.vector.native import NativeVecEnv


class FinanceVecEnv(NativeVecEnv):
    """``num_envs`` copies of ``env_class`` simulated together by its market model.

    Takes the single env's keyword arguments plus ``max_episode_steps`` and ``autoreset``.
    """

    env_class: ClassVar[type[FinanceEnv]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.metadata = vec_metadata(cls.env_class.metadata)
        for name in cls.env_class.state_attributes:
            if name not in cls.__dict__:
                setattr(cls, name, property(_state_array(name), doc=f"Every sub-env's {name}."))

    def __init__(
        self,
        num_envs: int = 1,
        *,
        max_episode_steps: int | None = None,
        autoreset: bool | str = True,
        **kwargs: Any,
    ) -> None:
        check_vec_render_mode(self, kwargs.get("render_mode"))
        template = self.env_class(**kwargs)
        super().__init__(
            num_envs,
            template.observation_space,
            template.action_space,
            autoreset=autoreset,  # type: ignore[arg-type]
            max_episode_steps=max_episode_steps,
        )
        self.template = template
        self.render_mode = template.render_mode
        self._model = template._make_model(self.num_envs)
        self._reset_info_arrays: InfoArrays = {}
        self._traces = (
            [EpisodeTrace(template.picture, template) for _ in range(self.num_envs)]
            if template.render_mode == "rgb_array"
            else None
        )

    # -- NativeVecEnv hooks: the model does the work ------------------------------------------
    def _reset_envs(self, indices: np.ndarray, options: list[dict[str, Any] | None]) -> None:
        self._reset_info_arrays = self._model.reset(indices, options, self.rng)
        if self._traces is not None:
            for i in indices.tolist():
                self._traces[i].start(self._state_of(i))

    def _reset_infos(self, indices: np.ndarray) -> InfoArrays:
        return self._reset_info_arrays

    def _observe(self) -> np.ndarray:
        return self._model.observe()

    def _step(self, actions: Any) -> tuple[Any, Any, Any, InfoArrays]:
        result = self._model.step(np.asarray(actions), self.rng)
        if self._traces is not None:
            for i, trace in enumerate(self._traces):
                trace.record(self._state_of(i))
        return result

    # -- frames ----------------------------------------------------------------------------------
    def render(self) -> list[Any] | None:  # type: ignore[override]
        """With ``render_mode="rgb_array"``, one frame per sub-env of its episode so far, as the
        single env draws it (None for a sub-env not reset yet); with ``"ansi"``, the template
        describes no sub-env's step, so None, as without a render mode."""
        if self._traces is None:
            return None
        return [trace.draw() for trace in self._traces]

    def _state_of(self, i: int) -> Callable[[str], Any]:
        """Sub-env ``i``'s state attributes, by name."""
        return lambda name: getattr(self._model, name)[i]

    # -- parameters live on the template -------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        # only called for names not found the usual way: the template's parameters
        if name in type(self).env_class.parameters and "template" in self.__dict__:
            return getattr(self.template, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def set_attr(self, name: str, value: Any) -> None:
        """Parameters: one value for every sub-env (a list of ``num_envs`` equal values is one
        value); anything else as ``NativeVecEnv.set_attr``."""
        self._check_open()
        if name not in self.env_class.parameters:
            super().set_attr(name, value)
            return
        if isinstance(value, list) and len(value) == self.num_envs:
            first = value[0]
            if not all(_same(first, other) for other in value[1:]):
                raise ValueError(
                    f"{type(self).__name__} shares {name!r} between its sub-envs, so set_attr "
                    f"takes one value (or a list repeating one value), got different values "
                    f"{value!r}; for different values per sub-env use "
                    f'make_vec(..., vectorization_mode="sync")'
                )
            value = first
        setattr(self.template, name, value)

    def _get_attr(self, name: str) -> list[Any]:
        if name in self.env_class.parameters:
            return [getattr(self.template, name)] * self.num_envs
        return super()._get_attr(name)


def vec_metadata(env_metadata: dict[str, Any]) -> dict[str, Any]:
    """A native vector env's metadata: its env's, but for ``"human"``: one window cannot show
    a frame per sub-env."""
    modes = [mode for mode in env_metadata["render_modes"] if mode != "human"]
    return {**env_metadata, "render_modes": modes}


def check_vec_render_mode(vec: Any, render_mode: str | None) -> None:
    """ValueError for ``render_mode="human"``, which the single env has and ``vec`` has not
    (the single env rejects every other unknown mode)."""
    if render_mode == "human":
        raise ValueError(
            f"{type(vec).__name__} has no window: render_mode must be None or one of "
            f"{vec.metadata['render_modes']}, got 'human'"
        )


def _state_array(name: str) -> Callable[[FinanceVecEnv], np.ndarray]:
    def read(vec: FinanceVecEnv) -> np.ndarray:
        return np.array(getattr(vec._model, name))  # a copy: the model's own array changes

    return read


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(np.array_equal(np.asarray(a), np.asarray(b)))
    except (TypeError, ValueError):
        return False
