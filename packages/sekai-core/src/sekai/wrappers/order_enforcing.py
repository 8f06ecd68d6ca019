"""OrderEnforcing: refuse to step an env that has not been reset."""

from __future__ import annotations

from typing import Any

from sekai.core import ActType, ObsType, ResetResult
from sekai.wrappers.base import Wrapper


class ResetNeeded(RuntimeError):
    """Raised when an env is stepped before its first reset."""


class OrderEnforcing(Wrapper[ObsType, ActType]):
    """Raise :class:`ResetNeeded` on ``step`` until ``reset`` has been called once."""

    has_reset = False

    def after_reset(self, result: ResetResult) -> ResetResult:
        self.has_reset = True
        return result

    def before_step(self, action: Any) -> Any:
        if not self.has_reset:
            raise ResetNeeded(f"call reset() before step() on {self.env!r}")
        return action
