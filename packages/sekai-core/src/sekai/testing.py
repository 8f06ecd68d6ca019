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

Installed distributions add their own kits here through their plugins
(``sekai_register_names`` with ``namespace="sekai.testing"``): sekai-vector's vector kit
(``check_vec_env``, ``check_vectorization_mode``, ``check_native_vec_env``, ...) is reachable
as ``sekai.testing.<name>`` and lives in ``sekai.vector.testing``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from typing import Any

from sekai.env_checker import EnvCheckError, check_env
from sekai.making import make
from sekai.registration import _missing_name_message, registry

__all__ = ["check_registered_env", "check_registered_envs", "env_ids"]


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


def __getattr__(name: str) -> Any:
    """A helper of an installed plugin's test kit (``sekai.testing.check_vec_env``)."""
    if name.startswith("_"):  # probes for dunders and private names load no plugin
        raise AttributeError(f"module 'sekai.testing' has no attribute {name!r}")
    entry = registry.names("sekai.testing").get(name)
    if entry is None:
        raise AttributeError(_missing_name_message("sekai.testing", name))
    value = entry.load()
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *registry.names("sekai.testing")})


def _normalized(distribution: str) -> str:
    """A distribution name in its canonical form (PEP 503)."""
    return re.sub(r"[-_.]+", "-", distribution).lower()
