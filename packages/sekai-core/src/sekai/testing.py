"""Conformance tests for env packages: run ``sekai.check_env`` on every env you register.

In a package that registers its envs through a ``sekai.plugins`` entry point, one test covers them
all, one pytest case per id::

    import pytest
    import sekai.testing

    @pytest.mark.parametrize("env_id", sekai.testing.env_ids("my-env-package"))
    def test_env_keeps_the_sekai_contract(env_id):
        sekai.testing.check_registered_env(env_id)

or, as a single test that reports every failing id at once,
``sekai.testing.check_registered_envs("my-env-package")``. Only single-agent envs can be checked:
an id whose env is a ``sekai.MultiAgentEnv`` fails with TypeError.

Vector envs (these need sekai-vector) have their own kit: ``check_vec_env`` checks one
VecEnv; a backend package checks its vectorization mode in every autoreset mode, and an env
package its native vector envs against their single envs::

    @pytest.mark.parametrize("mode", sekai.testing.vectorization_modes())
    def test_backend_keeps_the_vector_contract(mode):
        sekai.testing.check_vectorization_mode(mode)

    @pytest.mark.parametrize("env_id", sekai.testing.native_env_ids("my-env-package"))
    def test_native_env_matches_its_single_env(env_id):
        sekai.testing.check_native_vec_env(env_id)
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from typing import Any

from sekai.env_checker import EnvCheckError, check_env
from sekai.registration import make, registry

__all__ = [
    "check_native_vec_env",
    "check_registered_env",
    "check_registered_envs",
    "check_vec_env",
    "check_vectorization_mode",
    "env_ids",
    "native_env_ids",
    "vectorization_modes",
]

_AUTORESET_MODES: tuple[Any, ...] = (True, "next_step", False)
_NUM_ENVS = 3


def env_ids(distribution: str | None = None) -> list[str]:
    """The registered env ids, sorted; with ``distribution``, only those its plugin registers.

    ``distribution`` is a distribution name as pip knows it (``"sekai-core"``, ``"my-package"``;
    case, ``_`` and ``.`` do not matter). ValueError if it registers no envs, so that a misspelt
    name does not turn a parametrized test into zero tests.
    """
    if distribution is None:
        return sorted(registry)
    wanted = _normalized(distribution)
    ids = sorted(
        env_id
        for env_id, env_spec in registry.items()
        if env_spec.distribution is not None and _normalized(env_spec.distribution) == wanted
    )
    if not ids:
        registering = sorted({s.distribution for s in registry.values() if s.distribution})
        raise ValueError(
            f"no envs are registered by a distribution named {distribution!r}; "
            f"distributions that register envs: {registering}"
        )
    return ids


def check_registered_env(env_id: str, *, warn: bool = True, **make_kwargs: Any) -> None:
    """Build ``env_id`` with ``sekai.make`` (passing ``make_kwargs``) and ``check_env`` it.

    Raises ``EnvCheckError`` naming the problem; the env is closed
    afterwards (by check_env when it passes).
    """
    env = make(env_id, **make_kwargs)
    try:
        check_env(env, warn=warn)
    except BaseException:
        with contextlib.suppress(Exception):  # a close() that raises must not hide the problem
            env.close()
        raise


def check_registered_envs(
    distribution: str | None = None, ids: Iterable[str] | None = None, *, warn: bool = True
) -> list[str]:
    """Check every env of ``ids``, or of ``env_ids`` (``distribution``); return the ids.

    Every id is checked even when an earlier one fails; then a single
    ``EnvCheckError`` lists each failing id with its error.
    """
    if ids is not None and distribution is not None:
        raise ValueError("pass either distribution or ids, not both")
    if isinstance(ids, str):  # list("CartPole-v1") would check the ids "C", "a", "r", ...
        raise TypeError(f"ids must be a list of env ids, not the str {ids!r}; pass ids=[{ids!r}]")
    checked = env_ids(distribution) if ids is None else list(ids)
    failures = {}
    for env_id in checked:
        try:
            check_registered_env(env_id, warn=warn)
        except Exception as error:
            failures[env_id] = f"{type(error).__name__}: {error}"
    if failures:
        listing = "\n".join(f"  {env_id}: {message}" for env_id, message in failures.items())
        raise EnvCheckError(f"{len(failures)} of {len(checked)} envs fail check_env:\n{listing}")
    return checked


def check_vec_env(vec: Any) -> None:
    """Check that ``vec`` keeps the VecEnv contract, then close it; see
    ``sekai.vector.vec_checker.check_vec_env``. Needs sekai-vector."""
    from sekai.vector.vec_checker import check_vec_env as check

    check(vec)


def vectorization_modes() -> list[str]:
    """The installed vectorization modes (``sekai list --modes``), sorted: for parametrize."""
    return sorted(registry.vectorization_modes)


def check_vectorization_mode(mode: str, env_id: str = "CartPole-v1") -> None:
    """``check_vec_env`` on ``make_vec(env_id, 3, mode)`` in every autoreset mode."""
    from sekai.vector import make_vec

    for autoreset in _AUTORESET_MODES:
        check_vec_env(make_vec(env_id, _NUM_ENVS, mode, vector_kwargs={"autoreset": autoreset}))


def native_env_ids(distribution: str | None = None) -> list[str]:
    """The ids among ``env_ids`` (``distribution``) whose native vector version is a
    ``sekai.vector.VecEnv``, which imports those modules. Multi-agent native envs are left
    out: the vector kit, like ``check_env``, is single-agent."""
    from sekai.registration import load_entry_point
    from sekai.vector import VecEnv

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
    from sekai.vector import make_vec

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


def _normalized(distribution: str) -> str:
    """A distribution name in its canonical form (PEP 503)."""
    return re.sub(r"[-_.]+", "-", distribution).lower()
