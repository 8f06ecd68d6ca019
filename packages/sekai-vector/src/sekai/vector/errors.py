"""The exceptions every vector backend raises."""

from __future__ import annotations

import builtins
import functools

from sekai.core import EnvClosed


class VecEnvClosed(EnvClosed):
    """Raised by reset(), step() and the other commands of a VecEnv after close()."""

    def __init__(self, message: str = "This VecEnv has been closed.") -> None:
        super().__init__(message)


class VecEnvWorkerError(Exception):
    """A sub-env raised, or the worker running it died.

    ``rank`` is the index of the failing sub-env, ``exc_type`` the name of the exception type
    (a str, since the type itself may not exist in this process) and ``remote_traceback`` the
    formatted traceback from where it happened, also chained as the ``__cause__`` so that it is
    printed with the error (as ``concurrent.futures`` does).

    Use ``worker_error`` to make one: when the sub-env raised a built-in exception (say
    AttributeError), the error is also an instance of that type, so ``except AttributeError``
    catches it on a worker backend as it does on SyncVecEnv.
    """

    def __init__(
        self, message: str, *, rank: int, exc_type: str, remote_traceback: str = ""
    ) -> None:
        super().__init__(message)
        self.rank = rank
        self.exc_type = exc_type
        self.remote_traceback = remote_traceback
        if remote_traceback:
            self.__cause__ = _RemoteTraceback(remote_traceback)

    def __str__(self) -> str:  # not KeyError's quoted repr when mixed with a KeyError
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> tuple[object, ...]:
        # keyword-only arguments need help to survive pickling between processes
        return (
            _rebuild_worker_error,
            (str(self), self.rank, self.exc_type, self.remote_traceback),
        )


def worker_error(
    message: str, *, rank: int, exc_type: str, remote_traceback: str = ""
) -> VecEnvWorkerError:
    """A VecEnvWorkerError that is also the built-in exception ``exc_type`` names, if any."""
    error_class = _worker_error_class(exc_type)
    return error_class(message, rank=rank, exc_type=exc_type, remote_traceback=remote_traceback)


@functools.cache
def _worker_error_class(exc_type: str) -> type[VecEnvWorkerError]:
    builtin = getattr(builtins, exc_type, None)
    if (
        not isinstance(builtin, type)
        or not issubclass(builtin, Exception)
        or issubclass(builtin, StopIteration | StopAsyncIteration)  # turned into RuntimeError
    ):  # when raised inside a generator or coroutine
        return VecEnvWorkerError
    try:
        mixed: type[VecEnvWorkerError] = type(
            f"VecEnvWorkerError[{exc_type}]",
            (VecEnvWorkerError, builtin),
            {"__module__": __name__, "__reduce__": VecEnvWorkerError.__reduce__},
        )
        mixed("probe", rank=0, exc_type=exc_type)
    except Exception:  # a layout that does not combine, or a constructor that needs more
        return VecEnvWorkerError  # (UnicodeDecodeError): the plain error says the type
    return mixed


class _RemoteTraceback(Exception):
    """The traceback from the worker, shown as the cause of a VecEnvWorkerError."""

    def __init__(self, traceback: str) -> None:
        super().__init__(traceback)
        self.traceback = traceback

    def __str__(self) -> str:
        return f'\n"""\n{self.traceback.rstrip()}\n"""'


def _rebuild_worker_error(
    message: str, rank: int, exc_type: str, remote_traceback: str
) -> VecEnvWorkerError:
    return worker_error(message, rank=rank, exc_type=exc_type, remote_traceback=remote_traceback)
