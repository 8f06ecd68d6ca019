"""The restart limit of the self-healing vector backends (``restart=`` of ProcVecEnv and RayVecEnv).

One policy counts every restart of a VecEnv's workers, whichever worker died: a crash loop then
ends in VecEnvWorkerError instead of restarting workers forever. It also derives the seeds that
reset a rebuilt worker's sub-envs, so that a run with crashes can be replayed.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Sequence

import numpy as np

from sekai.checks import is_whole_number
from sekai.vector.base import _child_seed
from sekai.vector.errors import VecEnvWorkerError

_DEFAULT = (3, 60.0)  # restarts allowed in any window of that many seconds


class RestartPolicy:
    """At most ``count`` restarts of dead workers in any window of ``seconds``."""

    def __init__(self, count: int, seconds: float) -> None:
        self.count = count
        self.seconds = seconds
        self._times: collections.deque[float] = collections.deque()  # of the recent restarts
        self.restarts = 0  # so far, of any worker
        self._seeds: list[int | None] = []  # each sub-env's last seed, once reset

    @classmethod
    def from_option(cls, restart: bool | tuple[int, float]) -> RestartPolicy | None:
        """The policy a backend's ``restart`` argument asks for; None when workers do not heal.

        ``True`` allows 3 restarts in any 60 seconds, ``(count, seconds)`` sets the limit.
        """
        if restart is True:
            return cls(*_DEFAULT)
        if restart is False:
            return None
        if (
            isinstance(restart, tuple)
            and len(restart) == 2
            and is_whole_number(restart[0])
            and restart[0] >= 1
            and isinstance(restart[1], int | float)
            and not isinstance(restart[1], bool)
            and restart[1] > 0
        ):
            return cls(int(restart[0]), float(restart[1]))
        raise ValueError(
            "restart must be False, True (3 restarts in any 60 s) or (count, seconds) with "
            f"count >= 1 and seconds > 0, got {restart!r}"
        )

    def allow(self) -> bool:
        """Whether a dead worker may be replaced now; a True answer counts as one restart."""
        now = time.monotonic()
        while self._times and self._times[0] <= now - self.seconds:
            self._times.popleft()
        if len(self._times) >= self.count:
            return False
        self._times.append(now)
        self.restarts += 1
        return True

    def note_reset(self, seeds: Sequence[int | None]) -> None:
        """Remember the seeds a reset gave the sub-envs (None: the sub-env keeps its last)."""
        if not self._seeds:
            self._seeds = list(seeds)
            return
        self._seeds = [
            old if new is None else new for old, new in zip(self._seeds, seeds, strict=True)
        ]

    def seeds(self, ranks: range) -> list[int | None]:
        """The seeds that reset the sub-envs ``ranks`` of a worker rebuilt by the latest restart.

        Derived from each sub-env's last seed, the number of restarts so far and its rank
        (``SeedSequence((seed, restarts, rank))``), so that a run with the same kills replays
        exactly; None for a sub-env that was never seeded.
        """
        last = self._seeds or [None] * ranks.stop
        return [
            None if seed is None else _child_seed(np.random.SeedSequence((seed, self.restarts, i)))
            for i, seed in zip(ranks, last[ranks.start : ranks.stop], strict=True)
        ]

    def give_up(self, died: VecEnvWorkerError) -> VecEnvWorkerError:
        """``died``, the error of a worker that may not be replaced, saying why not."""
        died.args = (
            f"{died}; workers were restarted {self.count} times within {self.seconds} s "
            f"already, so restart={(self.count, self.seconds)} gives up",
        )
        return died
