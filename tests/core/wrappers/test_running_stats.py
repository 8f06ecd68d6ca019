"""RunningMeanStd / EWMMeanStd: batch updates, pure normalize, exact state round trip."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.wrappers import EWMMeanStd, RunningMeanStd


def test_running_stats_equal_the_statistics_of_all_samples_whatever_the_batching():
    data = np.random.default_rng(0).normal(3.0, 2.0, size=(101, 2, 3))
    stats = RunningMeanStd((2, 3))
    for batch in np.split(data, [1, 2, 40, 40, 77]):
        stats.update(batch)
    np.testing.assert_allclose(stats.mean, data.mean(axis=0))
    np.testing.assert_allclose(stats.var, data.var(axis=0))
    assert stats.count == 101


def test_normalize_is_pure_and_float32():
    stats = RunningMeanStd((2,), epsilon=0.0)
    stats.update([[1.0, 10.0], [3.0, 30.0]])
    before = stats.state_dict()
    out = stats.normalize([[2.0, 30.0]])
    np.testing.assert_allclose(out, [[0.0, 1.0]])
    assert out.dtype == np.float32
    after = stats.state_dict()
    np.testing.assert_array_equal(before["mean"], after["mean"])
    assert before["count"] == after["count"]


def test_update_rejects_wrong_shapes():
    with pytest.raises(ValueError, match=r"batch of shape \(n, \*\(2,\)\)"):
        RunningMeanStd((2,)).update(np.zeros(2))


def test_ewm_forgets_old_samples_with_the_half_life():
    stats = EWMMeanStd((), halflife=10.0)
    stats.update(np.zeros(1000))
    for _ in range(10):
        stats.update([1.0])
    assert stats.mean == pytest.approx(0.5)  # ten samples: the old mean weighs half


def test_ewm_starts_as_a_plain_mean():
    stats = EWMMeanStd((), halflife=1000.0)
    stats.update([1.0])
    stats.update([3.0])
    assert stats.mean == pytest.approx(2.0) and stats.var == pytest.approx(1.0)


def test_ewm_rejects_non_positive_half_life():
    with pytest.raises(ValueError, match="halflife must be positive"):
        EWMMeanStd((), halflife=0.0)


@pytest.mark.parametrize("cls", [RunningMeanStd, EWMMeanStd])
def test_state_dict_round_trips_exactly_and_is_a_copy(cls):
    stats = cls((3,))
    stats.update(np.random.default_rng(1).normal(size=(7, 3)))
    state = stats.state_dict()
    restored = cls((3,))
    restored.load_state_dict(state)
    np.testing.assert_array_equal(restored.mean, stats.mean)
    np.testing.assert_array_equal(restored.var, stats.var)
    assert restored.count == stats.count
    state["mean"][:] = 99.0
    assert not np.any(stats.mean == 99.0)


def test_load_state_dict_checks_kind_and_shape():
    state = RunningMeanStd((3,)).state_dict()
    with pytest.raises(ValueError, match="'running' statistics, not 'ewm'"):
        EWMMeanStd((3,)).load_state_dict(state)
    with pytest.raises(ValueError, match=r"expected \(2,\)"):
        RunningMeanStd((2,)).load_state_dict(state)
