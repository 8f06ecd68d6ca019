"""ProcVecEnv.async_reset/async_step leave the event loop free and keep every sync guarantee.

The loop-is-free tests are deterministic: a GatedEnv's step() waits for a byte that only a
coroutine of the test's own event loop sends, once that sub-env has reached the gate. If
async_step blocked the loop, the byte would never come; the sub-env then gives up with
TimeoutError, and asyncio.wait_for turns any other hang into a failure.
"""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import tempfile
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
from proc_envs import GATE, INTERRUPT, KILL, CompositeEnv, CounterEnv, FragileEnv, GatedEnv
from proc_leaks import leaves_nothing_behind  # noqa: F401 - autouse fixture
from test_proc_determinism import assert_same

import sekai
from sekai.vector._forkserver import short_parent
from sekai.vector.errors import VecEnvClosed, VecEnvWorkerError
from sekai.vector.proc import ProcVecEnv

_T = TypeVar("_T")
TIMEOUT = 60.0  # seconds; far longer than any of these tests takes when it passes


def run(main: Coroutine[Any, Any, _T], loop_factory: Any = None) -> _T:
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        return runner.run(asyncio.wait_for(main, TIMEOUT))


def counts(result: Any) -> list[int]:
    return [int(c) for c in result.observations[:, 0]]


class Gate:
    """A unix-socket server in the running loop that GatedEnvs connect to from their step().

    With ``hold=False`` each arrival is let through at once; with ``hold=True`` arrivals wait in
    ``arrivals`` until the test calls :meth:`open` on them.
    """

    def __init__(self, path: str, *, hold: bool = False) -> None:
        self.path = path
        self.hold = hold
        self.arrivals: asyncio.Queue[asyncio.StreamWriter] = asyncio.Queue()
        self.opened = 0

    async def __aenter__(self) -> Gate:
        self._server = await asyncio.start_unix_server(self._arrived, self.path)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._server.close()
        await self._server.wait_closed()

    async def _arrived(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.hold:
            await self.arrivals.put(writer)
        else:
            self.open(writer)

    def open(self, writer: asyncio.StreamWriter) -> None:
        writer.write(b"x")
        writer.close()
        self.opened += 1


@pytest.fixture
def gate_path() -> Iterator[str]:
    # a short directory of its own, outside TMPDIR, which may be long: a unix socket path has a
    # length limit of 107 bytes
    with tempfile.TemporaryDirectory(prefix="sekai-", dir=short_parent()) as directory:
        yield str(Path(directory) / "gate")


class LoopWithoutReaders(asyncio.SelectorEventLoop):
    """A loop that refuses reader callbacks, as Windows' ProactorEventLoop does."""

    refused = 0

    def add_reader(self, *args: Any) -> None:
        LoopWithoutReaders.refused += 1
        raise NotImplementedError


# -- (1) the event loop stays free while the workers compute -----------------------------------
@pytest.mark.parametrize("how", ["plain", "wrapped", "loop without reader callbacks"])
def test_async_step_leaves_the_loop_free_while_workers_compute(gate_path: str, how: str) -> None:
    async def main() -> tuple[Any, int]:
        async with Gate(gate_path) as gate:
            fns = [functools.partial(GatedEnv, gate_path)] * 3
            vec: Any = ProcVecEnv(fns, num_workers=2, autoreset=False)
            if how == "wrapped":
                vec = sekai.VecTransformReward(sekai.VecRecordEpisodeStatistics(vec), lambda r: -r)
            with vec:
                await vec.async_reset(seed=0)
                # sub-envs 0 and 2, in both workers, wait in step() for the loop to open the gate
                result = await vec.async_step([GATE, 0, GATE])
            return result, gate.opened

    LoopWithoutReaders.refused = 0
    loop_factory = LoopWithoutReaders if how == "loop without reader callbacks" else None
    result, opened = run(main(), loop_factory)
    assert opened == 2
    assert counts(result) == [1, 1, 1]
    assert result.rewards.tolist() == ([-1.0] * 3 if how == "wrapped" else [1.0] * 3)
    assert [info["action"] for info in result.infos] == [GATE, 0, GATE]
    if loop_factory is not None:
        assert LoopWithoutReaders.refused > 0  # the executor fallback really did the waiting


def test_async_reset_leaves_the_loop_free_too(gate_path: str) -> None:
    class GatedResetEnv(GatedEnv):
        def reset(self, *, seed=None, options=None):
            if options and options.get("gate"):
                self.wait_at_gate()
            return super().reset(seed=seed, options=options)

    async def main() -> int:
        async with Gate(gate_path) as gate:
            with ProcVecEnv([lambda: GatedResetEnv(gate_path)] * 2) as vec:
                await vec.async_reset(seed=0, options={"gate": True})
            return gate.opened

    assert run(main()) == 2


# -- (2) async and sync give identical results --------------------------------------------------
def trajectory(vec: sekai.VecEnv, steps: int, *, use_async: bool) -> list[Any]:
    actions = vec.batch_action_space
    actions.seed(3)
    batches = [actions.sample() for _ in range(steps)]

    async def run_async() -> list[Any]:
        return [await vec.async_reset(seed=7)] + [await vec.async_step(a) for a in batches]

    with vec:
        if use_async:
            results = run(run_async())
        else:
            results = [vec.reset(seed=7)] + [vec.step(a) for a in batches]
    return [tuple(result) for result in results]


@pytest.mark.parametrize(
    ("make_env", "kwargs"),
    [
        (CounterEnv, {"num_workers": 1}),
        (CounterEnv, {"num_workers": 2}),
        (CounterEnv, {"num_workers": 3, "shared_memory": False}),
        (CompositeEnv, {"num_workers": 2}),
    ],
    ids=["1 worker", "2 workers", "3 workers, pipes", "composite"],
)
def test_async_and_sync_give_identical_results_for_the_same_seed(make_env, kwargs) -> None:
    fns = [make_env] * 5
    expected = trajectory(ProcVecEnv(fns, **kwargs), 30, use_async=False)
    assert_same(trajectory(ProcVecEnv(fns, **kwargs), 30, use_async=True), expected)
    if make_env is CounterEnv:
        assert any(any(step[2]) for step in expected[1:]), "no autoreset was exercised"


# -- (3) a cancelled async_step leaves the env usable and in step -----------------------------
@pytest.mark.parametrize("next_call", ["async", "sync"])
def test_cancelling_an_in_flight_async_step_leaves_the_workers_in_step(
    gate_path: str, next_call: str
) -> None:
    async def main() -> None:
        async with Gate(gate_path, hold=True) as gate:
            with ProcVecEnv([functools.partial(GatedEnv, gate_path)] * 2, autoreset=False) as vec:
                await vec.async_reset(seed=0)
                step = asyncio.create_task(vec.async_step([GATE, 0]))
                held = await gate.arrivals.get()  # sub-env 0 is inside step(): the call awaits
                step.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await step
                gate.open(held)  # the cancelled step finishes in the worker; its reply is stale
                if next_call == "async":
                    result = await vec.async_step([0, 0])
                else:
                    result = vec.step([0, 0])
                assert counts(result) == [2, 2]
                assert [info["count"] for info in result.infos] == [2, 2]
                assert vec.get_attr("count") == [2, 2]
                assert counts(await vec.async_step([0, 0])) == [3, 3]

    run(main())


def test_the_next_call_awaits_the_stale_replies_of_a_cancelled_one_with_the_loop_free(
    gate_path: str,
) -> None:
    async def main() -> None:
        async with Gate(gate_path, hold=True) as gate:
            with ProcVecEnv(
                [functools.partial(GatedEnv, gate_path)] * 2, num_workers=1, autoreset=False
            ) as vec:
                await vec.async_reset(seed=0)
                step = asyncio.create_task(vec.async_step([0, GATE]))
                held = await gate.arrivals.get()
                step.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await step
                # the worker is still held: the next call must wait for its stale reply first
                following = asyncio.create_task(vec.async_step([0, 0]))
                # callbacks run in order: the gate opens only once the task has started and,
                # awaiting the stale reply, handed the loop back
                asyncio.get_running_loop().call_soon(gate.open, held)
                assert counts(await following) == [2, 2]

    run(main())


def test_a_call_while_another_awaits_its_replies_is_refused_and_disturbs_nothing(
    gate_path: str,
) -> None:
    async def main() -> None:
        async with Gate(gate_path, hold=True) as gate:
            with ProcVecEnv([functools.partial(GatedEnv, gate_path)] * 2, autoreset=False) as vec:
                await vec.async_reset(seed=0)
                step = asyncio.create_task(vec.async_step([GATE, 0]))
                held = await gate.arrivals.get()
                with pytest.raises(RuntimeError, match="still awaiting"):
                    await vec.async_step([0, 0])
                with pytest.raises(RuntimeError, match="still awaiting"):
                    vec.get_attr("count")
                gate.open(held)
                result = await step
                assert counts(result) == [1, 1]
                assert counts(vec.step([0, 0])) == [2, 2]

    run(main())


def test_close_while_a_step_awaits_raises_vec_env_closed_in_it(gate_path: str) -> None:
    async def main() -> None:
        async with Gate(gate_path, hold=True) as gate:
            vec = ProcVecEnv([functools.partial(GatedEnv, gate_path)] * 2, close_timeout=0.5)
            await vec.async_reset(seed=0)
            step = asyncio.create_task(vec.async_step([GATE, 0]))
            held = await gate.arrivals.get()
            vec.close()  # sub-env 0 never leaves its step(): its worker is terminated
            with pytest.raises(VecEnvClosed):
                await step
            held.close()

    run(main())


def test_a_call_abandoned_in_a_closed_loop_does_not_block_the_env(gate_path: str) -> None:
    with socket.socket(socket.AF_UNIX) as server:
        server.settimeout(TIMEOUT)
        server.bind(gate_path)
        server.listen()
        with ProcVecEnv([functools.partial(GatedEnv, gate_path)] * 2, autoreset=False) as vec:
            vec.reset(seed=0)
            loop = asyncio.new_event_loop()
            abandoned = loop.create_task(vec.async_step([GATE, 0]))
            loop.call_soon(loop.stop)  # after the task's first step: sent, awaiting sub-env 0
            loop.run_forever()
            loop.close()  # that call can never resume now
            assert not abandoned.done()
            arrival, _ = server.accept()
            with arrival:
                arrival.sendall(b"x")
            assert counts(vec.step([0, 0])) == [2, 2]  # its replies were discarded as stale
            assert counts(run(vec.async_step([0, 0]))) == [3, 3]


def test_ctrl_c_during_async_step_under_asyncio_run_leaves_the_next_command_in_step() -> None:
    make = functools.partial(CounterEnv, os.getpid())
    with ProcVecEnv([make] * 2, autoreset=False) as vec:
        vec.reset(seed=0)
        with pytest.raises(KeyboardInterrupt):
            asyncio.run(vec.async_step([INTERRUPT, 0]))  # sub-env 0 sends SIGINT, then replies
        assert counts(vec.step([0, 0])) == [2, 2]
        assert vec.get_attr("count") == [2, 2]


# -- (4) errors surface from async_step as from step ------------------------------------------
def test_a_sub_env_error_surfaces_from_async_step_with_its_rank_and_type() -> None:
    async def main() -> None:
        with ProcVecEnv([FragileEnv] * 3, num_workers=1) as vec:
            await vec.async_reset(seed=0)
            with pytest.raises(VecEnvWorkerError, match="action 1 is not supported") as caught:
                await vec.async_step(np.array([0, 0, 1]))
            assert (caught.value.rank, caught.value.exc_type) == (2, "ValueError")
            assert "ValueError" in caught.value.remote_traceback
            assert (await vec.async_step(np.array([0, 0, 0]))).rewards.tolist() == [0.0] * 3

    run(main())


def test_a_dead_worker_surfaces_from_async_step_and_every_later_call() -> None:
    async def main() -> None:
        with ProcVecEnv([CounterEnv] * 3, num_workers=3) as vec:
            await vec.async_reset(seed=0)
            with pytest.raises(VecEnvWorkerError, match="died") as caught:
                await vec.async_step([0, KILL, 0])
            assert (caught.value.rank, caught.value.exc_type) == (1, "EOFError")
            with pytest.raises(VecEnvWorkerError, match="died"):
                await vec.async_step([0, 0, 0])
            with pytest.raises(VecEnvWorkerError, match="died"):
                vec.step([0, 0, 0])

    run(main())


def test_an_unpicklable_action_fails_async_step_before_anything_is_sent() -> None:
    async def main() -> None:
        with ProcVecEnv([CounterEnv] * 2, autoreset=False) as vec:
            await vec.async_reset(seed=0)
            with pytest.raises(TypeError, match="picklable"):
                await vec.async_step([0, threading.Lock()])
            assert counts(await vec.async_step([0, 0])) == [1, 1]  # neither worker stepped

    run(main())


def test_async_calls_after_close_raise_vec_env_closed() -> None:
    async def main() -> None:
        vec = ProcVecEnv([CounterEnv])
        vec.close()
        with pytest.raises(VecEnvClosed):
            await vec.async_step([0])
        with pytest.raises(VecEnvClosed):
            await vec.async_reset(seed=0)

    run(main())
