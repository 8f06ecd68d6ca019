"""Observation and reward normalisation from running statistics.

The statistics live in objects of their own, separate from the wrappers, so the vector wrappers
(``VecNormalizeObservation``, ``VecNormalizeReward``) reuse them: ``ObservationNormalizer``
takes a *batch* of observations (leading axis) in ``update`` and has a pure ``normalize``; the
single-env wrappers pass a batch of one. Reward scaling uses a
``RunningMeanStd`` of the discounted return.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sekai.core import ActType, Env, ObsType, ResetResult, StepResult
from sekai.spaces import Box, MaskedBox, Space
from sekai.wrappers._parts import (
    Part,
    Path,
    fill_empty_slots,
    map_part_spaces,
    map_parts,
    require_box_parts,
)
from sekai.wrappers.base import ObservationWrapper, Wrapper
from sekai.wrappers.running_stats import MeanStd, RunningMeanStd, make_mean_std


class ObservationNormalizer:
    """Statistics for every Box part of an observation space, and normalisation with them.

    A Box part is normalised per element; a MaskedBox per element of its element shape, from
    occupied slots only, and its empty slots keep ``fill_value``. Other parts (Discrete, ...)
    pass through unchanged. With ``clip``, normalised values are clipped to ``[-clip, clip]``.
    """

    def __init__(
        self,
        space: Space[Any],
        *,
        epsilon: float = 1e-8,
        stats: str = "running",
        halflife: float = 1000.0,
        clip: float | None = None,
    ) -> None:
        if clip is not None and not clip > 0:
            raise ValueError(f"clip must be positive or None, got {clip}")
        self.space = space
        self.clip = clip
        self._parts = dict(require_box_parts(space, "NormalizeObservation"))
        self.stats: dict[Path, MeanStd] = {
            path: make_mean_std(stats, _element_shape(part), epsilon, halflife)
            for path, part in self._parts.items()
        }
        self.observation_space = map_part_spaces(space, self._normalized_space)

    def update(self, batch: Any) -> None:
        """Add a batch of observations (every part with a leading sample axis)."""
        for path, stats in self.stats.items():
            part = _get(batch, path)
            if isinstance(self._parts[path], MaskedBox):  # only occupied slots are samples
                part = np.asarray(part["values"])[np.asarray(part["mask"]).astype(bool)]
            stats.update(part)

    def normalize(self, batch: Any) -> Any:
        """The batch with every Box part normalised; the statistics are not changed."""
        return map_parts(self.space, batch, self._normalize_part)

    def batch_of_one(self, observation: Any) -> Any:
        """One observation as a batch of one (Box parts get a leading axis)."""
        return map_parts(self.space, observation, _add_axis)

    def first(self, batch: Any) -> Any:
        """The first observation of a batch (inverse of ``batch_of_one``)."""
        return map_parts(self.space, batch, _first)

    def state_dict(self) -> dict[Path, dict[str, Any]]:
        """A copy of every part's statistics, keyed by the part's path (``()`` for a Box)."""
        return {path: stats.state_dict() for path, stats in self.stats.items()}

    def load_state_dict(self, state: dict[Path, dict[str, Any]]) -> None:
        """Restore statistics saved by ``state_dict`` for the same observation space."""
        if set(state) != set(self.stats):
            raise ValueError(
                f"state has parts {sorted(map(str, state))}, "
                f"expected {sorted(map(str, self.stats))}"
            )
        for path, stats in self.stats.items():
            stats.load_state_dict(state[path])

    def _normalize_part(self, path: Path, space: Part, part: Any) -> Any:
        stats = self.stats[path]
        if isinstance(space, MaskedBox):
            mask = np.array(part["mask"])
            values = fill_empty_slots(space, self._clip(stats.normalize(part["values"])), mask)
            return {"values": values.astype(np.float32), "mask": mask}
        return self._clip(stats.normalize(part))

    def _clip(self, values: np.ndarray) -> np.ndarray:
        if self.clip is None:
            return values
        return np.clip(values, -self.clip, self.clip)

    def _normalized_space(self, part: Part) -> Space[Any]:
        bound = np.inf if self.clip is None else float(self.clip)
        if isinstance(part, MaskedBox):
            fill = np.asarray(part.fill_value, np.float32)
            return MaskedBox(
                np.minimum(-bound, fill),
                np.maximum(bound, fill),
                shape=part.element_shape,
                max_size=part.max_size,
                dtype=np.float32,
                fill_value=part.fill_value,
            )
        return Box(-bound, bound, shape=part.shape, dtype=np.float32)

    def __repr__(self) -> str:
        return f"ObservationNormalizer({self.space})"


class NormalizeObservation(ObservationWrapper[Any, ActType]):
    """Normalise every Box part of the observation to zero mean and unit variance.

    Statistics are ``"running"`` (all samples so far) or ``"ewm"`` (exponentially weighted with
    ``halflife`` in steps). They live in ``obs_rms`` (save it with ``obs_rms.state_dict()``);
    set ``update_running_mean = False`` to freeze them, e.g. for evaluation.
    """

    def __init__(
        self,
        env: Env[Any, ActType],
        epsilon: float = 1e-8,
        *,
        stats: str = "running",
        halflife: float = 1000.0,
        clip: float | None = None,
    ) -> None:
        super().__init__(env)
        self.obs_rms = ObservationNormalizer(
            env.observation_space, epsilon=epsilon, stats=stats, halflife=halflife, clip=clip
        )
        self.observation_space = self.obs_rms.observation_space
        self.update_running_mean = True

    def observation(self, observation: Any) -> Any:
        batch = self.obs_rms.batch_of_one(observation)
        if self.update_running_mean:
            self.obs_rms.update(batch)
        return self.obs_rms.first(self.obs_rms.normalize(batch))


class NormalizeReward(Wrapper[ObsType, ActType]):
    """Divide rewards by the running standard deviation of the discounted return.

    The discounted return restarts with every episode; its statistics are ``return_rms``,
    frozen by ``update_running_mean = False``. They start from one pseudo-sample of variance 1,
    so the first rewards of a run are not divided by the near-zero spread of one return.
    """

    def __init__(
        self, env: Env[ObsType, ActType], gamma: float = 0.99, epsilon: float = 1e-8
    ) -> None:
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {gamma}")
        super().__init__(env)
        self.gamma = gamma
        self.epsilon = epsilon
        self.return_rms = RunningMeanStd((), epsilon, prior_weight=1.0)
        self.discounted_return = 0.0
        self.update_running_mean = True

    def after_reset(self, result: ResetResult) -> ResetResult:
        self.discounted_return = 0.0
        return result

    def after_step(self, result: StepResult) -> StepResult:
        observation, reward, terminated, truncated, info = result
        self.discounted_return = self.discounted_return * self.gamma + float(reward)
        if self.update_running_mean:
            self.return_rms.update([self.discounted_return])
        if result.done:  # also when an AutoReset below starts the next episode itself
            self.discounted_return = 0.0
        scaled = float(reward) / float(np.sqrt(self.return_rms.var + self.epsilon))
        return StepResult(observation, scaled, terminated, truncated, info)


def _element_shape(part: Part) -> tuple[int, ...]:
    return tuple(part.element_shape if isinstance(part, MaskedBox) else part.shape)


def _get(value: Any, path: Path) -> Any:
    for key in path:
        value = value[key]
    return value


def _add_axis(path: Path, space: Part, part: Any) -> Any:
    if isinstance(space, MaskedBox):
        return {"values": np.asarray(part["values"])[None], "mask": np.asarray(part["mask"])[None]}
    return np.asarray(part)[None]


def _first(path: Path, space: Part, part: Any) -> Any:
    if isinstance(space, MaskedBox):
        return {"values": part["values"][0], "mask": part["mask"][0]}
    return part[0]
