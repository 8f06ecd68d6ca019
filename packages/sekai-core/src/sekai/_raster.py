"""A small RGB canvas drawn with NumPy alone: the renderer behind ``render_mode="rgb_array"``.

Coordinates are floats in pixels with pixel centres on whole numbers: pixel ``(x, y)`` covers
``[x - 0.5, x + 0.5] x [y - 0.5, y + 0.5]``, as pygame counts them, so a shape drawn at the
coordinates gymnasium's renderers use lands on the same pixels. ``y`` grows downwards, or
upwards with ``y_up=True`` (then ``y = 0`` is the bottom row, as in gymnasium's pictures before
their final flip).

Every shape is drawn by computing how much of each pixel of its bounding box it covers (1 or 0
without anti-aliasing, a fraction with it) and blending its colour in by that amount, so shapes
compose in drawing order like a painter's. A batch of shapes of one colour (``circles``,
``rectangles``) composes the same way, exactly as if drawn one after another, and the
segments of a polyline as one stroke, each pixel covered as much as its nearest segment covers
it. A batch is computed with array operations over every pixel of every shape's box at once, and
blended into the pixels it covers only: a chart of hundreds of points costs a few array
operations, not hundreds of Python calls. Filled shapes follow pygame's convention: a pixel
whose centre is inside or on the edge is painted, and the anti-aliased ramp lies in the pixel
just outside. Lines are centred on their path. Example::

    canvas = Canvas(600, 400, y_up=True)
    canvas.line((0, 100), (600, 100), BLACK)
    canvas.polygon([(275, 85), (275, 115), (325, 115), (325, 85)], BLACK)
    canvas.circle((300, 107), 5, (129, 132, 203))
    frame = canvas.to_array()  # uint8, shape (400, 600, 3), row 0 at the top
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

Color = tuple[int, int, int]
Point = tuple[float, float]
Points = Sequence[Point] | np.ndarray  # an array of shape (n, 2) will do
ArrayLike = float | np.ndarray

WHITE: Color = (255, 255, 255)
BLACK: Color = (0, 0, 0)


class Canvas:
    """An RGB image of ``width`` x ``height`` pixels, filled with ``background``.

    ``antialias`` blends shape edges by the fraction of each pixel they cover; without it a
    pixel is painted when its centre is inside the shape.
    """

    def __init__(
        self,
        width: int,
        height: int,
        background: Color = WHITE,
        *,
        antialias: bool = True,
        y_up: bool = False,
    ) -> None:
        if width < 1 or height < 1:
            raise ValueError(f"a canvas needs at least one pixel, got {width} x {height}")
        self.width = int(width)
        self.height = int(height)
        self.antialias = antialias
        self.y_up = y_up
        self._pixels = np.empty((self.height, self.width, 3), np.uint8)
        self.fill(background)

    # -- shapes ----------------------------------------------------------------------------------
    def fill(self, color: Color) -> None:
        """Paint the whole canvas ``color``."""
        row = np.tile(np.array(_check_color(color), np.uint8), self.width)
        self._pixels.reshape(self.height, -1)[:] = row  # whole rows: a fast copy

    def polygon(self, points: Points, color: Color) -> None:
        """Fill the polygon through ``points`` (at least three; even-odd rule when it crosses
        itself)."""
        vertices = self._to_pixels(points)
        if len(vertices) < 3:
            raise ValueError(f"a polygon needs at least 3 points, got {len(vertices)}")
        box = self._box(vertices.min(axis=0), vertices.max(axis=0))
        if box is None:
            return
        x0, y0, x1, y1 = box
        px = np.arange(x0, x1, dtype=np.float64)[None, :]
        py = np.arange(y0, y1, dtype=np.float64)[:, None]
        distance = np.full((y1 - y0, x1 - x0), np.inf)
        for a, b in zip(vertices, np.roll(vertices, -1, axis=0), strict=True):
            np.minimum(distance, _segment_distance(px, py, *a, *b), out=distance)
        depth = np.where(_inside_polygon(vertices, px, py), distance, -distance)
        self._blend(x0, y0, self._fill_coverage(depth), color)

    def rectangle(self, corner: Point, opposite: Point, color: Color) -> None:
        """Fill the axis-aligned rectangle with the corners ``corner`` and ``opposite``."""
        self.rectangles([corner], [opposite], color)

    def rectangles(self, corners: Points, opposites: Points, color: Color) -> None:
        """Fill the axis-aligned rectangles from ``corners[i]`` to ``opposites[i]``."""
        first, second = self._to_pixels(corners), self._to_pixels(opposites)
        if len(first) != len(second):
            raise ValueError(f"{len(first)} corners but {len(second)} opposite corners")
        low, high = np.minimum(first, second), np.maximum(first, second)
        if len(low) <= 64 and (low == np.round(low)).all() and (high == np.round(high)).all():
            # corners on pixel centres cover whole pixels and nothing beyond: copy the colour
            rgb = _check_color(color)
            for (x0, y0), (x1, y1) in zip(low.astype(np.int64), high.astype(np.int64), strict=True):
                self._pixels[max(y0, 0) : max(y1 + 1, 0), max(x0, 0) : max(x1 + 1, 0)] = rgb
            return
        shape, px, py = self._box_pixels(low, high)
        # the signed distance to the edge, as polygon() measures it, one axis at a time
        dx = np.minimum(px - low[shape, 0], high[shape, 0] - px)
        dy = np.minimum(py - low[shape, 1], high[shape, 1] - py)
        outside = np.hypot(np.maximum(-dx, 0.0), np.maximum(-dy, 0.0))
        depth = np.where((dx >= 0) & (dy >= 0), np.minimum(dx, dy), -outside)
        self._paint(px, py, self._fill_coverage(depth), color, stacked=True)

    def circle(self, center: Point, radius: float, color: Color) -> None:
        """Fill the disc of ``radius`` pixels around ``center`` (its edge pixels included, as
        pygame's filled circle)."""
        self.circles([center], radius, color)

    def circles(self, centers: Points, radius: float, color: Color) -> None:
        """Fill a disc of ``radius`` pixels around each of ``centers``."""
        if radius < 0:
            raise ValueError(f"radius must not be negative, got {radius}")
        middle = self._to_pixels(centers)
        shape, px, py = self._box_pixels(middle - (radius + 1.0), middle + (radius + 1.0))
        distance = np.hypot(px - middle[shape, 0], py - middle[shape, 1])
        self._paint(px, py, self._fill_coverage(radius - distance), color, stacked=True)

    def line(self, start: Point, end: Point, color: Color, width: float = 1.0) -> None:
        """Draw a straight line ``width`` pixels wide, with round ends."""
        self.polyline([start, end], color, width)

    def polyline(
        self, points: Points, color: Color, width: float = 1.0, *, closed: bool = False
    ) -> None:
        """Draw connected line segments through ``points`` (back to the first if ``closed``),
        ``width`` pixels wide; the joints are drawn once, not darkened by overlapping ends."""
        vertices = self._to_pixels(points)
        if len(vertices) < 2:
            raise ValueError(f"a polyline needs at least 2 points, got {len(vertices)}")
        if width <= 0:
            raise ValueError(f"width must be positive, got {width}")
        if closed:
            vertices = np.vstack([vertices, vertices[:1]])
        half = width / 2
        reach = half + 0.5  # coverage ramps to 0 there (see _line_coverage): nothing beyond
        ax, ay, bx, by = vertices[:-1, 0], vertices[:-1, 1], vertices[1:, 0], vertices[1:, 1]
        x0, _, x1, _ = self._pixel_bounds(
            np.minimum(ax, bx) - reach, 0.0, np.maximum(ax, bx) + reach, 0.0
        )
        segment, px = _ranges(x0, x1)  # the columns of each segment's box
        ax, ay, bx, by = ax[segment], ay[segment], bx[segment], by[segment]
        # the rows of each column that can be within reach: around the part of the segment
        # whose x is within reach of the column's (all of it when the segment is vertical)
        dx, dy = bx - ax, by - ay
        vertical = dx == 0
        run = np.where(vertical, 1.0, dx)
        near = np.clip((px - reach - ax) / run, 0.0, 1.0)
        far = np.clip((px + reach - ax) / run, 0.0, 1.0)
        y_near = ay + np.where(vertical, 0.0, near) * dy
        y_far = ay + np.where(vertical, 1.0, far) * dy
        _, y0, _, y1 = self._pixel_bounds(
            0.0, np.minimum(y_near, y_far) - reach, 0.0, np.maximum(y_near, y_far) + reach
        )
        column, py = _ranges(y0, y1)
        segment, px = segment[column], px[column]
        a_x, a_y, b_x, b_y = ax[column], ay[column], bx[column], by[column]
        depth = half - _segment_distance(px, py, a_x, a_y, b_x, b_y)
        self._paint(px, py, self._line_coverage(depth), color)

    def text(self, position: Point, text: str, color: Color, *, align: str = "left") -> None:
        """Write ``text`` in the canvas's 5 x 7 pixel font, ``position`` being the top of its
        capitals and, by ``align``, its left end, centre or right end (``"left"``,
        ``"center"``, ``"right"``); rounded to whole pixels, so letters stay sharp. A
        character the font lacks is drawn as ``?``; the parts outside the canvas are cut."""
        if align not in _ALIGNS:
            raise ValueError(f"align must be one of {list(_ALIGNS)}, got {align!r}")
        if not text:
            return
        mask = _text_mask(text)
        (x, y) = self._to_pixels([position])[0]
        x0 = int(np.floor(x - _ALIGNS[align] * mask.shape[1] + 0.5))
        y0 = int(np.floor(y + 0.5))
        left, top = max(x0, 0), max(y0, 0)
        right = min(x0 + mask.shape[1], self.width)
        bottom = min(y0 + mask.shape[0], self.height)
        if left >= right or top >= bottom:
            return
        cut = mask[top - y0 : bottom - y0, left - x0 : right - x0]
        self._pixels[top:bottom, left:right][cut] = _check_color(color)

    # -- output ----------------------------------------------------------------------------------
    def to_array(self) -> np.ndarray:
        """The image as a new uint8 array of shape ``(height, width, 3)``, row 0 at the top."""
        return self._pixels.copy()

    # -- internals -------------------------------------------------------------------------------
    def _to_pixels(self, points: Points) -> np.ndarray:
        """``points`` as an (n, 2) float array in array coordinates (y down)."""
        array = np.array(points, dtype=np.float64).reshape(-1, 2)
        if not np.isfinite(array).all():
            raise ValueError(f"coordinates must be finite, got {points!r}")
        if self.y_up:
            array[:, 1] = (self.height - 1) - array[:, 1]
        return array

    def _box_pixels(
        self, low: np.ndarray, high: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every pixel that can touch shape ``i``, whose extent is ``low[i]..high[i]`` (arrays
        of shape (n, 2)), clipped to the canvas, for every shape at once: flat arrays of the
        shape's index and the pixel's ``x`` and ``y`` (as floats), box after box."""
        x0, y0, x1, y1 = self._pixel_bounds(low[:, 0], low[:, 1], high[:, 0], high[:, 1])
        shape, x = _ranges(x0, x1)
        column, y = _ranges(y0[shape], y1[shape])
        return shape[column], x[column], y

    def _pixel_bounds(
        self, left: ArrayLike, top: ArrayLike, right: ArrayLike, bottom: ArrayLike
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The pixel ranges ``[x0, x1) x [y0, y1)`` that can touch ``left..right`` by
        ``top..bottom`` (arrays), clipped to the canvas, as ``_box`` computes one."""
        x0 = np.maximum(np.floor(np.subtract(left, 0.5)), 0).astype(np.int64)
        y0 = np.maximum(np.floor(np.subtract(top, 0.5)), 0).astype(np.int64)
        x1 = np.minimum(np.ceil(np.add(right, 0.5)) + 1, self.width).astype(np.int64)
        y1 = np.minimum(np.ceil(np.add(bottom, 0.5)) + 1, self.height).astype(np.int64)
        return x0, y0, x1, y1

    def _paint(
        self,
        px: np.ndarray,
        py: np.ndarray,
        coverage: np.ndarray,
        color: Color,
        *,
        stacked: bool = False,
    ) -> None:
        """Blend ``color`` into the pixels ``(px, py)`` by ``coverage``. A pixel listed more
        than once takes its largest coverage (one stroke), or with ``stacked`` each of its
        coverages in the order listed, blended and rounded one after another, exactly as
        separate calls for its shapes would."""
        drawn = coverage > 0
        if not drawn.any():
            return
        px, py, coverage = px[drawn], py[drawn], coverage[drawn]
        flat = py.astype(np.int64) * self.width + px.astype(np.int64)
        if stacked:
            for layer in _layers(flat):
                self._mix(flat[layer], coverage[layer], color)
            return
        pixels, index = _numbered(flat)
        area = np.zeros(len(pixels))
        area[index] = coverage  # right where a pixel is listed once; the rest follows
        shared = np.bincount(index, minlength=len(pixels))[index] > 1
        area[index[shared]] = 0.0
        np.maximum.at(area, index[shared], coverage[shared])
        covered = np.flatnonzero(area)
        self._mix(pixels[covered], area[covered], color)

    def _box(self, low: np.ndarray, high: np.ndarray) -> tuple[int, int, int, int] | None:
        """The pixel range ``[x0, x1) x [y0, y1)`` that can touch ``low..high``, clipped to the
        canvas; None when it lies outside."""
        x0 = max(int(np.floor(low[0] - 0.5)), 0)
        y0 = max(int(np.floor(low[1] - 0.5)), 0)
        x1 = min(int(np.ceil(high[0] + 0.5)) + 1, self.width)
        y1 = min(int(np.ceil(high[1] + 0.5)) + 1, self.height)
        if x0 >= x1 or y0 >= y1:
            return None
        return x0, y0, x1, y1

    def _fill_coverage(self, depth: np.ndarray) -> np.ndarray:
        """A filled shape's coverage of each pixel from ``depth``, how far the pixel's centre
        lies inside the edge (negative outside): full from the edge in, ramping down over the
        pixel outside it with anti-aliasing."""
        if self.antialias:
            return np.clip(depth + 1.0, 0.0, 1.0)
        return (depth >= 0).astype(np.float64)

    def _line_coverage(self, depth: np.ndarray) -> np.ndarray:
        """A line's coverage of each pixel from ``depth``, half the width minus the distance
        to the path: a one-pixel ramp centred on the line's edge with anti-aliasing."""
        if self.antialias:
            return np.clip(depth + 0.5, 0.0, 1.0)
        return (depth >= 0).astype(np.float64)

    def _blend(self, x0: int, y0: int, coverage: np.ndarray, color: Color) -> None:
        """Mix ``color`` into the pixels from ``(x0, y0)`` by ``coverage`` (0..1 per pixel)."""
        rows, columns = np.nonzero(coverage)
        self._mix((rows + y0) * self.width + columns + x0, coverage[rows, columns], color)

    def _mix(self, index: np.ndarray, alpha: np.ndarray, color: Color) -> None:
        """Mix ``color`` into the pixels at ``index`` (into the flat image) by ``alpha``."""
        rgb = np.array(_check_color(color), np.float64)
        pixels = self._pixels.reshape(-1, 3)  # a view
        alpha = alpha[:, None]
        mixed = pixels[index] * (1.0 - alpha) + rgb * alpha
        pixels[index] = np.rint(mixed).astype(np.uint8)

    def _fill_columns(self, x0: int, edges: np.ndarray, colors: Sequence[Color]) -> None:
        """Fill bands of colour in the pixel columns from ``x0``: in column ``x0 + i``, band
        ``j`` lies between the pixel heights ``edges[i, j]`` and ``edges[i, j + 1]`` (y down)
        and is painted ``colors[j]``, blended by the share of each pixel it covers (by whether
        it covers the pixel's centre without anti-aliasing). Bands must not overlap."""
        x1 = min(x0 + len(edges), self.width)
        if x0 < 0 or x1 <= x0:
            raise ValueError(f"columns {x0}..{x0 + len(edges)} lie outside the canvas")
        edges = edges[: x1 - x0]
        low = np.minimum(edges[:, :-1], edges[:, 1:])[:, None, :]  # (columns, 1, bands)
        high = np.maximum(edges[:, :-1], edges[:, 1:])[:, None, :]
        y0 = max(int(np.floor(low.min() - 0.5)), 0)
        y1 = min(int(np.ceil(high.max() + 0.5)) + 1, self.height)
        if y1 <= y0:
            return
        rows = np.arange(y0, y1, dtype=np.float64)[None, :, None]
        if self.antialias:
            share = np.minimum(rows + 0.5, high) - np.maximum(rows - 0.5, low)
            cover = np.clip(share, 0.0, 1.0)
        else:
            cover = ((rows >= low) & (rows < high)).astype(np.float64)
        rgb = np.array([_check_color(c) for c in colors], np.float64)  # (bands, 3)
        block = self._pixels[y0:y1, x0:x1].transpose(1, 0, 2)  # (columns, rows, 3), a view
        mixed = block * (1.0 - cover.sum(axis=2, keepdims=True)) + cover @ rgb
        block[:] = np.rint(mixed).astype(np.uint8)


_ALIGNS = {"left": 0.0, "center": 0.5, "right": 1.0}


def _check_color(color: Color) -> Color:
    if len(color) != 3 or not all(0 <= channel <= 255 for channel in color):
        raise ValueError(f"a colour is 3 channels (red, green, blue) in 0..255, got {color!r}")
    return color


def _inside_polygon(vertices: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Whether each point ``(x, y)`` (broadcast) lies inside the polygon, by the even-odd rule."""
    inside = np.zeros(np.broadcast_shapes(x.shape, y.shape), dtype=bool)
    for (ax, ay), (bx, by) in zip(vertices, np.roll(vertices, -1, axis=0), strict=True):
        if ay == by:
            continue  # a horizontal edge crosses no horizontal ray
        crosses = (ay > y) != (by > y)
        x_at_y = ax + (y - ay) * (bx - ax) / (by - ay)
        inside ^= crosses & (x < x_at_y)
    return inside


def _layers(index: np.ndarray) -> list[np.ndarray]:
    """The positions of ``index`` (pixels, some listed more than once) in layers: the first
    listing of every pixel, then the second of those listed twice or more, and so on, each
    layer in the order listed, so no layer names a pixel twice."""
    order = np.argsort(index, kind="stable")
    ranked = index[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    if len(starts) == len(index):  # every pixel listed once: a single layer
        return [np.arange(len(index))]
    group = np.repeat(starts, np.diff(np.r_[starts, len(index)]))
    rank = np.empty(len(index), np.int64)
    rank[order] = np.arange(len(index)) - group
    return [np.flatnonzero(rank == r) for r in range(int(rank.max()) + 1)]


def _numbered(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``index`` (pixels of the flat image, some listed more than once)
    as ``(pixels, position)``, ``pixels[position] == index``: a range of pixels when they lie
    close together, else the sorted distinct ones."""
    low, high = int(index.min()), int(index.max())
    if high - low < 4 * len(index):
        return np.arange(low, high + 1), index - low
    return np.unique(index, return_inverse=True)


def _ranges(starts: np.ndarray, stops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every whole number from ``starts[i]`` up to ``stops[i]`` (exclusive; none when
    ``stops[i] <= starts[i]``), for every ``i`` at once: flat arrays of ``i`` and the number
    (as a float)."""
    count = np.maximum(stops - starts, 0)
    owner = np.repeat(np.arange(len(count)), count)
    first = np.repeat(np.cumsum(count) - count, count)
    return owner, (np.arange(len(owner)) - first + starts[owner]).astype(np.float64)


def _segment_distance(
    px: np.ndarray,
    py: np.ndarray,
    ax: float | np.ndarray,
    ay: float | np.ndarray,
    bx: float | np.ndarray,
    by: float | np.ndarray,
) -> np.ndarray:
    """Distance from each point ``(px, py)`` to the segment from ``(ax, ay)`` to ``(bx, by)``
    (one segment, or one per point: all arguments broadcast)."""
    dx, dy = bx - ax, by - ay
    length2 = dx * dx + dy * dy
    along = (px - ax) * dx + (py - ay) * dy  # 0 where the segment is a point
    t = np.clip(along / np.where(length2 == 0, 1.0, length2), 0.0, 1.0)
    return np.hypot(px - (ax + t * dx), py - (ay + t * dy))


class Plot:
    """A chart area of a canvas: draws in data coordinates, ``x`` rightwards and ``y`` upwards
    within ``x_range`` and ``y_range``, mapped onto the pixel box ``(left, top, right, bottom)``
    (y down, as the canvas without ``y_up``). A degenerate range (low == high) is widened so a
    flat series sits in the middle. Example::

        plot = Plot(canvas, (10, 10, 590, 190), (0, 99), (prices.min(), prices.max()))
        plot.axes()
        plot.line(np.arange(100), prices, BLUE)
    """

    def __init__(
        self,
        canvas: Canvas,
        box: tuple[float, float, float, float],
        x_range: tuple[float, float],
        y_range: tuple[float, float],
        *,
        margin: float = 0.05,
    ) -> None:
        if canvas.y_up:
            raise ValueError("a Plot draws on a canvas with y growing downwards (y_up=False)")
        self.canvas = canvas
        self.left, self.top, self.right, self.bottom = (float(v) for v in box)
        if not (self.left < self.right and self.top < self.bottom):
            raise ValueError(f"box must be (left, top, right, bottom) with room inside, got {box}")
        self.x_low, self.x_high = _widen(*x_range, margin=0.0)
        self.y_low, self.y_high = _widen(*y_range, margin=margin)

    def to_pixels(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Data points as an (n, 2) array of canvas pixels."""
        x = np.asarray(x, np.float64)
        y = np.asarray(y, np.float64)
        px = self.left + (x - self.x_low) / (self.x_high - self.x_low) * (self.right - self.left)
        py = self.bottom - (y - self.y_low) / (self.y_high - self.y_low) * (self.bottom - self.top)
        return np.column_stack(np.broadcast_arrays(px, py))

    def axes(self, color: Color = (120, 120, 120)) -> None:
        """Draw the box around the chart area, one pixel wide."""
        left, top, right, bottom = self.left, self.top, self.right, self.bottom
        starts = [(left, top), (left, bottom), (left, top), (right, top)]
        ends = [(right, top), (right, bottom), (left, bottom), (right, bottom)]
        self.canvas.rectangles(starts, ends, color)  # no width: as a line one pixel wide

    def hline(self, y: float, color: Color, width: float = 1.0) -> None:
        """A horizontal reference line at data height ``y`` across the chart, if ``y`` is in it."""
        if self.y_low <= y <= self.y_high:
            (a, b) = self.to_pixels(np.array([self.x_low, self.x_high]), np.array([y, y]))
            self.canvas.line(tuple(a), tuple(b), color, width)

    def line(self, x: np.ndarray, y: np.ndarray, color: Color, width: float = 1.5) -> None:
        """A line through the points ``(x, y)``; a single point is drawn as a dot."""
        points = self.to_pixels(x, y)
        if len(points) == 1:
            self.canvas.circle(tuple(points[0]), width / 2, color)
        elif len(points) > 1:
            self.canvas.polyline(points, color, width)

    def markers(self, x: np.ndarray, y: np.ndarray, color: Color, radius: float = 3.0) -> None:
        """A filled dot at each point ``(x, y)``."""
        self.canvas.circles(self.to_pixels(x, y), radius, color)

    def bars(
        self, x: np.ndarray, height: np.ndarray, color: Color, width: float, base: float = 0.0
    ) -> None:
        """Vertical bars ``width`` data units wide centred on ``x``, from ``base`` to ``height``,
        cut at the chart's left and right edges."""
        x = np.asarray(x, np.float64)
        px, top = self.to_pixels(x, height).T
        bottom = self.to_pixels(x, np.full_like(x, base))[:, 1]
        half = width / 2 * (self.right - self.left) / (self.x_high - self.x_low)
        left, right = np.maximum(px - half, self.left), np.minimum(px + half, self.right)
        drawn = (top != bottom) & (left < right)
        self.canvas.rectangles(
            np.column_stack([left, top])[drawn], np.column_stack([right, bottom])[drawn], color
        )

    def title(self, text: str, color: Color = BLACK) -> None:
        """``text`` above the chart's top left corner."""
        self.canvas.text((self.left, self.top - CAP_HEIGHT - 5), text, color)

    def y_ticks(
        self,
        count: int,
        color: Color = BLACK,
        grid: Color | None = None,
        *,
        integer: bool = False,
    ) -> np.ndarray:
        """Label about ``count`` round values (whole numbers with ``integer``) of the y axis
        left of the chart, with light ``grid`` lines across it at each; the values labelled."""
        ticks = nice_ticks(self.y_low, self.y_high, count, integer=integer)
        heights = np.round(self.to_pixels(np.full(len(ticks), self.x_low), ticks)[:, 1])
        if grid is not None and len(ticks):
            lefts = np.column_stack([np.full(len(ticks), self.left), heights])
            rights = np.column_stack([np.full(len(ticks), self.right), heights])
            self.canvas.rectangles(lefts, rights, grid)  # no width: one sharp row each
        for label, height in zip(format_ticks(ticks), heights, strict=True):
            self.canvas.text((self.left - 4, height - CAP_HEIGHT // 2), label, color, align="right")
        return ticks

    def x_ticks(
        self,
        ticks: np.ndarray,
        labels: Sequence[str] | None,
        color: Color = BLACK,
        grid: Color | None = None,
    ) -> None:
        """Light ``grid`` lines down the chart at the data ``ticks``, and ``labels`` (if
        given) centred below them, moved in where they would run off the canvas; a label that
        would touch the one before it is left out."""
        xs = np.round(self.to_pixels(ticks, np.full(len(ticks), self.y_low))[:, 0])
        if grid is not None and len(xs):
            tops = np.column_stack([xs, np.full(len(xs), self.top)])
            bottoms = np.column_stack([xs, np.full(len(xs), self.bottom)])
            self.canvas.rectangles(tops, bottoms, grid)
        end = -np.inf  # where the last label drawn ends
        for label, x in zip(labels or (), xs, strict=False):
            half = text_width(label) / 2
            x = min(max(x, half), self.canvas.width - half)
            if x - half < end + TEXT_ADVANCE:
                continue
            self.canvas.text((x, self.bottom + 4), label, color, align="center")
            end = x + half

    def stacked_areas(self, x: np.ndarray, values: np.ndarray, colors: Sequence[Color]) -> None:
        """Areas stacked up from 0, column ``j`` of ``values`` (one row per ``x``, increasing)
        in ``colors[j]``, straight between the points, each pixel coloured by the share of it
        each area covers. Values must not be negative."""
        values = np.asarray(values, np.float64).reshape(len(x), -1)
        if (values < 0).any():
            raise ValueError("stacked areas need values >= 0; draw negative ones as lines")
        if len(x) < 2:
            return
        columns = np.arange(np.ceil(self.left), np.floor(self.right) + 1)
        at = self.x_low + (columns - self.left) / (self.right - self.left) * (
            self.x_high - self.x_low
        )
        within = (at >= x[0]) & (at <= x[-1])
        if not within.any():
            return
        columns, at = columns[within], at[within]
        stacked = np.cumsum(np.column_stack([np.zeros(len(x)), values]), axis=1)
        edges = np.column_stack([np.interp(at, x, level) for level in stacked.T])
        heights = self.bottom - (edges - self.y_low) / (self.y_high - self.y_low) * (
            self.bottom - self.top
        )
        self.canvas._fill_columns(int(columns[0]), np.clip(heights, self.top, self.bottom), colors)


def nice_ticks(low: float, high: float, count: int, *, integer: bool = False) -> np.ndarray:
    """About ``count`` round values (multiples of 1, 2, 2.5 or 5 times a power of ten; whole
    numbers with ``integer``) from ``low`` to ``high``, for an axis."""
    if not high > low:
        return np.array([low], np.float64)
    raw = (high - low) / max(count, 1)
    magnitude = 10.0 ** np.floor(np.log10(raw))
    steps = (1.0, 2.0, 5.0, 10.0) if integer else (1.0, 2.0, 2.5, 5.0, 10.0)
    step = next(m * magnitude for m in steps if m * magnitude >= raw * (1 - 1e-9))
    if integer:
        step = max(round(step), 1)
    first, last = np.ceil(low / step - 1e-9), np.floor(high / step + 1e-9)
    return np.arange(first, last + 1) * step + 0.0  # + 0.0: no -0


def format_ticks(values: np.ndarray) -> list[str]:
    """Tick labels with as many decimals as the values need, all alike; in thousands (``k``)
    when the largest is 100,000 or more, in millions (``M``) from 1,000,000, so labels stay
    short."""
    values = np.asarray(values, np.float64)
    if len(values) == 0:
        return []
    largest = float(np.abs(values).max())
    scale, suffix = (1e6, "M") if largest >= 1e6 else (1e3, "k") if largest >= 1e5 else (1, "")
    scaled = values / scale
    decimals = next(
        (d for d in range(7) if np.allclose(scaled, np.round(scaled, d), rtol=0, atol=1e-9)), 6
    )
    scaled = np.where(np.round(scaled, decimals) == 0, 0.0, scaled)  # no "-0.0"
    return [f"{v:.{decimals}f}{suffix}" for v in scaled]


def _widen(low: float, high: float, *, margin: float) -> tuple[float, float]:
    """``(low, high)`` grown by ``margin`` of its span on each side; widened around the value
    when it is a single point. ValueError when it is not finite or reversed."""
    low, high = float(low), float(high)
    if not (np.isfinite(low) and np.isfinite(high)) or low > high:
        raise ValueError(f"a range needs finite low <= high, got ({low}, {high})")
    if low == high:
        half = max(abs(low) * 0.01, 1.0) if margin else 0.5
        return low - half, high + half
    pad = (high - low) * margin
    return low - pad, high + pad


# -- text ----------------------------------------------------------------------------------------
# A 5 x 7 pixel font of our own: each glyph is its rows from the top of a capital letter down,
# '#' painted, '.' not; lower-case letters with a descender (g, j, p, q, y) and the comma take
# two more rows below the baseline. Characters go 6 pixels apart (one blank column).
_GLYPH_ROWS = {
    " ": "..... ..... ..... ..... ..... ..... .....",
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.",
    "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####",
    "3": "####. ....# ....# .###. ....# ....# ####.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
    "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": "..##. .#... #.... ####. #...# #...# .###.",
    "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.",
    "9": ".###. #...# #...# .#### ....# ...#. .##..",
    "A": ".###. #...# #...# ##### #...# #...# #...#",
    "B": "####. #...# #...# ####. #...# #...# ####.",
    "C": ".###. #...# #.... #.... #.... #...# .###.",
    "D": "####. #...# #...# #...# #...# #...# ####.",
    "E": "##### #.... #.... ####. #.... #.... #####",
    "F": "##### #.... #.... ####. #.... #.... #....",
    "G": ".###. #...# #.... #.### #...# #...# .####",
    "H": "#...# #...# #...# ##### #...# #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "J": "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "K": "#...# #..#. #.#.. ##... #.#.. #..#. #...#",
    "L": "#.... #.... #.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #.#.# #...# #...# #...#",
    "N": "#...# #...# ##..# #.#.# #..## #...# #...#",
    "O": ".###. #...# #...# #...# #...# #...# .###.",
    "P": "####. #...# #...# ####. #.... #.... #....",
    "Q": ".###. #...# #...# #...# #.#.# #..#. .##.#",
    "R": "####. #...# #...# ####. #.#.. #..#. #...#",
    "S": ".#### #.... #.... .###. ....# ....# ####.",
    "T": "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# #...# #...# .###.",
    "V": "#...# #...# #...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.",
    "X": "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "Y": "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..",
    "Z": "##### ....# ...#. ..#.. .#... #.... #####",
    "a": "..... ..... .###. ....# .#### #...# .####",
    "b": "#.... #.... #.##. ##..# #...# #...# ####.",
    "c": "..... ..... .###. #.... #.... #...# .###.",
    "d": "....# ....# .##.# #..## #...# #...# .####",
    "e": "..... ..... .###. #...# ##### #.... .###.",
    "f": "..##. .#..# .#... ###.. .#... .#... .#...",
    "g": "..... ..... .#### #...# #...# #...# .#### ....# .###.",
    "h": "#.... #.... #.##. ##..# #...# #...# #...#",
    "i": "..#.. ..... .##.. ..#.. ..#.. ..#.. .###.",
    "j": "...#. ..... ..##. ...#. ...#. ...#. ...#. #..#. .##..",
    "k": "#.... #.... #..#. #.#.. ##... #.#.. #..#.",
    "l": ".##.. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "m": "..... ..... ##.#. #.#.# #.#.# #.#.# #.#.#",
    "n": "..... ..... #.##. ##..# #...# #...# #...#",
    "o": "..... ..... .###. #...# #...# #...# .###.",
    "p": "..... ..... ####. #...# #...# #...# ####. #.... #....",
    "q": "..... ..... .#### #...# #...# #...# .#### ....# ....#",
    "r": "..... ..... #.##. ##..# #.... #.... #....",
    "s": "..... ..... .###. #.... .###. ....# ####.",
    "t": ".#... .#... ###.. .#... .#... .#..# ..##.",
    "u": "..... ..... #...# #...# #...# #..## .##.#",
    "v": "..... ..... #...# #...# #...# .#.#. ..#..",
    "w": "..... ..... #...# #...# #.#.# #.#.# .#.#.",
    "x": "..... ..... #...# .#.#. ..#.. .#.#. #...#",
    "y": "..... ..... #...# #...# #...# #...# .#### ....# .###.",
    "z": "..... ..... ##### ...#. ..#.. .#... #####",
    ".": "..... ..... ..... ..... ..... .##.. .##..",
    ",": "..... ..... ..... ..... ..... ..##. ..##. ...#. ..#..",
    "-": "..... ..... ..... .###. ..... ..... .....",
    "+": "..... ..#.. ..#.. ##### ..#.. ..#.. .....",
    "/": "....# ....# ...#. ..#.. .#... #.... #....",
    ":": "..... .##.. .##.. ..... .##.. .##.. .....",
    "%": "##... ##..# ...#. ..#.. .#... #..## ...##",
    "(": "...#. ..#.. .#... .#... .#... ..#.. ...#.",
    ")": ".#... ..#.. ...#. ...#. ...#. ..#.. .#...",
    "=": "..... ..... ##### ..... ##### ..... .....",
    "_": "..... ..... ..... ..... ..... ..... ..... #####",
    "'": "..#.. ..#.. .#... ..... ..... ..... .....",
    "*": "..... ..#.. #.#.# .###. #.#.# ..#.. .....",
    "|": "..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "?": ".###. #...# ....# ...#. ..#.. ..... ..#..",
}
GLYPH_WIDTH, GLYPH_HEIGHT = 5, 9  # 7 rows above the baseline, 2 below for descenders
TEXT_ADVANCE = GLYPH_WIDTH + 1  # pixels from one character to the next
CAP_HEIGHT = 7


def text_width(text: str) -> int:
    """How many pixels wide ``text`` is drawn by ``Canvas.text``."""
    return max(len(text) * TEXT_ADVANCE - 1, 0)


@functools.cache
def _glyphs() -> dict[str, np.ndarray]:
    """The font as boolean arrays of shape ``(GLYPH_HEIGHT, GLYPH_WIDTH)``, parsed once."""
    glyphs = {}
    for character, rows in _GLYPH_ROWS.items():
        bitmap = np.zeros((GLYPH_HEIGHT, GLYPH_WIDTH), bool)
        for r, row in enumerate(rows.split()):
            bitmap[r] = [cell == "#" for cell in row]
        glyphs[character] = bitmap
    return glyphs


@functools.lru_cache(maxsize=1024)
def _text_mask(text: str) -> np.ndarray:
    """The painted pixels of ``text``, ``(GLYPH_HEIGHT, text_width(text))``; a character the
    font lacks is drawn as ``?``. Cached: a chart's labels repeat from frame to frame."""
    glyphs = _glyphs()
    mask = np.zeros((GLYPH_HEIGHT, len(text) * TEXT_ADVANCE), bool)
    for i, character in enumerate(text):
        glyph = glyphs.get(character, glyphs["?"])
        mask[:, i * TEXT_ADVANCE : i * TEXT_ADVANCE + GLYPH_WIDTH] = glyph
    mask.flags.writeable = False
    return mask[:, : text_width(text)]
