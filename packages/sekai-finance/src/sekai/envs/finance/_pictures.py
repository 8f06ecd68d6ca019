"""Frames of a finance episode for ``render_mode="rgb_array"``, drawn with sekai's NumPy canvas.

A single finance env, or each sub-env of its native vector env, keeps an ``EpisodeTrace``
of the state attributes its ``Picture`` names, one row per reset or step, and draws it as
three stacked charts sharing one x axis (the step, or the date when the env's data has
dates): the price with the trades marked where the holding changes (green buys, red sells),
or for several assets each asset's price over its first price in the episode, so they share
one scale; the equity curve against its starting level; the holding (position, inventory or
shares left as bars; portfolio weights as stacked areas, cash last, or as lines when some are
negative). Every chart has a title, tick values and light grid lines; a legend names the
assets (or the trade markers) in their colours.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sekai._raster import Canvas, Plot, format_ticks, nice_ticks, text_width

Color = tuple[int, int, int]
WIDTH, HEIGHT = 600, 400
_TEXT: Color = (40, 40, 40)
_GRID: Color = (232, 232, 232)
_LEVEL: Color = (170, 170, 170)
_BUY: Color = (30, 150, 60)
_SELL: Color = (210, 50, 40)
_EQUITY: Color = (110, 60, 170)
_CASH: Color = (190, 190, 190)
_MARKET: Color = (80, 80, 80)  # a price that is no holder's, beside holders in the palette
_PALETTE: tuple[Color, ...] = (
    (31, 90, 180),
    (230, 130, 20),
    (40, 160, 160),
    (200, 60, 140),
    (120, 120, 30),
    (140, 86, 60),
    (120, 100, 200),
    (70, 70, 70),
    (60, 140, 80),
    (180, 60, 60),
)
_LEFT, _RIGHT = 52, 590  # the charts' box; tick labels go left of it


@dataclass(frozen=True)
class Picture:
    """Which state attributes a finance env's frame shows: ``price``, ``equity`` and
    ``holding`` (its trades are the steps where a one-dimensional holding changes); ``time``,
    if given, is the bar index of each step into the env's data, which dates the x axis when
    the env has dates (``env._dates``, datetime64, one per bar); ``agents``, if given, names
    the columns of a two-dimensional equity and holding, ``{agents}_0``, ``{agents}_1``...,
    in the legend."""

    price: str
    equity: str
    holding: str
    time: str | None = None
    agents: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        names = (self.price, self.equity, self.holding)
        return names if self.time is None else (*names, self.time)


class EpisodeTrace:
    """The rows of one episode's picture values, from its reset to its last step. ``env``
    (the single env, or a native vector env's template) gives the dates (``_dates``) and
    asset names (``_symbols``) when its data has them, read at each draw."""

    def __init__(self, picture: Picture, env: Any = None) -> None:
        self.picture = picture
        self.env = env
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
        self.draw_on(canvas, 8)
        return canvas.to_array()

    def draw_on(self, canvas: Canvas, top: float) -> None:
        """Draw the three charts, their legend and the shared x axis on ``canvas`` from
        ``top`` down, 380 pixels."""
        columns = [np.array(column) for column in zip(*self.rows, strict=True)]
        price, equity, holding = columns[:3]
        steps = np.arange(len(price), dtype=np.float64)
        x_range = (0.0, max(len(price) - 1, 1))
        ticks, labels, axis = self._x_axis(steps, columns[3] if len(columns) > 3 else None)
        rebased = price.ndim > 1
        if rebased:
            price = price / price[:1]
        upper = Plot(canvas, (_LEFT, top + 14, _RIGHT, top + 160), x_range, _span(price))
        middle = Plot(canvas, (_LEFT, top + 180, _RIGHT, top + 266), x_range, _span(equity))
        cash = price.ndim > 1 and holding.ndim > 1 and holding.shape[1] == price.shape[1] + 1
        # stacked when no weight is short (beyond a float rounding of 0, such as -1e-17)
        stacked = cash and bool((holding >= -1e-9).all())
        if stacked:
            holding = np.maximum(holding, 0.0)
        low_range = (0.0, max(1.0, float(holding.sum(axis=1).max()))) if stacked else None
        lower = Plot(
            canvas,
            (_LEFT, top + 286, _RIGHT, top + 350),
            x_range,
            low_range or _span(holding, zero=True),
        )
        for plot, count in ((upper, 5), (middle, 3), (lower, 3)):
            plot.x_ticks(ticks, labels if plot is lower else None, _TEXT, _GRID)
            plot.y_ticks(count, _TEXT, _GRID)
        if rebased:
            upper.hline(1.0, _LEVEL)
        agents = price.ndim == 1 and holding.ndim > 1  # one price, several holders
        _draw_price(upper, steps, price, holding, (_MARKET,) if agents else _PALETTE)
        upper.title(_name(self.picture.price) + (" / first price" if rebased else ""), _TEXT)
        self._legend(middle if agents else upper, price, holding)
        _draw_equity(middle, steps, equity, _name(self.picture.equity))
        _draw_holding(lower, steps, holding, _name(self.picture.holding), cash, stacked)
        canvas.text(((_LEFT + _RIGHT) / 2, top + 368), axis, _TEXT, align="center")

    def _x_axis(
        self, steps: np.ndarray, bars: np.ndarray | None
    ) -> tuple[np.ndarray, list[str], str]:
        """The shared x axis's ticks, their labels and its name: dates when the env has them
        and the picture knows each step's bar, else step numbers."""
        dates = getattr(self.env, "_dates", None)
        if dates is None or bars is None:
            ticks = nice_ticks(0.0, max(steps[-1], 1.0), 7, integer=True)
            return ticks, [str(int(t)) for t in ticks], "step"
        index = bars.astype(np.int64)
        dates = np.asarray(dates)
        if index.max() >= len(dates):
            raise ValueError(
                f"the env's dates end at bar {len(dates) - 1}, but the episode reached bar "
                f"{int(index.max())}: _dates must hold one date per bar of the data"
            )
        ticks, labels = _date_ticks(dates[index], _RIGHT - _LEFT)
        return ticks, labels, "date"

    def _legend(self, plot: Plot, price: np.ndarray, holding: np.ndarray) -> None:
        """Right of ``plot``'s title: the trade markers for one asset and one holder, the
        agents for several, else the assets (and cash, when the holding has a column for it)
        in their colours."""
        if price.ndim == 1 and holding.ndim == 1:
            entries = [("buy", _BUY, True), ("sell", _SELL, True)]
        elif price.ndim == 1:
            agents = self.picture.agents or "column"
            entries = [(f"{agents}_{i}", _color(i), False) for i in range(holding.shape[1])]
        else:
            n = price.shape[1]
            symbols = getattr(self.env, "_symbols", None)
            names = [str(s) for s in symbols] if symbols is not None else []
            if len(names) != n:
                names = [f"asset {i + 1}" for i in range(n)]
            entries = [(name, _color(i), False) for i, name in enumerate(names)]
            if holding.ndim > 1 and holding.shape[1] == n + 1:
                entries.append(("cash", _CASH, False))
        _draw_legend(plot, entries)


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
    y_range = (0.0, max(volumes, default=1))
    plot = Plot(canvas, (_LEFT, top + 12, _RIGHT, top + 92), x_range, y_range, margin=0.0)
    plot.y_ticks(2, _TEXT, _GRID, integer=True)
    ticks = nice_ticks(*x_range, 6)
    plot.x_ticks(ticks, format_ticks(ticks), _TEXT)
    for levels, color in ((bids, _BUY), (asks, _SELL)):
        if levels:
            x, height = np.array(levels, np.float64).T
            plot.bars(x, height, color, tick * 0.8)
    plot.axes()
    plot.title("book: lots by price", _TEXT)
    _draw_legend(plot, [("bids", _BUY, False), ("asks", _SELL, False)])


def _draw_price(
    plot: Plot,
    steps: np.ndarray,
    price: np.ndarray,
    holding: np.ndarray,
    colors: tuple[Color, ...],
) -> None:
    _draw_lines(plot, steps, price, colors)
    if holding.ndim == 1 and price.ndim == 1 and len(steps) > 1:
        change = np.diff(holding)
        bought, sold = np.flatnonzero(change > 0) + 1, np.flatnonzero(change < 0) + 1
        plot.markers(steps[bought], price[bought], _BUY)
        plot.markers(steps[sold], price[sold], _SELL)
    plot.axes()


def _draw_equity(plot: Plot, steps: np.ndarray, equity: np.ndarray, name: str) -> None:
    """The equity curve(s) against the first level, titled with the last value and, for one
    curve starting above zero, the return so far."""
    if equity.ndim == 1:
        plot.hline(float(equity[0]), _LEVEL)
        _draw_lines(plot, steps, equity, (_EQUITY,))
        first, last = float(equity[0]), float(equity[-1])
        name += f"  {_figure(last)}"
        if first > 0 and np.isfinite(last):
            name += f"  ({last / first - 1:+.2%} since start)"
    else:
        _draw_lines(plot, steps, equity, _PALETTE)
    plot.axes()
    plot.title(name, _TEXT)


def _draw_holding(
    plot: Plot, steps: np.ndarray, holding: np.ndarray, name: str, cash: bool, stacked: bool
) -> None:
    """The holding: bars for one number (green long, red short); for weights with cash last,
    stacked areas when none is negative, else lines; lines for anything else."""
    plot.hline(0.0, _LEVEL)
    if stacked:
        colors = [_color(j) for j in range(holding.shape[1] - 1)] + [_CASH]
        plot.stacked_areas(steps, holding, colors)
        name += ", stacked"
    elif cash:
        _draw_lines(plot, steps, holding[:, :-1], _PALETTE)
        _draw_lines(plot, steps, holding[:, -1:], (_CASH,))
    elif holding.ndim > 1:
        _draw_lines(plot, steps, holding, _PALETTE)
    else:
        keep = _thin(len(steps), int(plot.right - plot.left))
        width = max(steps[-1] - steps[0], 1.0) / max(len(keep), 1)
        long, short = holding[keep] > 0, holding[keep] < 0
        plot.bars(steps[keep][long], holding[keep][long], _BUY, width)
        plot.bars(steps[keep][short], holding[keep][short], _SELL, width)
        name += f"  {_figure(float(holding[-1]))}"
    plot.axes()
    plot.title(name, _TEXT)


def _draw_legend(plot: Plot, entries: Sequence[tuple[str, Color, bool]]) -> None:
    """``entries`` (name, colour, drawn as a dot rather than a square) in a row ending at the
    chart's right edge, on its title's line; numbered 1, 2, ... (but cash) instead of named
    when the names do not fit."""
    room = plot.right - (plot.left + 150)
    if _legend_width([name for name, _, _ in entries]) > room:
        entries = [
            (name if name == "cash" else str(i + 1), color, dot)
            for i, (name, color, dot) in enumerate(entries)
        ]
    x = max(plot.right - _legend_width([name for name, _, _ in entries]), plot.left + 150)
    y = plot.top - 12
    canvas = plot.canvas
    for name, color, dot in entries:
        if dot:
            canvas.circle((x + 3, y + 3), 3.0, color)
        else:
            canvas.rectangle((x, y), (x + 7, y + 6), color)
        canvas.text((x + 12, y), name, _TEXT)
        x += 12 + text_width(name) + 10


def _legend_width(names: Sequence[str]) -> int:
    """Pixels a legend of ``names`` takes: a swatch, a gap and the name each, 10 between."""
    return sum(12 + text_width(name) for name in names) + 10 * max(len(names) - 1, 0)


def _draw_lines(
    plot: Plot, steps: np.ndarray, values: np.ndarray, colors: tuple[Color, ...]
) -> None:
    """One line per column of ``values`` (a single line when it is one-dimensional), thinned
    to about one point per pixel."""
    keep = _thin(len(steps), int(plot.right - plot.left))
    columns = values.reshape(len(values), -1)
    for j in range(columns.shape[1]):
        plot.line(steps[keep], columns[keep, j], colors[j % len(colors)])


def _color(j: int) -> Color:
    return _PALETTE[j % len(_PALETTE)]


def _figure(value: float) -> str:
    """A value for a chart's title: six significant digits, or whole with thousands
    separators from 100,000 up (no exponents)."""
    return f"{value:,.0f}" if abs(value) >= 1e5 else f"{value:.6g}"


def _name(attribute: str) -> str:
    return attribute.replace("_", " ")


# calendar periods for date ticks, coarsest first: (numpy unit, units per period, offset, label);
# the week's offset makes weeks start on Mondays (numpy counts days from a Thursday)
_PERIODS = (
    ("Y", 10, 0, "%Y"),
    ("Y", 5, 0, "%Y"),
    ("Y", 2, 0, "%Y"),
    ("Y", 1, 0, "%Y"),
    ("M", 6, 0, "%Y-%m"),
    ("M", 3, 0, "%Y-%m"),
    ("M", 1, 0, "%Y-%m"),
    ("D", 7, 3, "%Y-%m-%d"),
    ("D", 1, 0, "%Y-%m-%d"),
    ("h", 6, 0, "%m-%d %H:00"),
    ("h", 1, 0, "%m-%d %H:00"),
    ("m", 15, 0, "%d %H:%M"),
    ("m", 1, 0, "%d %H:%M"),
)


def _date_ticks(dates: np.ndarray, pixels: float) -> tuple[np.ndarray, list[str]]:
    """Ticks at the steps where a calendar period begins (a decade, year, quarter, month,
    week, day, hour...): the finest periods whose labels fit an axis ``pixels`` wide, spread
    evenly, labelled by the date of the step's bar; the first step alone, labelled by its
    day, when none begins."""
    for unit, every, offset, form in _PERIODS[::-1]:
        period = (dates.astype(f"datetime64[{unit}]").astype(np.int64) + offset) // every
        starts = np.flatnonzero(np.diff(period) != 0) + 1
        room = pixels / (text_width(_strftime(dates[:1], form)[0]) + 16)
        if 0 < len(starts) <= room:
            return starts.astype(np.float64), _strftime(dates[starts], form)
    return np.zeros(1), _strftime(dates[:1], "%Y-%m-%d")


def _strftime(dates: np.ndarray, form: str) -> list[str]:
    return [date.strftime(form) for date in dates.astype("datetime64[s]").tolist()]


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
