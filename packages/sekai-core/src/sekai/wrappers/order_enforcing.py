"""OrderEnforcing: the episode lifecycle rule, which make() applies to every single-agent env.

The rule, the same as a VecEnv's: ``step()`` before the first ``reset()`` raises
``ResetNeeded``; ``step()`` after the episode ended (terminated or truncated) warns once per
episode, since what the env returns until the next ``reset()`` is undefined; ``reset()`` and
``step()`` after ``close()`` raise ``EnvClosed`` (``close()`` itself may be called again).
"""

from __future__ import annotations

from typing import Any

from sekai._warnings import warn
from sekai.core import ActType, EnvClosed, ObsType, ResetResult, StepResult
from sekai.wrappers.base import Wrapper, _inline_step_hooks


class ResetNeeded(RuntimeError):
    """Raised when an env is stepped before its first reset."""


class OrderEnforcing(Wrapper[ObsType, ActType]):
    """Enforce the episode lifecycle (see the module docstring) on ``env``.

    ``has_reset`` is True once ``reset`` has been called; ``closed`` once ``close`` has.
    """

    has_reset = False
    closed = False
    _ended: str | None = None  # how the current episode ended, until it is warned about

    def before_reset(self, seed: int | None, options: dict[str, Any] | None) -> None:
        if self.closed:
            raise EnvClosed()

    def after_reset(self, result: ResetResult) -> ResetResult:
        self.has_reset = True
        self._ended = None
        return result

    def before_step(self, action: Any) -> Any:
        if self.closed:
            raise EnvClosed()
        if not self.has_reset:
            raise ResetNeeded(f"call reset() before step() on {self.env!r}")
        if self._ended:
            warn(
                f"step() called after the episode {self._ended}; call reset() first: what "
                "the env returns until then is undefined"
            )
            self._ended = ""  # warned: not again this episode
        return action

    def after_step(self, result: StepResult) -> StepResult:
        if self._ended is None and (result[2] or result[3]):  # terminated or truncated
            self._ended = "terminated" if result[2] else "was truncated"
        return result

    @_inline_step_hooks  # make() puts this wrapper around every env: every step pays it
    def step(self, action: ActType) -> StepResult:
        if self._ended is not None or self.closed or not self.has_reset:
            return self.after_step(self.env.step(self.before_step(action)))
        result = self.env.step(action)
        if result[2] or result[3]:
            self._ended = "terminated" if result[2] else "was truncated"
        return result

    def close(self) -> None:
        self.closed = True
        self.env.close()  # every time: an inner close() that fails the second time shows
