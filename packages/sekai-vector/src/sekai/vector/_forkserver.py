"""The forkserver's Unix socket, whatever TMPDIR is.

multiprocessing's forkserver listens on a Unix socket under TMPDIR
(``$TMPDIR/pymp-XXXXXXXX/listener-XXXXXXXX``). A Unix socket path holds at most 107 bytes, so
under a long TMPDIR (nox's ``.nox/<session>/tmp`` in a deep checkout, CI runners, macOS's
``/var/folders/...``) starting a worker fails with ``OSError: AF_UNIX path too long``. A
ProcVecEnv then holds a ``ForkserverLease``: the forkserver is started from a short private
directory (mode 0700, under /tmp), which is removed, and the forkserver stopped, when the last
ProcVecEnv holding it closes.
"""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from multiprocessing import forkserver, process
from typing import Any

_MAX_PATH_BYTES = 107  # a Unix socket path's sun_path holds 108 bytes, with the closing NUL
_LISTENER_BYTES = len("/listener-") + 8  # the socket, in multiprocessing's temp dir
_PYMP_BYTES = len("/pymp-") + 8  # multiprocessing's temp dir under TMPDIR, until it is made
_SHORT_PARENTS = ("/tmp", "/var/tmp")
# Names the short directory to the forkserver process, which removes it when it exits.
_DIRECTORY_VARIABLE = "SEKAI_FORKSERVER_DIRECTORY"

_lock = threading.Lock()
_directory: str | None = None  # the short directory, while a lease holds it
_holders = 0


class ForkserverLease:
    """A ProcVecEnv's hold on a forkserver whose socket path fits, whatever TMPDIR is.

    Holds nothing when multiprocessing's own path is short enough. Otherwise the leases share
    one short private directory; ``release`` by the last one stops the forkserver (which listens
    there) and removes the directory.
    """

    def __init__(self) -> None:
        global _directory, _holders
        self.held = False
        with _lock:
            if _directory is None:
                if not _path_too_long():
                    return
                _directory = tempfile.mkdtemp(prefix="sekai-", dir=short_parent())  # mode 0700
            _holders += 1
            self.held = True

    def ensure_running(self) -> None:
        """Start the forkserver if it is not running: from the short directory, when held."""
        if not self.held:
            return
        with _lock, _multiprocessing_temp_dir(_directory), _told_to_forkserver(_directory):
            forkserver.ensure_running()

    def release(self) -> None:
        """Let go (again: nothing); the last holder stops the forkserver and removes the
        directory, unless other child processes may still need the forkserver: then that
        waits for this process's exit."""
        global _directory, _holders
        if not self.held:
            return
        self.held = False
        with _lock:
            _holders -= 1
            if _holders or _directory is None:
                return
            directory, _directory = _directory, None
            if multiprocessing.active_children():  # stopping it would wait for them to exit
                atexit.register(shutil.rmtree, directory, ignore_errors=True)
                return
            server: Any = forkserver._forkserver  # type: ignore[attr-defined]
            address = server._forkserver_address
            if address is not None and os.path.dirname(address) == directory:
                with contextlib.suppress(FileNotFoundError):  # it removed its directory itself
                    server._stop()  # private, as what it undoes: the server listens on a path
            shutil.rmtree(directory, ignore_errors=True)


def remove_at_forkserver_exit() -> None:
    """In a forkserver started from a short directory: remove it when the forkserver exits.

    The forkserver exits once its parent and every worker are gone, so the directory goes even
    when the parent was killed and could not release it. Its workers, forked from it, inherit
    the exit handler but leave with ``os._exit``, which runs none.
    """
    directory = os.environ.pop(_DIRECTORY_VARIABLE, None)
    if directory is not None:
        atexit.register(shutil.rmtree, directory, ignore_errors=True)


def short_parent() -> str:
    """A directory for paths that must stay short, such as Unix sockets: /tmp or /var/tmp.

    OSError, naming TMPDIR, when neither is a writable directory.
    """
    for parent in _SHORT_PARENTS:
        if os.path.isdir(parent) and os.access(parent, os.W_OK | os.X_OK):
            return parent
    raise OSError(
        f"TMPDIR ({tempfile.gettempdir()!r}) is too long for the forkserver's Unix socket and "
        f"none of {_SHORT_PARENTS} is a writable directory: set TMPDIR to a shorter one"
    )


def _path_too_long() -> bool:
    """Whether the forkserver's socket would pass the length limit of a Unix socket path."""
    base = _config().get("tempdir")
    if base is not None:
        length = len(os.fsencode(base))
    else:
        length = len(os.fsencode(tempfile.gettempdir())) + _PYMP_BYTES
    return length + _LISTENER_BYTES > _MAX_PATH_BYTES


def _config() -> dict[str, Any]:
    """multiprocessing's per-process settings, where ``util.get_temp_dir`` keeps its choice."""
    config: dict[str, Any] = process.current_process()._config  # type: ignore[attr-defined]
    return config


@contextlib.contextmanager
def _told_to_forkserver(directory: str | None) -> Iterator[None]:
    """A forkserver started in this block inherits ``directory`` in its environment."""
    os.environ[_DIRECTORY_VARIABLE] = str(directory)
    try:
        yield
    finally:
        del os.environ[_DIRECTORY_VARIABLE]


@contextlib.contextmanager
def _multiprocessing_temp_dir(directory: str | None) -> Iterator[None]:
    """multiprocessing's temp dir, where the forkserver puts its socket, is ``directory``."""
    config = _config()
    missing = object()
    previous = config.get("tempdir", missing)
    config["tempdir"] = directory
    try:
        yield
    finally:
        if previous is missing:
            del config["tempdir"]
        else:
            config["tempdir"] = previous
