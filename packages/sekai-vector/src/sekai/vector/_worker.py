"""The loop a ProcVecEnv worker process runs: it serves a slice of the sub-envs.

The slice is a ``SliceServer`` (``sekai.vector.backend``), as in a RayVecEnv actor. Every
message is one pickled ``(command, data)`` tuple from the parent and one pickled ``(status,
value)`` reply: the server's ``("ok", result)`` or ``("error", report)``. A failing command
leaves the worker alive and ready for the next one.

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
from collections.abc import Callable
from multiprocessing.connection import wait
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import cloudpickle
import numpy as np
from threadpoolctl import threadpool_limits

from sekai.vector import _forkserver, _shared_memory
from sekai.vector._channel import Channel, poll_yielding
from sekai.vector._info_columns import packed
from sekai.vector.backend import SliceServer

_PARENT_POLL_SECONDS = 0.5
_SPIN_SECONDS = 100e-6  # see _CommandWait
_LONG_SPIN_SECONDS = 2e-3
# Tracked objects a worker may gain, net, before a young collection; see _settle_garbage_collector
_YOUNG_COLLECTION_THRESHOLD = 50_000
# Workers run side by side, one per core: a BLAS or OpenMP pool of one thread per core in each
# of them would fight the others for the cores (Portfolio-v0, 256 sub-envs, 2 workers, 2 cores:
# 7.8k -> 10.1k env steps/s with one thread per pool).
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")

_forkserver.remove_at_forkserver_exit()  # when preloaded by a forkserver with a directory


def run(channel: Channel, payload: bytes, first_rank: int, parent_pid: int) -> None:
    """Build this worker's slice of sub-envs from ``payload`` and serve the parent's commands."""
    # Ctrl-C goes to the whole process group; the parent handles it and shuts us down.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _watch_parent(parent_pid)
    worker = _Worker(SliceServer(first_rank))
    for variable in _THREAD_VARIABLES:  # for thread pools the sub-envs load from now on
        os.environ[variable] = "1"
    try:
        worker.server.build(payload)
        threadpool_limits(1)  # for those loaded before (NumPy's BLAS, by the forkserver)
        reply = ("ok", cloudpickle.dumps(worker.server.run("spaces", None)[1]))
    except BaseException as error:  # reported to the parent, which raises it
        channel.send(pickle.dumps(("error", worker.server.describe(error))))
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


class _CommandWait:
    """Waits for the next command: checks for it for a moment, yielding the CPU, then sleeps.

    Waking a sleeping process costs tens of microseconds on a virtual machine, about what a
    whole slice of CartPole steps costs, and a process that slept runs its next few
    milliseconds slower (a 128-env Portfolio-v0 slice: about 1.5x after a pause of 0.5 ms,
    measured in one process). With two workers on two cores, checking for 100 us raised
    CartPole from about 120k to 150-180k env steps/s. When the commands have been coming
    within ``_LONG_SPIN_SECONDS`` of the replies (a loop that steps and little else), the
    worker checks that long, so that it is still running when the next one comes; when they
    come slower it sleeps after the short check.
    """

    def __init__(self, readable: Any) -> None:
        self.readable = readable
        self.spin = _LONG_SPIN_SECONDS

    def __call__(self) -> None:
        """Return once a command (or the end of the channel) is there to read."""
        started = time.perf_counter()
        if not poll_yielding(self.readable, self.spin):
            self.readable.poll()  # sleep until it comes
        waited = time.perf_counter() - started
        self.spin = _LONG_SPIN_SECONDS if waited < _LONG_SPIN_SECONDS else _SPIN_SECONDS


class _Worker:
    """Carries the parent's messages to this worker's SliceServer and its replies back.

    Adds only what crossing a process boundary needs: actions arrive as raw bytes when they
    are one array; infos, attribute values and call results are pickled apart (so that the
    parent unpickles a slice's infos only if they are read); observations go to shared memory.
    """

    def __init__(self, server: SliceServer) -> None:
        self.server = server
        self.segment: SharedMemory | None = None

    def serve(self, channel: Channel) -> None:
        """Answer commands until told to close or the parent goes away."""
        await_command = None
        if hasattr(os, "sched_yield"):  # POSIX
            readable = select.poll()
            readable.register(channel.fileno(), select.POLLIN)
            await_command = _CommandWait(readable)
        while True:
            if await_command is not None:
                await_command()
            try:
                command, data = pickle.loads(channel.recv())
            except EOFError:
                return
            if command == "close":
                reply = pickle.dumps(("closed", self.server.close()))
            elif command == "attach":
                reply = pickle.dumps(self.attach(data))
            else:
                if command == "step" and isinstance(data, tuple):  # an array slice, as bytes
                    dtype, shape, raw = data
                    data = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
                reply = self.reply(command, *self.server.run(command, data))
            try:
                channel.send(reply)
            except OSError:  # the parent closed its end: nobody is left to serve
                return
            if command == "close":
                return

    def reply(self, command: str, status: str, value: Any) -> bytes:
        """The pickled reply; an error if part of the value cannot be pickled."""
        try:
            if status == "ok":
                value = _ENCODE.get(command, _as_is)(value)
            return pickle.dumps((status, value), -1)
        except BaseException as error:
            return pickle.dumps(("error", self.server.describe(error)))

    def attach(self, data: tuple[str, _shared_memory.Layout]) -> tuple[str, Any]:
        """Have the server write its results into the parent's shared batch segment."""
        try:
            name, layout = data
            self.segment = SharedMemory(name=name)
            observations, *flags = _shared_memory.views(self.segment, layout)
            self.server.share(observations, tuple(flags))
        except BaseException as error:
            return "error", self.server.describe(error)
        return "ok", None

    def detach(self) -> None:
        """Drop the views and close (never unlink: the parent owns it) the shared segment."""
        self.server.unshare()
        if self.segment is not None:
            self.segment.close()
            self.segment = None


def _as_is(value: Any) -> Any:
    return value


def _pickled_infos(infos: Any) -> bytes:
    """A list of infos with pickle, packed by key where it can be; a native slice's (arrays
    and their builder) with cloudpickle."""
    if isinstance(infos, list):
        return pickle.dumps(packed(infos), -1)
    return cloudpickle.dumps(infos)


# What crosses the pipe instead of a command's value; the parent undoes it where it reads it.
_ENCODE: dict[str, Callable[[Any], Any]] = {
    "reset": lambda value: (value[0], _pickled_infos(value[1])),
    "step": lambda value: (value[0], value[1], _pickled_infos(value[2])),
    "heal": lambda value: (value[0], value[1], _pickled_infos(value[2])),
    "get_attr": cloudpickle.dumps,
    "call": cloudpickle.dumps,
}
