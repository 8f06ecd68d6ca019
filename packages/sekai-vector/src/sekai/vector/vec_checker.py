"""check_vec_env: does a VecEnv keep the vector contract? For backend and native-env authors.

It plays for vector envs the role ``sekai.check_env`` plays for single envs: it drives a
VecEnv through the whole API (spaces, reset and step results, seeding, options, its autoreset
mode, get/set_attr and call, close) and raises ``EnvCheckError`` naming
the first broken rule. ``sekai.testing`` wraps it for pytest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sekai.env_checker import EnvCheckError
from sekai.spaces import Space, batch_space
from sekai.vector.base import VecEnv
from sekai.vector.errors import VecEnvClosed
from sekai.vector.results import VecResetResult, VecStepResult

__all__ = ["check_vec_env"]

_ROLLOUT_STEPS = 300  # long enough for most envs to finish an episode under random actions


def check_vec_env(vec: VecEnv) -> None:
    """Check ``vec`` against the VecEnv contract, then close it (also when a check fails).

    Raises EnvCheckError naming the first rule it breaks. The checks: single and batch spaces;
    the types, shapes and dtypes of reset and step results; an int seed and a list of seeds
    reproduce the same trajectory; options (one dict, or one per sub-env) are accepted;
    episodes end as ``vec.autoreset`` says (same-step with ``final_observation``,
    ``"next_step"``, or no reset at all); get_attr, set_attr and call give one value per
    sub-env; close() twice is fine and every command after it raises VecEnvClosed.
    """
    if not isinstance(vec, VecEnv):
        raise TypeError(f"check_vec_env takes a sekai VecEnv, got {type(vec).__name__}")
    try:
        _check_spaces(vec)
        _check_reset(vec, vec.reset(seed=0), "reset(seed=0)")
        _check_seeding(vec)
        _check_options(vec)
        _check_rollout(vec)
        _check_attributes(vec)
    finally:
        vec.close()
    _check_closed(vec)


def _check_spaces(vec: VecEnv) -> None:
    for name in ("observation_space", "action_space"):
        single = getattr(vec, name)
        if not isinstance(single, Space):
            _fail(f"{name} must be a sekai Space, got {type(single).__name__}")
        batch = getattr(vec, f"batch_{name}")
        if batch != batch_space(single, vec.num_envs):
            _fail(f"batch_{name} must be batch_space({name}, num_envs), got {batch}")
    if len(vec) != vec.num_envs:
        _fail(f"len(vec) must be num_envs ({vec.num_envs}), got {len(vec)}")


def _check_reset(vec: VecEnv, result: Any, call: str) -> None:
    if not isinstance(result, VecResetResult):
        _fail(f"{call} must return a VecResetResult, got {type(result).__name__}")
    _check_observations(vec, result.observations, call)
    _check_infos(vec, result.infos, call)


def _check_step(vec: VecEnv, result: Any, call: str) -> VecStepResult:
    if not isinstance(result, VecStepResult):
        _fail(f"{call} must return a VecStepResult, got {type(result).__name__}")
    _check_observations(vec, result.observations, call)
    for name, dtype in (("rewards", np.float64), ("terminated", bool), ("truncated", bool)):
        value = getattr(result, name)
        if not isinstance(value, np.ndarray) or value.dtype != dtype:
            _fail(f"{call}: {name} must be a {np.dtype(dtype)} array, got {value!r:.80}")
        if value.shape != (vec.num_envs,):
            _fail(f"{call}: {name} must have shape ({vec.num_envs},), got {value.shape}")
    _check_infos(vec, result.infos, call)
    return result


def _check_observations(vec: VecEnv, observations: Any, call: str) -> None:
    if observations not in vec.batch_observation_space:
        _fail(
            f"{call}: the observations are not in batch_observation_space "
            f"{vec.batch_observation_space}: {observations!r:.200}"
        )


def _check_infos(vec: VecEnv, infos: Any, call: str) -> None:
    if not isinstance(infos, Sequence) or len(infos) != vec.num_envs:
        _fail(f"{call}: infos must be a sequence of {vec.num_envs} dicts, got {infos!r:.80}")
    for info in infos:
        if not isinstance(info, dict):
            _fail(f"{call}: every entry of infos must be a dict, got {type(info).__name__}")


def _rollout(vec: VecEnv, seed: Any, actions: list[Any]) -> list[Any]:
    """The observations of a reset with ``seed`` followed by ``actions``."""
    observations = [vec.reset(seed=seed).observations]
    observations += [vec.step(action).observations for action in actions]
    return observations


def _check_seeding(vec: VecEnv) -> None:
    vec.action_space.seed(0)
    actions = [_batch_action(vec) for _ in range(5)]
    first, again = _rollout(vec, 1, actions), _rollout(vec, 1, actions)
    if not _same(first, again):
        _fail("reset(seed=1) followed by the same actions must give the same observations")
    seeds = list(range(100, 100 + vec.num_envs))
    if not _same(_rollout(vec, seeds, actions), _rollout(vec, seeds, actions)):
        _fail("reset(seed=[a list of seeds]) must be reproducible too")
    vec.reset(seed=None)  # continues the streams: allowed, nothing to compare


def _check_options(vec: VecEnv) -> None:
    _check_reset(vec, vec.reset(seed=0, options={}), "reset(options={})")
    per_env: list[dict[str, Any] | None] = [{} for _ in range(vec.num_envs)]
    per_env[0] = None
    _check_reset(vec, vec.reset(seed=0, options=per_env), "reset(options=[one per sub-env])")


def _check_rollout(vec: VecEnv) -> None:
    """Step with random actions; check every result and how finished episodes go on."""
    vec.reset(seed=0)
    vec.action_space.seed(0)
    finished = np.zeros(vec.num_envs, dtype=bool)
    previous_dones = np.zeros(vec.num_envs, dtype=bool)
    for _ in range(_ROLLOUT_STEPS):
        result = _check_step(vec, vec.step(_batch_action(vec)), "step(actions)")
        if vec.autoreset == "next_step":
            restarted = np.flatnonzero(previous_dones)
            if (result.rewards[restarted] != 0).any() or result.dones[restarted].any():
                _fail(
                    'autoreset="next_step": the step after an episode ends must reset the '
                    "sub-env (reward 0, terminated and truncated False)"
                )
        elif vec.autoreset is True:
            for i in np.flatnonzero(result.dones).tolist():
                if "final_observation" not in result.infos[i]:
                    _fail(
                        "autoreset=True: infos[i] of a sub-env whose episode ended must hold "
                        "its last observation as 'final_observation'"
                    )
                if result.infos[i]["final_observation"] not in vec.observation_space:
                    _fail("autoreset=True: infos[i]['final_observation'] is not in the space")
        finished |= result.dones
        previous_dones = result.dones
        if finished.all() and vec.autoreset is not False:
            break
        if vec.autoreset is False and finished.any():
            break  # a finished sub-env must be reset by the caller first


def _check_attributes(vec: VecEnv) -> None:
    values = _per_env(vec, vec.get_attr("spec"), "get_attr('spec')")
    _per_env(vec, vec.call("spec"), "call('spec') (not callable: its value)")
    vec.set_attr("spec", values[0])
    if vec.get_attr("spec") != [values[0]] * vec.num_envs:
        _fail("after set_attr('spec', value), get_attr('spec') must give value for every sub-env")
    missing = "get_attr of a missing attribute must raise AttributeError (on every backend)"
    try:
        vec.get_attr("_sekai_check_no_such_attribute")
    except AttributeError:
        return
    except Exception as error:
        _fail(f"{missing}, got {type(error).__name__}")
    _fail(missing)


def _per_env(vec: VecEnv, values: Any, call: str) -> list[Any]:
    if not isinstance(values, list) or len(values) != vec.num_envs:
        _fail(f"{call} must return a list of {vec.num_envs} values, got {values!r:.80}")
    return list(values)


def _check_closed(vec: VecEnv) -> None:
    try:
        vec.close()
    except Exception as error:
        _fail(f"a second close() must do nothing, got {type(error).__name__}: {error}")
    commands: dict[str, Callable[[], Any]] = {
        "reset()": vec.reset,
        "step(actions)": lambda: vec.step(vec.batch_action_space.sample()),
        "get_attr('spec')": lambda: vec.get_attr("spec"),
    }
    for call, command in commands.items():
        try:
            command()
        except VecEnvClosed:
            continue
        except Exception as error:
            _fail(f"{call} after close() must raise VecEnvClosed, got {type(error).__name__}")
        _fail(f"{call} after close() must raise VecEnvClosed, it returned")


def _batch_action(vec: VecEnv) -> Any:
    return [vec.action_space.sample() for _ in range(vec.num_envs)]


def _same(first: list[Any], second: list[Any]) -> bool:
    return all(_equal(a, b) for a, b in zip(first, second, strict=True))


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[key], b[key]) for key in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(np.array_equal(a, b))


def _fail(message: str) -> None:
    raise EnvCheckError(message)
