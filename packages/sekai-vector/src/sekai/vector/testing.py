"""The vector test kit, for packages that ship a backend or native vector envs.

Reachable as ``sekai.testing.<name>`` too (sekai-vector's plugin adds these names there).
``check_vec_env`` checks one VecEnv; a backend package checks its vectorization mode in every
autoreset mode, and an env package its native vector envs against their single envs::

    import pytest
    import sekai.testing

    @pytest.mark.parametrize("mode", sekai.testing.vectorization_modes())
    def test_backend_keeps_the_vector_contract(mode):
        sekai.testing.check_vectorization_mode(mode)

    @pytest.mark.parametrize("env_id", sekai.testing.native_env_ids("my-env-package"))
    def test_native_env_matches_its_single_env(env_id):
        sekai.testing.check_native_vec_env(env_id)
"""

from __future__ import annotations

from typing import Any

from sekai.env_checker import EnvCheckError
from sekai.registration import load_entry_point, registry
from sekai.testing import env_ids
from sekai.vector.base import VecEnv
from sekai.vector.making import make_vec
from sekai.vector.vec_checker import check_vec_env as check

__all__ = [
    "check_native_vec_env",
    "check_vec_env",
    "check_vectorization_mode",
    "native_env_ids",
    "vectorization_modes",
]

_AUTORESET_MODES: tuple[Any, ...] = (True, "next_step", False)
_NUM_ENVS = 3


def check_vec_env(vec: Any) -> None:
    """Check that ``vec`` keeps the VecEnv contract, then close it; see
    ``sekai.vector.vec_checker.check_vec_env``."""
    check(vec)


def vectorization_modes() -> list[str]:
    """The installed vectorization modes (``sekai list --modes``), sorted: for parametrize."""
    return sorted(registry.vectorization_modes)


def check_vectorization_mode(mode: str, env_id: str = "CartPole-v1") -> None:
    """``check_vec_env`` on ``make_vec(env_id, 3, mode)`` in every autoreset mode."""
    for autoreset in _AUTORESET_MODES:
        check_vec_env(make_vec(env_id, _NUM_ENVS, mode, vector_kwargs={"autoreset": autoreset}))


def native_env_ids(distribution: str | None = None) -> list[str]:
    """The ids among ``env_ids`` (``distribution``) whose native vector version is a
    ``sekai.vector.VecEnv``, which imports those modules. Multi-agent native envs are left
    out: the vector kit, like ``check_env``, is single-agent."""
    ids = []
    for env_id in env_ids(distribution):
        entry_point = registry[env_id].vector_entry_point
        if entry_point is None:
            continue
        vec_class = load_entry_point(entry_point)
        if isinstance(vec_class, type) and issubclass(vec_class, VecEnv):
            ids.append(env_id)
    return ids


def check_native_vec_env(env_id: str) -> None:
    """Check ``env_id``'s native vector env in every autoreset mode, and against its single env.

    Each native VecEnv passes ``check_vec_env``; and it must look exactly like a SyncVecEnv
    of the single env: the same spaces, and reset and step results of the same types, shapes
    and dtypes. EnvCheckError names the first difference.
    """
    for autoreset in _AUTORESET_MODES:
        kwargs = {"autoreset": autoreset}
        check_vec_env(make_vec(env_id, _NUM_ENVS, "native", vector_kwargs=kwargs))
    with (
        make_vec(env_id, _NUM_ENVS, "native") as native,
        make_vec(env_id, _NUM_ENVS, "sync") as single,
    ):
        for name in ("observation_space", "action_space"):
            if getattr(native, name) != getattr(single, name):
                raise EnvCheckError(
                    f"{env_id}: the native env's {name} {getattr(native, name)} differs from "
                    f"the single env's {getattr(single, name)}"
                )
        shapes = [_layout(vec.reset(seed=0).observations) for vec in (native, single)]
        actions = single.batch_action_space.sample()
        steps = [vec.step(actions) for vec in (native, single)]
        shapes += [_layout(step[:4]) for step in steps]
        if shapes[0] != shapes[1] or shapes[2] != shapes[3]:
            raise EnvCheckError(
                f"{env_id}: the native env's results differ in type, shape or dtype from the "
                f"single env's: {shapes[0]} vs {shapes[1]}, {shapes[2]} vs {shapes[3]}"
            )


def _layout(value: Any) -> Any:
    """The types, shapes and dtypes of a result, without its values."""
    if isinstance(value, dict):
        return {key: _layout(part) for key, part in value.items()}
    if isinstance(value, tuple):
        return tuple(_layout(part) for part in value)
    return (type(value).__name__, getattr(value, "shape", None), str(getattr(value, "dtype", "")))
