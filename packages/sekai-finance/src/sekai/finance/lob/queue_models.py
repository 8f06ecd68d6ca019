"""Queue models for depth-only data: where an agent's resting limit order stands in the queue
of its price level when the data shows the level's size only, not its orders.

A queue model is a plug-in object, like the finance models: a frozen dataclass, checked when
made, that ``DepthReplay-v0`` takes as ``queue_model=`` (or by name, see ``queue_model``). Each
estimates ``front``, the lots ahead of the order: it starts at the level's size when the order
arrives; a trade at the order's price takes its size off ``front``, and a trade beyond
``front`` fills the order; a change of the level's size moves ``front`` as the model says.
The formulas are hftbacktest 2.4's (``RiskAdverseQueueModel``, ``ProbQueueModel`` with its
``Probability`` functions), computed in the same float operations, in numba
(``_queue_kernel``); the methods here run them one at a time, for inspection and tests.

- ``RiskAverse``: only trades advance the order; a smaller level caps ``front`` at its size.
- The probabilistic models (``PowerProbQueue``, ``LogProbQueue`` and hftbacktest's variants 2
  and 3): a decrease of the level (less the lots traded there since the last change, counted
  once) is split between ahead of and behind the order; ``prob(front, back)`` is the share
  behind, ``back`` the level's lots behind the order. An increase only caps ``front`` at the
  new size.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

__all__ = [
    "LogProbQueue",
    "LogProbQueue2",
    "PowerProbQueue",
    "PowerProbQueue2",
    "PowerProbQueue3",
    "QueueModel",
    "RiskAverse",
    "queue_model",
]


class QueueModel:
    """What the queue models share: the compiled arithmetic, selected by ``code``."""

    code: ClassVar[int]
    name: ClassVar[str]

    @property
    def exponent(self) -> float:
        """The model's exponent (0.0 for the models that have none)."""
        return 0.0

    def after_depth(
        self, front: float, cum_trade: float, prev_qty: float, new_qty: float
    ) -> tuple[float, float]:
        """``(front, cum_trade)`` after the order's level went from ``prev_qty`` to
        ``new_qty`` lots (``cum_trade``: lots traded at the level since its last change)."""
        from sekai.finance.lob._queue_kernel import after_depth

        result: tuple[float, float] = after_depth(
            self.code, self.exponent, float(front), float(cum_trade), float(prev_qty),
            float(new_qty),
        )  # fmt: skip
        return result

    def after_trade(self, front: float, cum_trade: float, qty: float) -> tuple[float, float]:
        """``(front, cum_trade)`` after a trade of ``qty`` lots at the order's price."""
        from sekai.finance.lob._queue_kernel import after_trade

        result: tuple[float, float] = after_trade(float(front), float(cum_trade), float(qty))
        return result

    def filled(self, front: float) -> tuple[int, float]:
        """``(lots, front)``: the lots the order may fill now (what trades went beyond
        ``front``, rounded half away from zero) and ``front`` after (0 when it fills)."""
        from sekai.finance.lob._queue_kernel import filled

        result: tuple[int, float] = filled(float(front))
        return result


@dataclasses.dataclass(frozen=True)
class RiskAverse(QueueModel):
    """Advance only on trades at the order's price; a level that shrinks below ``front``
    caps it (hftbacktest's ``risk_adverse_queue_model``)."""

    code: ClassVar[int] = 0
    name: ClassVar[str] = "risk_averse"


@dataclasses.dataclass(frozen=True)
class _Exponent(QueueModel):
    n: float = 2.0

    def __post_init__(self) -> None:
        n = self.n
        if isinstance(n, bool) or not isinstance(n, int | float) or not math.isfinite(n) or n < 0:
            raise ValueError(
                f"{type(self).__name__}: the exponent n must be a finite number >= 0, got {n!r}"
            )
        object.__setattr__(self, "n", float(n))

    @property
    def exponent(self) -> float:
        return self.n


@dataclasses.dataclass(frozen=True)
class PowerProbQueue(_Exponent):
    """``prob = back**n / (back**n + front**n)`` (hftbacktest's ``power_prob_queue_model``)."""

    code: ClassVar[int] = 1
    name: ClassVar[str] = "power"


@dataclasses.dataclass(frozen=True)
class PowerProbQueue2(_Exponent):
    """``prob = back**n / (back + front)**n`` (``power_prob_queue_model2``)."""

    code: ClassVar[int] = 2
    name: ClassVar[str] = "power2"


@dataclasses.dataclass(frozen=True)
class PowerProbQueue3(_Exponent):
    """``prob = 1 - (front / (front + back))**n`` (``power_prob_queue_model3``)."""

    code: ClassVar[int] = 3
    name: ClassVar[str] = "power3"


@dataclasses.dataclass(frozen=True)
class LogProbQueue(QueueModel):
    """``prob = log(1 + back) / (log(1 + back) + log(1 + front))``
    (``log_prob_queue_model``)."""

    code: ClassVar[int] = 4
    name: ClassVar[str] = "log"


@dataclasses.dataclass(frozen=True)
class LogProbQueue2(QueueModel):
    """``prob = log(1 + back) / log(1 + back + front)`` (``log_prob_queue_model2``)."""

    code: ClassVar[int] = 5
    name: ClassVar[str] = "log2"


_BY_NAME: dict[str, type[QueueModel]] = {
    model.name: model
    for model in (RiskAverse, PowerProbQueue, PowerProbQueue2, PowerProbQueue3, LogProbQueue,
                  LogProbQueue2)
}  # fmt: skip


def queue_model(model: Any) -> QueueModel:
    """``model`` as a queue model: a ``QueueModel`` as is, or a name (``"risk_averse"``,
    ``"power"``, ``"power2"``, ``"power3"`` with the default exponent 2, ``"log"``,
    ``"log2"``); anything else is a ValueError listing the names."""
    if isinstance(model, QueueModel):
        return model
    if isinstance(model, str) and model in _BY_NAME:
        return _BY_NAME[model]()
    raise ValueError(
        f"queue_model must be a QueueModel or one of {', '.join(map(repr, _BY_NAME))}, "
        f"got {model!r}"
    )
