"""The run that the tests of every self-healing backend share (ProcVecEnv's and RayVecEnv's
``restart=``): 1,000 steps of three workers of two sub-envs, the middle worker killed at step 400.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

STEPS = 1000
CRASH_AT = 400
NUM_ENVS = 6  # three workers of two sub-envs; the middle one (sub-envs 2, 3) is killed
NUM_WORKERS = 3
KILLED = [2, 3]
SURVIVORS = [0, 1, 4, 5]


def run(vec, kill_middle_worker: Callable[[], None] | None = None) -> list[tuple]:
    """Every step's (observations, rewards, terminated, truncated, infos); the middle worker is
    killed between steps CRASH_AT-1 and CRASH_AT by ``kill_middle_worker``, if given."""
    actions = np.random.default_rng(1).integers(0, 2, size=(STEPS, NUM_ENVS))
    results: list[tuple] = []
    vec.reset(seed=7)
    for step, action in enumerate(actions):
        if vec.autoreset is False and step > 0:  # the caller resets; when a survivor finishes,
            last = results[-1]  # so that runs with and without the crash reset at the same steps
            if (last[2] | last[3])[SURVIVORS].any():
                vec.reset()
        if kill_middle_worker is not None and step == CRASH_AT:
            kill_middle_worker()
        result = vec.step(action)
        results.append(
            (
                result.observations,
                result.rewards,
                result.terminated,
                result.truncated,
                list(result.infos),
            )
        )
    return results


def check_healed(reference: list[tuple], healed: list[tuple]) -> None:
    """``healed`` (the run with the crash) is ``reference`` (without it) for the survivors at
    every step, and for the killed sub-envs until the crash; at the crash the killed sub-envs
    start again: reward 0, truncated, ``worker_restarted``, no final observation."""
    for step, (want, got) in enumerate(zip(reference, healed, strict=True)):
        for field in (0, 1, 2, 3):
            np.testing.assert_array_equal(got[field][SURVIVORS], want[field][SURVIVORS])
        assert all(_same(got[4][i], want[4][i]) for i in SURVIVORS)
        if step < CRASH_AT:
            np.testing.assert_array_equal(got[0], want[0])
        if step == CRASH_AT:
            assert got[3][KILLED].all() and not got[2][KILLED].any()
            assert (got[1][KILLED] == 0).all()
            for i in KILLED:
                assert got[4][i]["worker_restarted"] is True
                assert "final_observation" not in got[4][i]
                assert got[0][i][0] == 0  # the first observation of a new episode
        else:
            assert not any("worker_restarted" in info for info in got[4])


def _same(a, b) -> bool:
    """Equal infos, whose values may be arrays (final_observation) or dicts (final_info)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return bool(np.array_equal(a, b))
