"""Stable-Baselines3: ``to_sb3`` makes any sekai vector env an SB3 ``VecEnv``.

SB3 resets a finished sub-env inside the step that ended it, which is sekai's ``autoreset=True``:
the bridge only renames ``final_observation`` to ``terminal_observation`` and adds
``TimeLimit.truncated``. Infos stay lazy, so a native env pays for the info dicts SB3 reads, not
for one dict per sub-env per step.

An action space whose members a Gaussian policy cannot output directly (Portfolio-v0's
``PortfolioWeights``, which must sum to one) says so by having a ``box`` (the space the policy
acts in) and a ``from_box(actions)`` method (its points to the env's actions): the bridge then
shows SB3 the ``box`` and maps every batch of actions through ``from_box``, so PPO trains on
such an env with no wrapper of the user's own. A ``Discrete`` space that starts elsewhere than 0
is shown as ``Discrete(n)`` and its actions shifted back, as SB3's policies output ``0..n-1``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv as SB3VecEnv

from sekai.compat.spaces import to_gymnasium_space
from sekai.spaces import Discrete
from sekai.vector import VecEnv
from sekai.vector._lazy_infos import _LazyInfos
from sekai.vector.backend import has_layer
from sekai.vector.native import info_row

__all__ = ["to_sb3"]

Indices = int | Iterable[int] | None


def to_sb3(vec: VecEnv, *, box_actions: bool = True) -> SB3VecEnv:
    """An SB3 ``VecEnv`` driving the sekai ``vec`` (any backend, native included).

    ``vec`` must reset finished sub-envs in the same step (``autoreset=True``, the default), as
    SB3's own vector envs do. Seeds (``seed()``) and options (``set_options()``) apply to the next
    ``reset()``, as in SB3. With ``box_actions`` (the default) an action space that has a
    ``box`` and ``from_box`` (see the module docstring) is shown to SB3 as its ``box``, and
    actions are mapped through ``from_box``; ``box_actions=False`` shows the space as it is.
    """
    if not isinstance(vec, VecEnv):
        raise TypeError(f"to_sb3 needs a sekai VecEnv, got {type(vec).__name__}")
    if vec.autoreset is not True:
        raise ValueError(
            "to_sb3 needs a vector env made with autoreset=True (SB3 resets a finished sub-env "
            f"in the same step), got autoreset={vec.autoreset!r}"
        )
    return _SB3VecEnv(vec, box_actions)


class _SB3VecEnv(SB3VecEnv):
    """A sekai vector env seen through SB3's VecEnv API."""

    def __init__(self, vec: VecEnv, box_actions: bool) -> None:
        self.vec = vec
        self._actions: Any = None
        action_space: Any = vec.action_space
        box = getattr(action_space, "box", None) if box_actions else None
        self._from_box = getattr(action_space, "from_box", None) if box is not None else None
        if self._from_box is not None:
            action_space = box
        # SB3's categorical policies output 0..n-1 whatever the space's start (Trading-v0 with
        # shorts acts in -1..1): show SB3 Discrete(n), and shift its actions back
        self._start = action_space.start if isinstance(action_space, Discrete) else 0
        if self._start:
            action_space = Discrete(action_space.n)
        super().__init__(
            vec.num_envs,
            to_gymnasium_space(vec.observation_space),
            to_gymnasium_space(action_space),
        )

    def reset(self) -> Any:
        seeds = None if all(seed is None for seed in self._seeds) else list(self._seeds)
        options = [option or None for option in self._options]
        observations, infos = self.vec.reset(seed=seeds, options=options)
        self.reset_infos = list(infos)
        self._reset_seeds()
        self._reset_options()
        return observations

    def step_async(self, actions: np.ndarray) -> None:
        if self._from_box is not None:
            actions = self._from_box(actions)
        self._actions = np.asarray(actions) + self._start if self._start else actions

    def step_wait(self) -> tuple[Any, np.ndarray, np.ndarray, Sequence[dict[str, Any]]]:
        observations, rewards, terminated, truncated, infos = self.vec.step(self._actions)
        dones = terminated | truncated
        self._record_reset_infos(infos, np.flatnonzero(dones))
        sb3_infos = _LazyInfos(
            self.num_envs, lambda i: _sb3_info(infos[i], terminated[i], truncated[i])
        )
        return observations, rewards.astype(np.float32), dones, sb3_infos

    def _record_reset_infos(self, infos: Sequence[dict[str, Any]], finished: np.ndarray) -> None:
        """Keep the reset infos of the sub-envs that just reset, as SB3's vector envs do."""
        columns = getattr(infos, "columns", lambda: None)()
        if columns is not None and columns.irregular_arrays is not None:  # a native env
            reset_infos = columns.irregular_arrays["reset_info"]
            for position, i in enumerate(finished.tolist()):
                self.reset_infos[i] = (
                    info_row(reset_infos, position, len(finished)) if reset_infos else {}
                )
        else:
            for i in finished:
                self.reset_infos[i] = infos[i]["reset_info"]

    def close(self) -> None:
        self.vec.close()

    def get_attr(self, attr_name: str, indices: Indices = None) -> list[Any]:
        if attr_name == "render_mode" and not hasattr(self.vec, "envs"):
            values = [getattr(self.vec, "render_mode", None)] * self.num_envs  # SB3 asks; a
            # native env renders nothing unless it says so
        else:
            values = self.vec.get_attr(attr_name)
        return [values[i] for i in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Indices = None) -> None:
        targets = list(self._get_indices(indices))
        if targets == list(range(self.num_envs)):
            self.vec.set_attr(attr_name, [value] * self.num_envs)
            return
        values = self.vec.get_attr(attr_name)
        for i in targets:
            values[i] = value
        self.vec.set_attr(attr_name, values)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Indices = None, **method_kwargs: Any
    ) -> list[Any]:
        targets = list(self._get_indices(indices))
        if targets == list(range(self.num_envs)):
            return self.vec.call(method_name, *method_args, **method_kwargs)
        envs = getattr(self.vec, "envs", None)
        if envs is None:
            raise ValueError(
                f"env_method on some sub-envs only needs in-process sub-envs (SyncVecEnv, "
                f"AsyncVecEnv); {type(self.vec).__name__} calls every sub-env: pass indices=None"
            )
        return [envs[i].get_attr(method_name)(*method_args, **method_kwargs) for i in targets]

    def env_is_wrapped(self, wrapper_class: type, indices: Indices = None) -> list[bool]:
        """Whether each sub-env has a ``wrapper_class`` layer: only sekai wrappers can be there."""
        envs = getattr(self.vec, "envs", None)
        return [
            envs is not None and has_layer(envs[i], wrapper_class)
            for i in self._get_indices(indices)
        ]

    def __repr__(self) -> str:
        return f"to_sb3({self.vec!r})"


def _sb3_info(info: dict[str, Any], terminated: bool, truncated: bool) -> dict[str, Any]:
    """One sub-env's info as SB3's vector envs give it."""
    if "final_observation" not in info:
        return {**info, "TimeLimit.truncated": False}
    return {
        **info["final_info"],
        "terminal_observation": info["final_observation"],
        "TimeLimit.truncated": bool(truncated and not terminated),
    }
