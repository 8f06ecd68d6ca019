"""Frames of a finance episode for ``render_mode="rgb_array"``, drawn with sekai's NumPy canvas.

A single finance env, or each sub-env of its native vector env, keeps an ``EpisodeTrace``
of the state attributes its ``Picture`` names, one row per reset or step, and draws it as
three stacked charts: the price (a line per asset) with the trades marked where the holding
changes (green buys, red sells), the equity curve against its starting level, and the holding
(position, inventory or shares left as bars; portfolio weights as a line per asset and cash).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from sekai._raster import Canvas, Plot

WIDTH, HEIGHT = 600, 400
_GRID: tuple[int, int, int] = (200, 200, 200)
_BUY: tuple[int, int, int] = (30, 150, 60)
_SELL: tuple[int, int, int] = (210, 50, 40)
_EQUITY: tuple[int, int, int] = (110, 60, 170)
_PALETTE: tuple[tuple[int, int, int], ...] = (
    (31, 90, 180),
    (230, 130, 20),
    (40, 160, 160),
    (200, 60, 140),
    (120, 120, 30),
    (90, 90, 90),
)


@dataclass(frozen=True)
class Picture:
    """Which state attributes a finance env's frame shows: ``price``, ``equity`` and
    ``holding`` (its trades are the steps where a one-dimensional holding changes)."""

    price: str
    equity: str
    holding: str

    @property
    def names(self) -> tuple[str, str, str]:
        return (self.price, self.equity, self.holding)


class EpisodeTrace:
    """The rows of one episode's picture values, from its reset to its last step."""

    def __init__(self, picture: Picture) -> None:
        self.picture = picture
        self.rows: list[tuple[Any, ...]] = []

    def start(self, read: Callable[[str], Any]) -> None:
        """Begin a new episode with the state ``read`` gives (a name -> value function)."""
        self.rows = []
        self.record(read)

    def record(self, read: Callable[[str], Any]) -> None:
        """Add the state after a step."""
        self.rows.append(tuple(np.array(read(name), np.float64) for name in self.picture.names))

    def draw(self) -> np.ndarray | None:
        """The episode so far as a ``(HEIGHT, WIDTH, 3)`` uint8 frame; None before a reset."""
        if not self.rows:
            return None
        canvas = Canvas(WIDTH, HEIGHT)
        self.draw_on(canvas, 10)
        return canvas.to_array()

    def draw_on(self, canvas: Canvas, top: float) -> None:
        """Draw the three charts on ``canvas`` from ``top`` down, ``HEIGHT - 20`` pixels."""
        price, equity, holding = (np.array(column) for column in zip(*self.rows, strict=True))
        steps = np.arange(len(price), dtype=np.float64)
        x_range = (0.0, max(len(price) - 1, 1))
        upper = Plot(canvas, (40, top, 590, top + 170), x_range, _span(price))
        _draw_price(upper, steps, price, holding)
        middle = Plot(canvas, (40, top + 185, 590, top + 290), x_range, _span(equity))
        middle.axes()
        if equity.ndim == 1:
            middle.hline(float(equity[0]), _GRID)
            _draw_lines(middle, steps, equity, (_EQUITY,))
        else:
            _draw_lines(middle, steps, equity, _PALETTE)
        lower = Plot(canvas, (40, top + 305, 590, top + 380), x_range, _span(holding, zero=True))
        _draw_holding(lower, steps, holding)


def draw_market(
    trace: EpisodeTrace, bids: list[tuple[float, int]], asks: list[tuple[float, int]], tick: float
) -> np.ndarray | None:
    """A limit order book market's frame, ``(HEIGHT + 120, WIDTH, 3)``: the book's levels
    (price, lots) above the session so far; None before a reset."""
    if not trace.rows:
        return None
    canvas = Canvas(WIDTH, HEIGHT + 120)
    draw_book(canvas, 10, bids, asks, tick)
    trace.draw_on(canvas, 130)
    return canvas.to_array()


def draw_book(
    canvas: Canvas,
    top: float,
    bids: list[tuple[float, int]],
    asks: list[tuple[float, int]],
    tick: float,
) -> None:
    """The book's levels as bars on ``canvas`` from ``top``, 100 pixels high: volume against
    price, bids green and asks red."""
    prices = [price for price, _ in bids + asks]
    volumes = [volume for _, volume in bids + asks]
    x_range = (min(prices, default=0.0) - tick, max(prices, default=0.0) + tick)
    plot = Plot(canvas, (40, top, 590, top + 100), x_range, (0.0, max(volumes, default=1)))
    plot.axes()
    for levels, color in ((bids, _BUY), (asks, _SELL)):
        if levels:
            x, height = np.array(levels, np.float64).T
            plot.bars(x, height, color, tick * 0.8)


def _draw_price(plot: Plot, steps: np.ndarray, price: np.ndarray, holding: np.ndarray) -> None:
    plot.axes()
    _draw_lines(plot, steps, price, _PALETTE)
    if holding.ndim == 1 and price.ndim == 1 and len(steps) > 1:
        change = np.diff(holding)
        bought, sold = np.flatnonzero(change > 0) + 1, np.flatnonzero(change < 0) + 1
        plot.markers(steps[bought], price[bought], _BUY)
        plot.markers(steps[sold], price[sold], _SELL)


def _draw_holding(plot: Plot, steps: np.ndarray, holding: np.ndarray) -> None:
    plot.axes()
    plot.hline(0.0, _GRID)
    if holding.ndim > 1:
        _draw_lines(plot, steps, holding, _PALETTE)
        return
    keep = _thin(len(steps), int(plot.right - plot.left))
    width = max(steps[-1] - steps[0], 1.0) / max(len(keep), 1)
    long, short = holding[keep] > 0, holding[keep] < 0
    plot.bars(steps[keep][long], holding[keep][long], _BUY, width)
    plot.bars(steps[keep][short], holding[keep][short], _SELL, width)


def _draw_lines(
    plot: Plot, steps: np.ndarray, values: np.ndarray, colors: tuple[tuple[int, int, int], ...]
) -> None:
    """One line per column of ``values`` (a single line when it is one-dimensional), thinned
    to about one point per pixel."""
    keep = _thin(len(steps), int(plot.right - plot.left))
    columns = values.reshape(len(values), -1)
    for j in range(columns.shape[1]):
        plot.line(steps[keep], columns[keep, j], colors[j % len(colors)])


def _thin(n: int, pixels: int) -> np.ndarray:
    """At most ``pixels`` evenly spread indices of ``n`` points, the first and last included."""
    if n <= pixels:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, pixels).round().astype(np.int64))


def _span(values: np.ndarray, *, zero: bool = False) -> tuple[float, float]:
    """The finite range of ``values`` (taking 0 in when ``zero``), for a chart's axis."""
    finite = values[np.isfinite(values)]
    if zero:
        finite = np.append(finite, 0.0)
    if finite.size == 0:
        return (0.0, 0.0)
    return (float(finite.min()), float(finite.max()))
