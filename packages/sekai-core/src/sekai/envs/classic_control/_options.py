"""Reset options of the classic-control envs: the bounds of their uniform start distributions."""

from __future__ import annotations

from typing import Any


def reset_options(options: dict[str, Any] | None, **defaults: float) -> dict[str, float]:
    """The options ``reset`` accepts, as floats, with ``defaults`` for those not given."""
    if options is None:
        return defaults
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise ValueError(f"unknown reset options {unknown}; this env accepts {sorted(defaults)}")
    values = {**defaults, **options}
    try:
        return {name: float(value) for name, value in values.items()}
    except (TypeError, ValueError):
        raise ValueError(f"reset options must be numbers, got {options!r}") from None


def uniform_bounds(options: dict[str, Any] | None, low: float, high: float) -> tuple[float, float]:
    """The ``low``/``high`` reset options (defaults ``low`` and ``high``), checked for order."""
    bounds = reset_options(options, low=low, high=high)
    if bounds["low"] > bounds["high"]:
        raise ValueError(f"reset option low={bounds['low']} must not exceed high={bounds['high']}")
    return bounds["low"], bounds["high"]
