"""AsyncVecEnv: sub-envs really run concurrently, also inside a running event loop."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest
from vector_envs import GateEnv, WalkEnv, gate

import sekai
from sekai.vector import AsyncVecEnv


def test_async_step_awaits_every_sub_env_at_once():
    async def main() -> np.ndarray:
        shared = gate(3)
        with AsyncVecEnv([lambda: GateEnv(shared) for _ in range(3)]) as vec:
            await vec.async_reset(seed=0)
            result = await vec.async_step(np.array([1, 0, 1]))
        return result.rewards

    assert asyncio.run(main()).tolist() == [1.0, 0.0, 1.0]


def test_blocking_step_is_concurrent_too():
    # the gate's Event must belong to the loop that step() runs, so build it lazily there
    class LazyGateEnv(GateEnv):
        async def async_step(self, action):
            if "open" not in self.gate:
                self.gate["open"] = asyncio.Event()
            return await super().async_step(action)

    shared = {"arrived": 0, "expected": 2}
    with AsyncVecEnv([lambda: LazyGateEnv(shared) for _ in range(2)]) as vec:
        vec.reset(seed=0)
        assert vec.step([1, 1]).rewards.tolist() == [1.0, 1.0]


def test_vector_wrappers_keep_async_steps_concurrent():
    async def main() -> np.ndarray:
        shared = gate(2)
        vec = AsyncVecEnv([lambda: GateEnv(shared) for _ in range(2)])
        wrapped = sekai.VecTransformReward(sekai.VecRecordEpisodeStatistics(vec), lambda r: 2 * r)
        with wrapped:
            await wrapped.async_reset(seed=0)
            result = await wrapped.async_step(np.array([1, 1]))
        return result.rewards

    assert asyncio.run(main()).tolist() == [2.0, 2.0]


def test_blocking_calls_inside_a_running_loop_point_to_the_async_methods():
    async def main() -> None:
        with AsyncVecEnv([WalkEnv, WalkEnv]) as vec:
            with pytest.raises(RuntimeError, match=r"await vec\.async_reset"):
                vec.reset(seed=0)
            result = await vec.async_reset(seed=0)
            assert result.observations.shape == (2, 2)

    asyncio.run(main())


def test_an_error_in_one_sub_env_lets_the_others_finish_first():
    finished: list[int] = []

    class SlowEnv(WalkEnv):
        async def async_step(self, action):
            await asyncio.sleep(0)  # yield, so the failing sub-env raises first
            finished.append(int(action))
            return self.step(action)

    class BrokenEnv(WalkEnv):
        async def async_step(self, action):
            if action == 0:
                raise ValueError("broken sub-env")
            return self.step(action)

    with AsyncVecEnv([SlowEnv, BrokenEnv, SlowEnv]) as vec:
        vec.reset(seed=0)
        with pytest.raises(ValueError, match="broken sub-env"):
            vec.step([1, 0, 2])
        assert sorted(finished) == [1, 2]
        assert vec.step([0, 1, 0]).rewards.tolist() == [0.0, 1.0, 0.0]  # still usable


def test_close_releases_the_private_event_loop_and_its_threads():
    threads_before = threading.active_count()
    vec = AsyncVecEnv([WalkEnv, WalkEnv])
    vec.reset(seed=0)
    loop = vec._loop
    assert loop is not None and not loop.is_closed()
    vec.step([1, 1])
    vec.close()
    assert loop.is_closed()
    assert threading.active_count() == threads_before


def test_close_inside_a_running_loop_still_closes_the_private_loop():
    vec = AsyncVecEnv([WalkEnv])
    vec.reset(seed=0)
    loop = vec._loop

    async def main() -> None:
        vec.close()

    asyncio.run(main())
    assert vec.closed and loop.is_closed()


def test_a_failing_sub_env_close_still_releases_the_event_loop():
    class FailingClose(WalkEnv):
        def close(self) -> None:
            raise OSError("cannot close")

    vec = AsyncVecEnv([FailingClose, WalkEnv])
    vec.reset(seed=0)
    loop = vec._loop
    with pytest.raises(OSError, match="cannot close"):
        vec.close()
    assert vec.closed and loop.is_closed()
