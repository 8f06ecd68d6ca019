"""The restart limit that ProcVecEnv and RayVecEnv share: count restarts in a sliding window."""

from __future__ import annotations

import pytest

from sekai.vector import _restart
from sekai.vector._restart import RestartPolicy
from sekai.vector.errors import VecEnvWorkerError


@pytest.fixture
def clock(monkeypatch):
    """The policy's clock, moved by hand: ``clock[0]`` is now, in seconds."""
    now = [1000.0]
    monkeypatch.setattr(_restart.time, "monotonic", lambda: now[0])
    return now


def test_restarts_older_than_the_window_no_longer_count(clock):
    policy = RestartPolicy.from_option((2, 60.0))
    assert policy.allow() and policy.allow()
    assert not policy.allow()  # a refusal is not counted as a restart
    clock[0] += 59.0
    assert not policy.allow()
    clock[0] += 1.0  # the first two restarts are now 60 s old
    assert policy.allow() and policy.allow()
    assert not policy.allow()


def test_true_allows_three_restarts_in_sixty_seconds(clock):
    policy = RestartPolicy.from_option(True)
    assert (policy.count, policy.seconds) == (3, 60.0)
    assert [policy.allow() for _ in range(4)] == [True, True, True, False]


def test_false_means_no_policy():
    assert RestartPolicy.from_option(False) is None


def test_giving_up_says_why_in_the_dead_worker_error():
    died = VecEnvWorkerError("the worker running sub-env 1 died", rank=1, exc_type="EOFError")
    error = RestartPolicy(2, 60.0).give_up(died)
    assert error is died and error.rank == 1
    assert str(error) == (
        "the worker running sub-env 1 died; workers were restarted 2 times within 60.0 s "
        "already, so restart=(2, 60.0) gives up"
    )


def test_restart_seeds_derive_from_the_last_seeds_the_restart_count_and_the_rank():
    import numpy as np

    policy = RestartPolicy(5, 60.0)
    assert policy.seeds(range(2, 4)) == [None, None]  # never reset: unseeded, as before
    policy.note_reset([10, 11, 12, 13])
    policy.note_reset([None, None, 22, None])  # None: a sub-env keeps its last seed
    policy.allow()
    first = policy.seeds(range(2, 4))
    want = [
        int(np.random.SeedSequence((seed, 1, rank)).generate_state(1, dtype=np.uint64)[0])
        for seed, rank in [(22, 2), (13, 3)]
    ]
    assert first == want
    assert policy.seeds(range(2, 4)) == first  # the same restart, the same seeds
    policy.allow()
    assert set(policy.seeds(range(2, 4))).isdisjoint(first)  # a later restart, new seeds
