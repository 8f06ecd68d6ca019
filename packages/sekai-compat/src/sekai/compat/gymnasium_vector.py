"""Vector envs across the two APIs: ``to_gymnasium_vector`` and ``from_gymnasium_vector``.

sekai's infos are a list of per-env dicts, gymnasium's one dict of arrays with a boolean ``_key``
mask per key; the bridges convert between the two. A native env's infos come as arrays already,
so converting them costs a few array operations, not one dict per sub-env.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from sekai.compat.gymnasium import _gymnasium_spec, _sekai_spec
from sekai.compat.spaces import from_gymnasium_space, to_gymnasium_space
from sekai.vector import VecEnv, VecResetResult, VecStepResult

__all__ = ["from_gymnasium_vector", "to_gymnasium_vector"]


def to_gymnasium_vector(vec: VecEnv) -> gymnasium.vector.VectorEnv[Any, Any, Any]:
    """A ``gymnasium.vector.VectorEnv`` driving the sekai ``vec``.

    ``metadata["autoreset_mode"]`` says how finished sub-envs restart: NEXT_STEP for
    ``autoreset="next_step"``, SAME_STEP for ``autoreset=True`` (the last observation in
    ``infos["final_obs"]``, the step's info in ``infos["final_info"]``).
    """
    if not isinstance(vec, VecEnv):
        raise TypeError(f"to_gymnasium_vector needs a sekai VecEnv, got {type(vec).__name__}")
    if vec.autoreset is False:
        raise ValueError(
            "to_gymnasium_vector needs a vector env that resets its sub-envs: make it with "
            'autoreset=True (gymnasium\'s SAME_STEP) or autoreset="next_step" (NEXT_STEP)'
        )
    return _GymnasiumVectorEnv(vec)


def from_gymnasium_vector(vec: gymnasium.vector.VectorEnv[Any, Any, Any]) -> VecEnv:
    """A sekai ``VecEnv`` driving the gymnasium vector env ``vec``.

    Its ``autoreset`` follows ``vec.metadata["autoreset_mode"]``: ``"next_step"`` for NEXT_STEP,
    True for SAME_STEP (infos in sekai's ``final_observation`` form), False for DISABLED.
    """
    if not isinstance(vec, gymnasium.vector.VectorEnv):
        raise TypeError(
            f"from_gymnasium_vector needs a gymnasium VectorEnv, got {type(vec).__name__}"
        )
    return _SekaiVecEnv(vec)


class _GymnasiumVectorEnv(gymnasium.vector.VectorEnv[Any, Any, Any]):
    """A sekai vector env seen through gymnasium's vector API."""

    def __init__(self, vec: VecEnv) -> None:
        self.vec = vec
        self.num_envs = vec.num_envs
        self.single_observation_space = to_gymnasium_space(vec.observation_space)
        self.single_action_space = to_gymnasium_space(vec.action_space)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        mode = AutoresetMode.NEXT_STEP if vec.autoreset == "next_step" else AutoresetMode.SAME_STEP
        self.metadata = {"autoreset_mode": mode}
        self.spec = None if vec.spec is None else _gymnasium_spec(vec.spec)

    def reset(
        self, *, seed: int | list[int] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        observations, infos = self.vec.reset(seed=seed, options=options)
        return observations, self._infos(infos)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        observations, rewards, terminated, truncated, infos = self.vec.step(actions)
        return observations, rewards, terminated, truncated, self._infos(infos)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return tuple(self.vec.get_attr(name))

    def set_attr(self, name: str, values: list[Any] | tuple[Any, ...] | Any) -> None:
        self.vec.set_attr(name, list(values) if isinstance(values, tuple) else values)

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        return tuple(self.vec.call(name, *args, **kwargs))

    def close_extras(self, **kwargs: Any) -> None:
        self.vec.close()

    def _infos(self, infos: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """sekai's per-env infos as gymnasium's dict of arrays with ``_key`` masks."""
        columns = getattr(infos, "columns", lambda: None)()
        if columns is None:
            arrays: dict[str, Any] = {}
            irregular: Any = range(self.num_envs)
        else:
            arrays, irregular = _regular_rows(columns.arrays, columns.irregular, self.num_envs)
            if columns.irregular_arrays is not None and len(irregular):
                rows = _gymnasium_row(columns.irregular_arrays)
                return _scatter(arrays, rows, irregular, self.num_envs)
        for i in irregular:
            arrays = self._add_info(arrays, _gymnasium_row(infos[i]), i)
        return arrays


def _regular_rows(arrays: dict[str, Any], irregular: Any, n: int) -> tuple[dict[str, Any], Any]:
    """Infos from arrays that hold every row but ``irregular``, those rows left to fill."""
    converted: dict[str, Any] = {}
    if len(irregular) == n:  # no row is a plain row of the arrays
        return converted, irregular
    regular = np.ones(n, dtype=bool)
    regular[irregular] = False
    for key, value in arrays.items():
        if isinstance(value, np.ndarray) and value.ndim >= 1 and len(value) == n:
            column = value.copy() if len(irregular) else value
        else:  # a value shared by every row
            column = np.empty(n, dtype=object)
            column[:] = [value] * n
        converted[key], converted[f"_{key}"] = column, regular.copy()
    return converted, irregular


def _scatter(infos: dict[str, Any], rows: dict[str, Any], indices: Any, n: int) -> dict[str, Any]:
    """Put ``rows`` (info arrays with a leading axis of len(indices)) at ``indices`` of ``infos``.

    What gymnasium's ``VectorEnv._add_info`` does one sub-env at a time, for all of them at once.
    """
    count = len(indices)
    for key, value in rows.items():
        if isinstance(value, dict):
            column: Any = _scatter(infos.get(key, {}), value, indices, n)
        elif key == "final_obs":  # gymnasium keeps final observations as objects, one per env
            column = infos.get(key)
            if column is None:
                column = np.empty(n, dtype=object)  # every entry None
            for index, observation in zip(indices.tolist(), list(value), strict=True):
                column[index] = observation
        elif isinstance(value, np.ndarray) and value.ndim >= 1 and len(value) == count:
            column = infos.get(key)
            if column is None:
                column = np.zeros((n, *value.shape[1:]), dtype=value.dtype)
            column[indices] = value
        else:  # a value shared by every row
            column = infos.get(key)
            if column is None:
                column = np.empty(n, dtype=object)
            column[indices] = [value] * count if column.dtype == object else value
        mask = infos.get(f"_{key}")
        if mask is None:
            mask = np.zeros(n, dtype=bool)
        mask[indices] = True
        infos[key], infos[f"_{key}"] = column, mask
    return infos


def _gymnasium_row(info: dict[str, Any]) -> dict[str, Any]:
    """Info in gymnasium's form (one sub-env's, or rows of arrays): an autoreset row carries
    the reset's info."""
    if "final_observation" not in info:
        return info
    return {
        **info["reset_info"],
        "final_obs": info["final_observation"],
        "final_info": info["final_info"],
    }


class _SekaiVecEnv(VecEnv):
    """A gymnasium vector env seen through sekai's vector API."""

    def __init__(self, vec: gymnasium.vector.VectorEnv[Any, Any, Any]) -> None:
        mode = AutoresetMode(vec.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP))
        autoreset: Any = {
            AutoresetMode.NEXT_STEP: "next_step",
            AutoresetMode.SAME_STEP: True,
            AutoresetMode.DISABLED: False,
        }[mode]
        super().__init__(
            vec.num_envs,
            from_gymnasium_space(vec.single_observation_space),
            from_gymnasium_space(vec.single_action_space),
            autoreset=autoreset,
        )
        self.vec = vec
        self.spec = None if vec.spec is None else _sekai_spec(vec.spec)

    def reset(self, *, seed: Any = None, options: Any = None) -> VecResetResult:
        self._check_open()
        if options is not None and not isinstance(options, dict):
            raise TypeError(
                "a gymnasium vector env takes one options dict for every sub-env, got "
                f"{type(options).__name__}"
            )
        observations, infos = self.vec.reset(seed=seed, options=options)
        return VecResetResult(observations, _split_infos(infos, self.num_envs))

    def step(self, actions: Any) -> VecStepResult:
        self._check_open()
        observations, rewards, terminated, truncated, infos = self.vec.step(actions)
        per_env = _split_infos(infos, self.num_envs)
        if self.autoreset is True:
            per_env = [_sekai_row(info) for info in per_env]
        return VecStepResult(
            observations,
            np.asarray(rewards, dtype=np.float64),
            np.asarray(terminated, dtype=bool),
            np.asarray(truncated, dtype=bool),
            per_env,
        )

    def _get_attr(self, name: str) -> list[Any]:
        return list(self.vec.get_attr(name))

    def _set_attr(self, name: str, values: list[Any]) -> None:
        self.vec.set_attr(name, values)

    def _call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        return list(self.vec.call(name, *args, **kwargs))

    def _close(self) -> None:
        self.vec.close()

    def __repr__(self) -> str:
        return f"from_gymnasium_vector({self.vec})"


def _split_infos(infos: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """gymnasium's dict of arrays with ``_key`` masks as one info dict per sub-env."""
    per_env: list[dict[str, Any]] = [{} for _ in range(n)]
    for key, value in infos.items():
        if key.startswith("_") and key[1:] in infos:
            continue  # the mask of another key
        mask = infos.get(f"_{key}", np.ones(n, dtype=bool))
        rows = _split_infos(value, n) if isinstance(value, dict) else None
        for i in np.flatnonzero(mask):
            per_env[i][key] = rows[i] if rows is not None else _item(value[i])
    return per_env


def _item(value: Any) -> Any:
    """A NumPy scalar as the Python scalar a single env's info would hold."""
    return value.item() if isinstance(value, np.generic) else value


def _sekai_row(info: dict[str, Any]) -> dict[str, Any]:
    """An autoreset row from gymnasium's SAME_STEP form into sekai's ``final_observation`` form."""
    if "final_obs" not in info:
        return info
    reset_info = {k: v for k, v in info.items() if k not in ("final_obs", "final_info")}
    final_info = info.get("final_info", {})
    return {
        **final_info,
        "final_observation": info["final_obs"],
        "final_info": final_info,
        "reset_info": reset_info,
    }
