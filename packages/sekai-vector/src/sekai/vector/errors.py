"""The exceptions every vector backend raises."""

from __future__ import annotations

from sekai.core import EnvClosed


class VecEnvClosed(EnvClosed):
    """Raised by reset(), step() and the other commands of a VecEnv after close()."""

    def __init__(self, message: str = "This VecEnv has been closed.") -> None:
        super().__init__(message)


class VecEnvWorkerError(Exception):
    """A sub-env raised, or the worker running it died.

    ``rank`` is the index of the failing sub-env, ``exc_type`` the name of the exception type
    (a str, since the type itself may not exist in this process) and ``remote_traceback`` the
    formatted traceback from where it happened.
    """

    def __init__(
        self, message: str, *, rank: int, exc_type: str, remote_traceback: str = ""
    ) -> None:
        super().__init__(message)
        self.rank = rank
        self.exc_type = exc_type
        self.remote_traceback = remote_traceback

    def __reduce__(self) -> tuple[object, ...]:
        # keyword-only arguments need help to survive pickling between processes
        return (
            _rebuild_worker_error,
            (str(self), self.rank, self.exc_type, self.remote_traceback),
        )


def _rebuild_worker_error(
    message: str, rank: int, exc_type: str, remote_traceback: str
) -> VecEnvWorkerError:
    return VecEnvWorkerError(
        message, rank=rank, exc_type=exc_type, remote_traceback=remote_traceback
    )
