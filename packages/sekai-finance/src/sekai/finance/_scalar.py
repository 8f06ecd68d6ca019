"""What the single envs' scalar fast paths share."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from sekai.core import StepResult

# StepResult's own __new__ is Python code; building the tuple directly is 1 µs faster a step
step_result: Callable[[tuple[Any, ...]], StepResult] = functools.partial(tuple.__new__, StepResult)
