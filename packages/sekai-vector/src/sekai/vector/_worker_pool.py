"""The worker processes behind a ProcVecEnv: starting, messaging, failures and shutdown.

Each worker answers every command with exactly one reply, and the pool counts the replies it
still owes each worker. A call interrupted before reading them all (Ctrl-C during ``step()``)
leaves the count above zero, and the next call reads and discards those stale replies before
sending anything, so the workers never drift out of step with the parent. For the count to be
exact, a Ctrl-C that arrives while a message is half-sent or half-read is held back until the
next wait for a reply (or the end of the call); while waiting, it interrupts at once.

``async_request`` is the same exchange for a running event loop: it yields to the loop only
where the blocking call would wait for a worker, until the reply's first bytes (or EOF) can be
read, through a reader callback on the worker's socket. Sending and reading whole messages stay
synchronous, so a cancelled call, like a Ctrl-C, always stops between whole messages, and the
replies it leaves owed are discarded by the next call.
"""

from __future__ import annotations

# signal.signal/getsignal convert every handler to and from an enum, which costs more than the
# rest of a step's bookkeeping; _SigintGuard calls the C functions behind them instead.
import _signal
import asyncio
import contextlib
import os
import pickle
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing import resource_tracker
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from multiprocessing.shared_memory import SharedMemory
from typing import Any, Protocol

from sekai.vector import _shared_memory, _worker
from sekai.vector._channel import Channel, poll_yielding
from sekai.vector._forkserver import ForkserverLease
from sekai.vector._restart import RestartPolicy
from sekai.vector.backend import ErrorReport, error_from_report
from sekai.vector.errors import VecEnvClosed, VecEnvWorkerError, worker_error

_TERMINATE_GRACE_SECONDS = 0.5  # after terminate(), how long a worker gets before kill()
# A Ctrl-C handled by another thread reaches the main thread only between bytecodes, so waits
# for a reply are sliced to let it in.
_WAIT_SLICE_MILLISECONDS = 50
# A reply usually comes within tens of microseconds, sooner than a sleeping process is woken on a
# virtual machine; polling for it this long before sleeping doubled the CartPole step rate with
# one worker (95k -> 170k env steps/s) and added a third with two, on two cores. The poll yields
# the CPU on each turn: with as many workers as cores, a spin that did not took a core from a
# worker (16 CartPole sub-envs, two workers, two cores: 65k -> 72k env steps/s).
_SPIN_SECONDS = 200e-6
# A wait for a reply that took this long was spent on the worker's work, not on waking up: the
# next wait for that worker sleeps at once, since spinning would take a CPU from the workers.
_LONG_WAIT_SECONDS = 1e-3
_SIGINT = int(signal.SIGINT)
WORKER_NAME = "sekai-ProcVecEnv-worker"
# A worker that finds itself building a ProcVecEnv while importing the parent's main module
# (import_main=True and a script without the main guard) exits at once with this code; the
# parent explains.
REIMPORTED_MAIN_EXIT = 87
_REIMPORTED_MAIN = (
    "the worker processes re-ran your script's top level, which builds a ProcVecEnv again: "
    "with import_main=True each {method!r} worker imports the main module. Put the code that "
    'builds and runs the ProcVecEnv under `if __name__ == "__main__":`, or leave import_main '
    "off (the default)"
)
# Serializes the workers' starts, during which the main module is hidden (_main_hidden).
_main_hidden_lock = threading.Lock()

AfterRestart = Callable[[int], tuple[str, Any]]  # worker index -> the reply to use in its place


class ProcessContext(Protocol):
    """The part of a multiprocessing context the pool uses."""

    Process: Callable[..., BaseProcess]


@dataclass
class _Handle:
    """The parent's side of one worker process."""

    process: BaseProcess
    channel: Channel
    first_rank: int
    num_envs: int
    pending: int = 0  # replies the worker still owes
    spin: bool = True  # whether to poll for its next reply for a moment before sleeping
    readable: Any = field(init=False)  # a poll object that waits for the next reply (not Windows)

    def __post_init__(self) -> None:
        self.readable = select.poll() if hasattr(select, "poll") else None
        if self.readable is not None:
            self.readable.register(self.channel.fileno(), select.POLLIN)

    @property
    def ranks(self) -> range:
        return range(self.first_rank, self.first_rank + self.num_envs)


class WorkerPool:
    """Worker processes that each run a contiguous slice of the sub-envs."""

    def __init__(
        self,
        context: ProcessContext,
        payloads: list[bytes],
        slices: list[range],
        close_timeout: float,
        restart: RestartPolicy | None = None,
        import_main: bool = False,
    ) -> None:
        self.close_timeout = close_timeout
        self.import_main = import_main  # whether spawn and forkserver workers import __main__
        self.timeout: float | None = None  # seconds a call waits for its replies; None: no limit
        self.restart = restart
        self._context, self._payloads, self._slices = context, payloads, slices
        self._attach: bytes | None = None  # the attach message, once observations are shared
        self.start_method = getattr(context, "get_start_method", lambda: "spawn")()
        self._lease: ForkserverLease | None = None  # a short socket path, if TMPDIR is long
        self.handles: list[_Handle] = []
        self.segment: SharedMemory | None = None
        # views of the shared segment: (observations, rewards, terminated, truncated)
        self.views: Any = None
        self._failure: VecEnvWorkerError | None = None  # set once a worker has died
        self._sigint = _SigintGuard()
        self._in_flight: object = None  # a token while an async_request awaits its replies
        self._waiter: _Waiter | None = None  # what async_request is awaiting, if anything
        # Workers attach to the segment created later by this process; the segment must be
        # tracked by this process's resource tracker alone. A forked worker would otherwise
        # start a tracker of its own, which unlinks the segment when the worker exits.
        resource_tracker.ensure_running()
        try:
            if self.start_method == "forkserver":
                self._lease = ForkserverLease()
            self._start(context, payloads, slices)
        except BaseException:
            self.close()
            raise

    def _start(self, context: ProcessContext, payloads: list[bytes], slices: list[range]) -> None:
        for index in range(len(payloads)):
            self.handles.append(self._spawn(index))

    def _spawn(self, index: int) -> _Handle:
        """Start worker ``index``; it owes its start-up report: its spaces, or why building its
        sub-envs failed."""
        ranks = self._slices[index]
        parent_end, child_end = Channel.pair()
        process = self._context.Process(
            target=_worker.run,
            args=(child_end, self._payloads[index], ranks.start, os.getpid()),
            name=f"{WORKER_NAME}-{index}",
            daemon=True,
        )
        try:
            if self._lease is not None:
                self._lease.ensure_running()
            if self.start_method == "fork":  # a copy of this process: it imports nothing
                process.start()
            else:
                with _main_hidden(every_path=not self.import_main):
                    process.start()
        except BaseException:
            parent_end.close()
            raise
        finally:
            child_end.close()
        return _Handle(process, parent_end, ranks.start, len(ranks), 1)

    def _respawn(self, handle: _Handle) -> None:
        """Replace ``handle``'s dead worker by a new one with the same sub-env factories,
        attached to the shared observations; VecEnvWorkerError if the restart limit is reached
        (then every later call raises it) or the new worker fails to build its sub-envs."""
        assert self.restart is not None
        if not self.restart.allow():
            raise self.restart.give_up(self._died(handle))
        index = self.handles.index(handle)
        handle.process.join(self.close_timeout)
        handle.channel.close()
        handle.process.close()
        self.handles[index] = new = self._spawn(index)
        for message in [] if self._attach is None else [self._attach]:
            new.channel.send(message)
            new.pending += 1
        for _ in range(new.pending):  # its spaces (known already), then the attach reply
            status, value = self._receive_or_died(new)
            if status == "error":
                self._failure = error_from_report(value)
                raise self._failure

    def exchange(self, index: int, message: bytes) -> tuple[str, Any]:
        """Send worker ``index`` one message and read its (status, value) reply."""
        handle = self.handles[index]
        handle.channel.send(message)
        handle.pending += 1
        return self._receive_or_died(handle)

    def _receive_or_died(self, handle: _Handle) -> tuple[str, Any]:
        try:
            return self._receive(handle)
        except _WorkerGone:
            raise self._died(handle) from None

    # -- messaging ------------------------------------------------------------------------
    def request(
        self, messages: list[bytes], after_restart: AfterRestart | None = None
    ) -> list[Any]:
        """Send one pickled command to each worker and return their results, in worker order.

        Every live worker's reply is collected before an error is raised; the error of the
        lowest rank wins. With ``restart``, a worker found dead is replaced and its reply is
        ``after_restart(index)`` (by default: the new worker's reply to the same message).
        """
        deadline = self.deadline()
        with self._sigint:
            self._discard_stale_replies(deadline)
            self._send(messages)
            return self.collect(deadline, self._after_restart(messages, after_restart))

    def _after_restart(
        self, messages: list[bytes], after_restart: AfterRestart | None
    ) -> AfterRestart:
        if after_restart is not None:
            return after_restart
        return lambda index: self.exchange(index, messages[index])

    async def async_request(
        self, messages: list[bytes], after_restart: AfterRestart | None = None
    ) -> list[Any]:
        """``request`` that leaves the running event loop free while the workers work.

        One call at a time: a second call (async or not) made while this one awaits replies
        raises RuntimeError instead of taking them.
        """
        self._check_idle()
        self._in_flight = token = object()
        deadline = self.deadline()
        try:
            if self._failure is not None:
                raise self._failure
            for index in range(len(self.handles)):  # stale replies, as in the blocking call
                while self.handles[index].pending:  # (a restart replaces the handle)
                    await self._readable(self.handles[index], deadline)
                    with self._sigint:
                        self._receive_in_time(self.handles[index], deadline)
            with self._sigint:  # every message is sent, and counted, before the next await
                self._send(messages)
            for handle in self.handles:
                await self._readable(handle, deadline)
            # every reply has begun to arrive, or the deadline has passed: no wait left
            return self.collect(deadline, self._after_restart(messages, after_restart))
        finally:
            if self._in_flight is token:  # else a later call took over from this abandoned one
                self._in_flight = None

    def _send(self, messages: list[bytes]) -> None:
        """Send each worker its message and count the reply it owes; a worker found dead here
        is reported by ``collect`` after the others' replies are read."""
        for handle, message in zip(self.handles, messages, strict=True):
            try:
                handle.channel.send(message)
            except OSError:  # collect() finds the worker gone when it reads the reply
                continue
            handle.pending += 1

    async def _readable(self, handle: _Handle, deadline: float | None) -> None:
        """Wait, leaving the event loop free, until ``handle`` has bytes (or EOF) to read, or
        the deadline passes."""
        if handle.readable is not None and handle.readable.poll(0):
            return  # already there: no need to register with the loop
        waiter = _Waiter(asyncio.get_running_loop(), handle.channel)
        self._waiter = waiter
        try:
            if deadline is None:
                await waiter.future
            else:
                remaining = max(0.0, deadline - time.monotonic())
                await asyncio.wait({waiter.future}, timeout=remaining)
                if waiter.future.done():
                    waiter.future.result()  # close() may have set VecEnvClosed
        finally:
            if self._waiter is waiter:  # else close() has stopped it already
                self._waiter = None
                waiter.stop()
        if not self.handles:  # close() ran while this call was suspended
            raise VecEnvClosed()

    def _check_idle(self) -> None:
        """RuntimeError while an async_request awaits its replies.

        Unless the loop it awaits in has been closed: that call can never resume, so its
        replies are stale like any others, and the caller may go on.
        """
        if self._in_flight is None:
            return
        if self._waiter is None or not self._waiter.loop.is_closed():
            raise _busy()
        self._waiter = self._in_flight = None

    def deadline(self) -> float | None:
        """When a call starting now must have every reply (``time.monotonic()``), or None."""
        return None if self.timeout is None else time.monotonic() + self.timeout

    def collect(
        self, deadline: float | None = None, after_restart: AfterRestart | None = None
    ) -> list[Any]:
        """Read the reply each worker owes; raise the first error once all are read.

        Workers that have not answered by ``deadline`` are stopped, and a TimeoutError (also a
        VecEnvWorkerError) names their sub-envs. A dead worker is an error, unless ``restart``
        allows replacing it: then its reply is ``after_restart(index)``.
        """
        results = []
        errors: list[VecEnvWorkerError] = []
        silent: list[_Handle] = []
        with self._sigint:
            for index, handle in enumerate(list(self.handles)):
                try:
                    status, value = self._receive(handle, deadline)
                except _NoAnswer:
                    silent.append(handle)
                    continue
                except _WorkerGone:
                    try:
                        if self.restart is None or after_restart is None:
                            raise self._died(handle) from None
                        self._respawn(handle)
                        status, value = after_restart(index)
                    except VecEnvWorkerError as died:
                        errors.append(died)
                        continue
                if status == "error":
                    errors.append(error_from_report(value))
                results.append(value)
        if silent:
            raise self._timed_out(silent)
        if errors:
            raise min(errors, key=lambda error: error.rank)
        return results

    def _receive_in_time(self, handle: _Handle, deadline: float | None) -> tuple[str, Any]:
        """``_receive``, raising the timeout error if the reply is not there in time."""
        try:
            return self._receive(handle, deadline)
        except _NoAnswer:
            raise self._timed_out([handle]) from None
        except _WorkerGone:
            if self.restart is None:
                raise self._died(handle) from None
            self._respawn(handle)  # the new worker owes nothing: the stale replies are gone
            return "ok", None

    def _receive(self, handle: _Handle, deadline: float | None = None) -> tuple[str, Any]:
        """Read one reply; a Ctrl-C may interrupt the wait for it, not the reading.

        _NoAnswer if nothing has arrived by ``deadline``.
        """
        if handle.readable is not None:
            with self._sigint.waiting():
                started = time.perf_counter()
                if not poll_yielding(handle.readable, _SPIN_SECONDS if handle.spin else 0.0):
                    while not handle.readable.poll(_wait_slice(deadline)):
                        if deadline is not None and time.monotonic() >= deadline:
                            raise _NoAnswer
                handle.spin = time.perf_counter() - started < _LONG_WAIT_SECONDS
        elif deadline is not None and not wait(
            [handle.channel.sock], max(0.0, deadline - time.monotonic())
        ):
            raise _NoAnswer
        try:
            data = handle.channel.recv()
        except (EOFError, OSError):
            raise _WorkerGone from None
        handle.pending -= 1
        return pickle.loads(data)

    def _discard_stale_replies(self, deadline: float | None) -> None:
        if self._failure is not None:
            raise self._failure
        for index in range(len(self.handles)):
            while self.handles[index].pending:
                if self._in_flight is not None:  # those may be the replies it awaits
                    self._check_idle()
                self._receive_in_time(self.handles[index], deadline)

    def _timed_out(self, silent: list[_Handle]) -> VecEnvWorkerError:
        """Stop the workers that did not answer in time; every later call raises the error."""
        for handle in silent:
            handle.process.kill()
        for handle in silent:
            handle.process.join()
        names = ", ".join(_sub_envs(handle.ranks) for handle in silent)
        self._failure = worker_error(
            f"{names} did not answer within timeout={self.timeout} s; the silent worker "
            "processes were stopped, so this VecEnv can only be closed now",
            rank=silent[0].first_rank,
            exc_type="TimeoutError",
        )
        return self._failure

    def _died(self, handle: _Handle) -> VecEnvWorkerError:
        """Remember that ``handle``'s worker is gone; every later call raises the same error."""
        if self._failure is None:
            handle.process.join(self.close_timeout)
            exitcode = handle.process.exitcode
            message = f"the worker process running {_sub_envs(handle.ranks)} died "
            message += f"(exit code {exitcode})"
            if exitcode == REIMPORTED_MAIN_EXIT:
                message = _REIMPORTED_MAIN.format(method=self.start_method)
            self._failure = VecEnvWorkerError(message, rank=handle.first_rank, exc_type="EOFError")
        return self._failure

    # -- shared memory --------------------------------------------------------------------
    def share_observations(self, layout: _shared_memory.Layout, size: int) -> None:
        """Create the batch segment and have every worker write its step results there."""
        self.segment = _shared_memory.create_segment(size)
        self.views = _shared_memory.views(self.segment, layout)
        self._attach = pickle.dumps(("attach", (self.segment.name, layout)))
        self.request([self._attach] * len(self.handles))

    # -- shutdown -------------------------------------------------------------------------
    def close(self) -> ErrorReport | None:
        """Stop every worker and free the shared memory; report the first sub-env close error.

        Workers get ``close_timeout`` seconds to close their sub-envs and exit, are then
        terminated, and killed if they ignore that. The segment is unlinked only once no worker
        is left that could still attach to it.
        """
        errors = []
        try:
            if self._waiter is not None:  # an async_request awaits a socket about to close
                waiter, self._waiter = self._waiter, None
                waiter.stop(VecEnvClosed())
            deadline = time.monotonic() + self.close_timeout
            message = pickle.dumps(("close", None))
            for handle in self.handles:
                try:
                    handle.channel.send(message)
                except OSError:
                    continue
            for handle in self.handles:
                if (error := self._await_closed(handle, deadline)) is not None:
                    errors.append(error)
            for handle in self.handles:
                handle.process.join(max(0.0, deadline - time.monotonic()))
        finally:  # also after Ctrl-C in the wait above: nothing may outlive close()
            self._stop_stragglers()
            for handle in self.handles:
                handle.channel.close()
                handle.process.close()
            self.handles = []
            self._release_segment()
            if self._lease is not None:
                self._lease.release()
        return min(errors) if errors else None

    def _await_closed(self, handle: _Handle, deadline: float) -> ErrorReport | None:
        """Skip stale replies until the worker confirms it closed its sub-envs, or time is up."""
        try:
            while wait([handle.channel.sock], max(0.0, deadline - time.monotonic())):
                status, value = pickle.loads(handle.channel.recv())
                if status == "closed":
                    return value
        except (EOFError, OSError, pickle.UnpicklingError):
            pass
        return None

    def _stop_stragglers(self) -> None:
        stragglers = [h.process for h in self.handles if h.process.exitcode is None]
        for process in stragglers:
            process.terminate()
        deadline = time.monotonic() + _TERMINATE_GRACE_SECONDS
        for process in stragglers:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in stragglers:
            if process.exitcode is None:
                process.kill()
                process.join()

    def _release_segment(self) -> None:
        if self.segment is None:
            return
        self.views = None
        self.segment.close()
        self.segment.unlink()
        self.segment = None


class _Waiter:
    """A future of ``loop`` that resolves once ``channel`` has bytes (or EOF) to read.

    The loop's reader callback on the socket resolves it; a loop without reader callbacks
    (Windows' ProactorEventLoop) runs the wait in its default executor instead, in slices, so
    that the thread ends soon after ``stop``.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, channel: Channel) -> None:
        self.loop = loop
        self.future: asyncio.Future[None] = loop.create_future()
        self._fd = channel.fileno()  # kept: remove_reader needs it after the socket is closed
        self._stopped: threading.Event | None = None
        try:
            loop.add_reader(self._fd, self._resolve)
        except NotImplementedError:
            self._stopped = threading.Event()
            waiting = loop.run_in_executor(None, _wait_readable, channel.sock, self._stopped)
            waiting.add_done_callback(self._resolve)

    def _resolve(self, waiting: asyncio.Future[None] | None = None) -> None:
        if waiting is not None and not waiting.cancelled():
            waiting.exception()  # retrieved: an error only means the socket was closed
        if not self.future.done():
            self.future.set_result(None)

    def stop(self, error: BaseException | None = None) -> None:
        """Stop watching the socket; with ``error``, the awaiting task gets it.

        Called from a thread other than the running loop's (a close() there), it hands the work
        to the loop, the only thread that may touch its readers and futures.
        """
        try:
            here = asyncio.get_running_loop() is self.loop
        except RuntimeError:
            here = not self.loop.is_running()
        if here:
            self._stop(error)
        elif not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._stop, error)

    def _stop(self, error: BaseException | None) -> None:
        if self._stopped is not None:
            self._stopped.set()
        if self.loop.is_closed():  # nothing left to unregister from, nor any task to wake
            return
        if self._stopped is None:
            self.loop.remove_reader(self._fd)
        if error is not None and not self.future.done():
            self.future.set_exception(error)


def _wait_readable(sock: Any, stopped: threading.Event) -> None:
    while not stopped.is_set() and not wait([sock], _WAIT_SLICE_MILLISECONDS / 1000):
        pass


@contextlib.contextmanager
def _main_hidden(*, every_path: bool) -> Iterator[None]:
    """While a spawn or forkserver worker starts, hide the main module from it.

    multiprocessing has such a worker import the parent's main module, before anything else, by
    the name in its ``__spec__`` (``python -m``) or from its ``__file__``: that re-runs a script's
    top level in every worker (which then needs ``if __name__ == "__main__":``) and costs the
    import (about 0.2 s a worker under pytest, whose main module imports pytest). Workers need
    nothing from it: cloudpickle sends what the script defines by value. So, with
    ``every_path``, ``__spec__`` is None and ``__file__`` gone while the worker starts
    (``process.start()`` reads them); the main module is the same again afterwards.

    Without ``every_path`` (``import_main=True``) the workers import it, unless its path is not
    a file: ``python -`` gives ``'<stdin>'``, which they could not run, so that is still hidden.
    Starts are serialized, so that one never restores what another hid before it has started.
    """
    with _main_hidden_lock:
        main = sys.modules.get("__main__")
        if main is None:
            yield
            return
        path = getattr(main, "__file__", None)
        spec = getattr(main, "__spec__", None)
        hide_path = path is not None and (every_path or not os.path.isfile(path))
        hide_spec = spec is not None and every_path
        if hide_path:
            del main.__file__
        if hide_spec:
            main.__spec__ = None
        try:
            yield
        finally:
            if hide_path:
                main.__file__ = path
            if hide_spec:
                main.__spec__ = spec


class _WorkerGone(Exception):
    """The worker's end of the channel closed: the worker process died."""


class _NoAnswer(Exception):
    """A worker's reply did not arrive by the deadline."""


def _wait_slice(deadline: float | None) -> int:
    """Milliseconds to poll for a reply: a slice, or what is left before ``deadline``."""
    if deadline is None:
        return _WAIT_SLICE_MILLISECONDS
    remaining = int((deadline - time.monotonic()) * 1000) + 1
    return max(0, min(_WAIT_SLICE_MILLISECONDS, remaining))


def _sub_envs(ranks: range) -> str:
    """``sub-env 3`` or ``sub-envs 3..5``."""
    if len(ranks) == 1:
        return f"sub-env {ranks[0]}"
    return f"sub-envs {ranks[0]}..{ranks[-1]}"


def _busy() -> RuntimeError:
    return RuntimeError(
        "another call on this ProcVecEnv is still awaiting its workers' replies: await (or "
        "cancel) it before the next reset/step/get_attr/set_attr/call"
    )


class _SigintGuard:
    """Holds a Ctrl-C back while messages are in flight, and lets it through while waiting.

    Inside ``with guard:`` (re-entrant) SIGINT goes to a handler that only notes it, unless the
    code is inside ``guard.waiting()``: then nothing is half-done and the original handler runs
    at once. A noted Ctrl-C runs the original handler on entering ``waiting()`` or when the
    outermost block ends. Only the main thread can swap handlers; elsewhere this does nothing.
    """

    def __init__(self) -> None:
        self._depth = 0
        self._previous: Any = None
        self._noted = False
        self._waiting = False

    def __enter__(self) -> None:
        self._depth += 1
        if self._depth == 1:
            previous = _signal.getsignal(_SIGINT)
            if callable(previous) and threading.current_thread() is threading.main_thread():
                self._previous = previous
                _signal.signal(_SIGINT, self._handle)

    def __exit__(self, *exc_info: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._previous is not None:
            previous, self._previous = self._previous, None
            _signal.signal(_SIGINT, previous)
            if self._noted:
                self._noted = False
                previous(_SIGINT, None)

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        self._waiting = True
        try:
            if self._noted:
                self._noted = False
                self._previous(_SIGINT, None)
            yield
        finally:
            self._waiting = False

    def _handle(self, signum: int, frame: Any) -> None:
        if self._waiting:
            self._previous(signum, frame)
        else:
            self._noted = True
