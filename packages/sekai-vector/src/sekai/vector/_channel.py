"""A length-prefixed message channel over a socket, for ProcVecEnv's parent and workers.

multiprocessing's Connection does the same framing in Python with several reads per message;
on the step hot path that costs more than the message itself, so this one reads a message with
two C-level receives and writes it with one send.
"""

from __future__ import annotations

import os
import socket
import struct
import time
from typing import Any

_HEADER = struct.Struct("!Q")


class Channel:
    """One end of a bidirectional byte-message channel; picklable for a child process."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    @classmethod
    def pair(cls) -> tuple[Channel, Channel]:
        """Two connected ends."""
        first, second = socket.socketpair()
        return cls(first), cls(second)

    def send(self, message: bytes) -> None:
        """Send one message; OSError (such as BrokenPipeError) if the other end is gone."""
        self.sock.sendall(_HEADER.pack(len(message)) + message)

    def recv(self) -> bytes:
        """Receive one whole message; EOFError if the other end closed."""
        (size,) = _HEADER.unpack(self._recv_exactly(_HEADER.size))
        return self._recv_exactly(size)

    def _recv_exactly(self, size: int) -> bytes:
        data = self.sock.recv(size, socket.MSG_WAITALL)
        while len(data) < size:  # a huge message, or one cut short by EOF
            chunk = self.sock.recv(size - len(data), socket.MSG_WAITALL)
            if not chunk:
                raise EOFError("the other end of the channel closed")
            data += chunk
        return data

    def fileno(self) -> int:
        """The socket's descriptor, so ``multiprocessing.connection.wait`` can watch it."""
        return self.sock.fileno()

    def close(self) -> None:
        self.sock.close()


def poll_yielding(readable: Any, seconds: float) -> bool:
    """Whether ``readable`` (a ``select.poll`` of one channel) has a message within ``seconds``,
    checked in a loop that yields the CPU on each turn (a process waiting for a core gets it at
    once) rather than sleeping: waking a sleeping process costs more on a virtual machine than
    the short waits this is for. It yields at least once."""
    until = time.perf_counter() + seconds
    while not readable.poll(0):
        os.sched_yield()
        if time.perf_counter() > until:
            return False
    return True
