"""The loop a ProcVecEnv worker process runs: it owns a slice of the sub-envs.

Every message is one pickled ``(command, data)`` tuple from the parent and one pickled
``(status, value)`` reply: ``("ok", result)`` or ``("error", (rank, exc_type, message,
traceback))``, where rank is the index of the failing sub-env in the whole VecEnv. A failing
command leaves the worker alive and ready for the next one.

This module is preloaded by the forkserver, so it imports what every worker needs.
"""

from __future__ import annotations

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

from sekai.vector import _shared_memory
from sekai.vector._channel import Channel
from sekai.vector.base import _check_new_env, _prepare_env

_PARENT_POLL_SECONDS = 0.5
_SPIN_SECONDS = 100e-6  # see _await_command


def run(channel: Channel, payload: bytes, first_rank: int, parent_pid: int) -> None:
    """Build this worker's sub-envs from ``payload`` and serve the parent's commands."""
    # Ctrl-C goes to the whole process group; the parent handles it and shuts us down.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _watch_parent(parent_pid)
    worker = _Worker(first_rank)
    try:
        env_fns, autoreset = pickle.loads(payload)
        seen: set[int] = set()
        for env_fn in env_fns:
            env = _prepare_env(env_fn(), autoreset)
            _check_new_env(env, seen)
            worker.envs.append(env)
            worker.rank += 1
        spaces = [(env.observation_space, env.action_space) for env in worker.envs]
        reply = ("ok", cloudpickle.dumps(spaces))
    except BaseException as error:  # reported to the parent, which raises it
        channel.send(pickle.dumps(("error", worker.describe(error))))
        worker.close_envs()
        return
    channel.send(pickle.dumps(reply))
    try:
        worker.serve(channel)
    finally:
        worker.detach()


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
    """The sub-envs of one worker and the commands it answers."""

    def __init__(self, first_rank: int) -> None:
        self.first_rank = first_rank
        self.rank = first_rank  # the sub-env being run, for error reports
        self.envs: list[Any] = []
        self.segment: SharedMemory | None = None
        self.observations: Any = None  # views of the shared batch, when attached

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
                self.rank = self.first_rank
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
        return self.rank, type(error).__name__, str(error), remote

    def attach(self, data: tuple[str, _shared_memory.Layout]) -> None:
        name, layout = data
        self.segment = SharedMemory(name=name)
        self.observations = _shared_memory.views(self.segment, layout)

    def _store(self, observations: tuple[Any, ...]) -> tuple[Any, ...]:
        """Write the slice's observations into the shared batch if attached, else return them."""
        if self.observations is None:
            return observations
        if isinstance(self.observations, np.ndarray):
            rows = self.observations[self.first_rank : self.first_rank + len(observations)]
            shape = rows.shape[1:]
            if all(getattr(observation, "shape", None) == shape for observation in observations):
                rows[...] = observations  # the whole slice at once
                return ()
        # one by one, each shape checked (numpy would broadcast a wrong one into its row)
        for index, observation in enumerate(observations, start=self.first_rank):
            self.rank = index
            _shared_memory.write(self.observations, index, observation)
        return ()

    def reset(self, data: tuple[list[int | None], list[dict[str, Any] | None]]) -> Any:
        seeds, options = data
        results = []
        for index, env in enumerate(self.envs):
            self.rank = self.first_rank + index
            results.append(env.reset(seed=seeds[index], options=options[index]))
        observations, infos = zip(*results, strict=True)
        return infos, self._store(observations)

    def step(self, data: list[Any] | tuple[str, tuple[int, ...], bytes]) -> Any:
        if isinstance(data, tuple):  # a slice of an action array, as raw bytes
            dtype, shape, raw = data
            actions: Any = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
        else:
            actions = data
        results = []
        for index, env in enumerate(self.envs):
            self.rank = self.first_rank + index
            results.append(env.step(actions[index]))
        observations, rewards, terminated, truncated, infos = zip(*results, strict=True)
        return (
            [float(reward) for reward in rewards],
            [bool(flag) for flag in terminated],
            [bool(flag) for flag in truncated],
            infos,
            self._store(observations),
        )

    def get_attr(self, name: str) -> bytes:
        values = []
        for index, env in enumerate(self.envs):
            self.rank = self.first_rank + index
            values.append(env.get_attr(name))
        return cloudpickle.dumps(values)

    def set_attr(self, data: tuple[str, list[Any]]) -> None:
        name, values = data
        for index, env in enumerate(self.envs):
            self.rank = self.first_rank + index
            env.set_attr(name, values[index])

    def call(self, data: tuple[str, tuple[Any, ...], dict[str, Any]]) -> bytes:
        name, args, kwargs = data
        results = []
        for index, env in enumerate(self.envs):
            self.rank = self.first_rank + index
            attribute = env.get_attr(name)
            results.append(attribute(*args, **kwargs) if callable(attribute) else attribute)
        return cloudpickle.dumps(results)

    def close_envs(self) -> tuple[int, str, str, str] | None:
        """Close every sub-env; describe the first error, after closing the others."""
        first_error = None
        for index, env in enumerate(self.envs):
            self.rank = self.first_rank + index
            try:
                env.close()
            except Exception as error:  # the others are still closed
                if first_error is None:
                    first_error = self.describe(error)
        return first_error

    def detach(self) -> None:
        """Drop the views and close (never unlink: the parent owns it) the shared segment."""
        self.observations = None
        if self.segment is not None:
            self.segment.close()
            self.segment = None
