"""The loop a ProcVecEnv worker process runs: it owns a slice of the sub-envs.

Every message is one pickled ``(command, data)`` tuple from the parent and one pickled
``(status, value)`` reply: ``("ok", result)`` or ``("error", (rank, exc_type, message,
traceback))``, where rank is the index of the failing sub-env in the whole VecEnv. A failing
command leaves the worker alive and ready for the next one.

This module is preloaded by the forkserver, so it imports what every worker needs.
"""

from __future__ import annotations

import gc
import os
import pickle
import select
import signal
import threading
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import wait
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import cloudpickle
import numpy as np
from threadpoolctl import threadpool_limits

from sekai.vector import _shared_memory
from sekai.vector._channel import Channel
from sekai.vector.backend import EnvGroup, _flag_arrays

_PARENT_POLL_SECONDS = 0.5
_SPIN_SECONDS = 100e-6  # see _await_command
# Tracked objects a worker may gain, net, before a young collection; see _settle_garbage_collector
_YOUNG_COLLECTION_THRESHOLD = 50_000
# Workers run side by side, one per core: a BLAS or OpenMP pool of one thread per core in each
# of them would fight the others for the cores (Portfolio-v0, 256 sub-envs, 2 workers, 2 cores:
# 7.8k -> 10.1k env steps/s with one thread per pool).
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def run(channel: Channel, payload: bytes, first_rank: int, parent_pid: int) -> None:
    """Build this worker's sub-envs from ``payload`` and serve the parent's commands."""
    # Ctrl-C goes to the whole process group; the parent handles it and shuts us down.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _watch_parent(parent_pid)
    worker = _Worker(EnvGroup(first_rank))
    for variable in _THREAD_VARIABLES:  # for thread pools the sub-envs load from now on
        os.environ[variable] = "1"
    try:
        env_fns, autoreset = pickle.loads(payload)
        worker.group.build(env_fns, autoreset)
        threadpool_limits(1)  # for those loaded before (NumPy's BLAS, by the forkserver)
        reply = ("ok", cloudpickle.dumps(worker.group.spaces))
    except BaseException as error:  # reported to the parent, which raises it
        channel.send(pickle.dumps(("error", worker.describe(error))))
        return
    _settle_garbage_collector()
    channel.send(pickle.dumps(reply))
    try:
        worker.serve(channel)
    finally:
        worker.detach()


def _settle_garbage_collector() -> None:
    """Stop the cyclic garbage collector from rescanning what lives as long as the worker.

    A step of a slice of sub-envs allocates a few objects per sub-env (results, infos) that
    live until the reply is sent. With the default thresholds they set off several young
    collections per step, which promote them to older generations and so set off full
    collections that scan every sub-env: about a tenth of a CartPole worker's time. The sub-envs
    and imported modules are frozen out of collections, and a young collection waits until the
    worker has gained this many tracked objects, net: a step's temporaries are freed by
    reference counting long before that, while garbage in cycles is still collected, in batches.
    Garbage left by building the sub-envs is collected first, not frozen.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(_YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])


def _watch_parent(parent_pid: int) -> None:
    """Exit when the parent process is gone, whatever the main thread is doing.

    The parent sentinel fires when the parent dies, unless other children of the parent (such
    as fork-started siblings) hold its pipe ends too; on POSIX the parent pid is checked as well.
    """
    from multiprocessing import parent_process

    parent = parent_process()
    assert parent is not None, "run() is the target of a multiprocessing worker process"
    sentinel = parent.sentinel

    def watch() -> None:
        while not wait([sentinel], _PARENT_POLL_SECONDS) and _is_alive(parent_pid):
            pass
        os._exit(1)

    threading.Thread(target=watch, name="sekai-parent-watch", daemon=True).start()


def _is_alive(pid: int) -> bool:
    if os.name != "posix":  # os.kill(pid, 0) would terminate it on Windows
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _await_command(readable: Any) -> None:
    """Check for the next command for a moment, yielding the CPU, before recv() sleeps.

    Waking a sleeping process costs tens of microseconds on a virtual machine, about what a
    whole slice of CartPole steps costs, and in a training loop the next command usually follows
    the reply that fast. With two workers on two cores this raised CartPole from about 120k to
    150-180k env steps/s; sched_yield() leaves the CPU to any other runnable process.
    """
    spin_until = time.perf_counter() + _SPIN_SECONDS
    while not readable.poll(0) and time.perf_counter() < spin_until:
        os.sched_yield()


class _Worker:
    """The commands a worker answers, run on its group of sub-envs."""

    def __init__(self, group: EnvGroup) -> None:
        self.group = group
        self.segment: SharedMemory | None = None
        self.observations: Any = None  # views of the shared batch, when attached
        self.flags: tuple[np.ndarray, ...] | None = None  # shared rewards, terminated, truncated

    def serve(self, channel: Channel) -> None:
        """Answer commands until told to close or the parent goes away."""
        commands: dict[str, Callable[[Any], Any]] = {
            "attach": self.attach,
            "reset": self.reset,
            "step": self.step,
            "get_attr": self.get_attr,
            "set_attr": self.set_attr,
            "call": self.call,
        }
        readable = select.poll() if hasattr(os, "sched_yield") else None  # POSIX
        if readable is not None:
            readable.register(channel.fileno(), select.POLLIN)
        while True:
            if readable is not None:
                _await_command(readable)
            try:
                command, data = pickle.loads(channel.recv())
            except EOFError:
                return
            if command == "close":
                reply = pickle.dumps(("closed", self.close_envs()))
            else:
                self.group.rank = self.group.first_rank
                try:
                    reply = pickle.dumps(("ok", commands[command](data)))
                except BaseException as error:  # reported, the worker stays alive
                    reply = pickle.dumps(("error", self.describe(error)))
            try:
                channel.send(reply)
            except OSError:  # the parent closed its end: nobody is left to serve
                return
            if command == "close":
                return

    def describe(self, error: BaseException) -> tuple[int, str, str, str]:
        """What the parent needs to raise VecEnvWorkerError for ``error``."""
        remote = "".join(traceback.format_exception(error))
        return self.group.rank, type(error).__name__, str(error), remote

    def attach(self, data: tuple[str, _shared_memory.Layout]) -> None:
        name, layout = data
        self.segment = SharedMemory(name=name)
        self.observations, *flags = _shared_memory.views(self.segment, layout)
        self.flags = tuple(flags)

    def _store(self, observations: tuple[Any, ...]) -> tuple[Any, ...]:
        """Write the slice's observations into the shared batch if attached, else return them."""
        if self.observations is None:
            return observations
        first = self.group.first_rank
        if isinstance(self.observations, np.ndarray) and _shared_memory.write_rows(
            self.observations[first : first + len(observations)], observations
        ):
            return ()
        # one by one, each shape checked (numpy would broadcast a wrong one into its row)
        for index, observation in enumerate(observations, start=first):
            self.group.rank = index
            _shared_memory.write(self.observations, index, observation)
        return ()

    def reset(self, data: tuple[list[int | None], list[dict[str, Any] | None]]) -> Any:
        observations, infos = zip(*self.group.reset(*data), strict=True)
        return infos, self._store(observations)

    def step(self, data: list[Any] | tuple[str, tuple[int, ...], bytes]) -> Any:
        if isinstance(data, tuple):  # a slice of an action array, as raw bytes
            dtype, shape, raw = data
            actions: Any = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        else:
            actions = data
        results = self.group.step(actions)
        observations, rewards, terminated, truncated, infos = zip(*results, strict=True)
        flags: tuple[np.ndarray, ...] | None = _flag_arrays(rewards, terminated, truncated)
        if self.flags is not None:
            rows = slice(self.group.first_rank, self.group.first_rank + len(rewards))
            for shared, array in zip(self.flags, flags, strict=True):  # type: ignore[arg-type]
                shared[rows] = array
            flags = None
        # pickled apart, so that the parent unpickles a slice's infos only if they are read
        return flags, pickle.dumps(infos, -1), self._store(observations)

    def get_attr(self, name: str) -> bytes:
        return cloudpickle.dumps(self.group.get_attr(name))

    def set_attr(self, data: tuple[str, list[Any]]) -> None:
        self.group.set_attr(*data)

    def call(self, data: tuple[str, tuple[Any, ...], dict[str, Any]]) -> bytes:
        return cloudpickle.dumps(self.group.call(*data))

    def close_envs(self) -> tuple[int, str, str, str] | None:
        """Close every sub-env; describe the first error, after closing the others."""
        error = self.group.close()
        return None if error is None else self.describe(error)

    def detach(self) -> None:
        """Drop the views and close (never unlink: the parent owns it) the shared segment."""
        self.observations = self.flags = None
        if self.segment is not None:
            self.segment.close()
            self.segment = None
