"""sekai._raster.Canvas: which pixels each shape paints, with and without anti-aliasing."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sekai._raster import (
    _GLYPH_ROWS,
    BLACK,
    WHITE,
    Canvas,
    Plot,
    _text_mask,
    format_ticks,
    nice_ticks,
    text_width,
)

RED = (255, 0, 0)


def _painted(canvas: Canvas) -> np.ndarray:
    """Which pixels differ from white."""
    return (canvas.to_array() != 255).any(axis=2)


def test_a_new_canvas_is_its_background_and_to_array_is_a_copy() -> None:
    canvas = Canvas(7, 5, (10, 20, 30))
    image = canvas.to_array()
    assert image.shape == (5, 7, 3) and image.dtype == np.uint8
    assert (image == (10, 20, 30)).all()
    image[:] = 0
    assert (canvas.to_array() == (10, 20, 30)).all()


def test_a_rectangle_paints_the_pixels_whose_centres_it_covers() -> None:
    canvas = Canvas(10, 8, antialias=False)
    canvas.rectangle((1.5, 2.5), (5.5, 4.5), RED)  # pixel centres 2..5 by 3..4
    expected = np.zeros((8, 10), bool)
    expected[3:5, 2:6] = True
    assert (_painted(canvas) == expected).all()
    assert (canvas.to_array()[expected] == RED).all()


def test_anti_aliasing_ramps_down_over_the_pixel_outside_an_edge() -> None:
    canvas = Canvas(6, 5)
    canvas.rectangle((0.5, 0.5), (3.5, 2.5), BLACK)
    image = canvas.to_array()[..., 0]
    assert (image[1:3, 1:4] == 0).all()  # centres inside: painted in full
    assert (image[1:3, 4] == 128).all() and (image[1:3, 0] == 128).all()  # half a pixel out
    assert (image[3, 1:4] == 128).all()
    assert (image[:, 5] == 255).all() and (image[4] == 255).all()  # a pixel out: untouched
    sharp = Canvas(6, 5, antialias=False)
    sharp.rectangle((0.5, 0.5), (3.5, 2.5), BLACK)
    assert set(np.unique(sharp.to_array())) <= {0, 255}


def test_a_pixel_centre_on_a_filled_shapes_edge_is_painted_as_pygame_does() -> None:
    canvas = Canvas(8, 4)
    canvas.rectangle((1, 1), (5, 2), BLACK)
    assert (canvas.to_array()[1:3, 1:6] == 0).all()


def test_y_up_puts_y_zero_on_the_bottom_row() -> None:
    canvas = Canvas(4, 5, y_up=True, antialias=False)
    canvas.line((0, 0), (3, 0), BLACK)
    assert _painted(canvas)[4].all() and not _painted(canvas)[:4].any()


def test_a_circle_paints_the_pixels_within_its_radius() -> None:
    canvas = Canvas(21, 21, antialias=False)
    canvas.circle((10, 10), 4, RED)
    ys, xs = np.mgrid[:21, :21]
    inside = np.hypot(xs - 10, ys - 10) <= 4
    painted = _painted(canvas)
    assert painted[inside].all()
    assert not painted[np.hypot(xs - 10, ys - 10) > 4.5].any()


def test_a_polyline_draws_each_segment_and_blends_its_joints_once() -> None:
    canvas = Canvas(12, 12)
    canvas.polyline([(1, 1), (10, 1), (10, 10)], BLACK)
    image = canvas.to_array()
    assert (image[1, 1:11] == 0).all() and (image[1:11, 10] == 0).all()
    assert (image[5, 2:9] == 255).all()  # nothing drawn inside the corner
    closed = Canvas(12, 12)
    closed.polyline([(1, 1), (10, 1), (10, 10)], BLACK, closed=True)
    assert _painted(closed)[5, 5]  # the closing diagonal


def test_shapes_outside_the_canvas_are_clipped() -> None:
    canvas = Canvas(5, 5)
    canvas.circle((100, 100), 3, RED)
    canvas.polygon([(-10, -10), (-5, -10), (-5, -5)], RED)
    assert not _painted(canvas).any()
    canvas.rectangle((-10, -10), (2, 2), RED)
    assert _painted(canvas)[:3, :3].all()


@pytest.mark.parametrize(
    ("draw", "message"),
    [
        (lambda c: c.polygon([(0, 0), (1, 1)], RED), "at least 3 points"),
        (lambda c: c.polyline([(0, 0)], RED), "at least 2 points"),
        (lambda c: c.line((0, 0), (1, 1), RED, width=0), "width must be positive"),
        (lambda c: c.circle((0, 0), -1, RED), "must not be negative"),
        (lambda c: c.rectangles([(0, 0)], [], RED), "1 corners but 0 opposite corners"),
        (lambda c: c.line((0, 0), (np.nan, 1), RED), "finite"),
        (lambda c: c.fill((0, 0, 256)), "0..255"),
        (lambda c: c.fill((0, 0)), "3 channels"),
    ],
)
def test_bad_arguments_are_value_errors_naming_them(draw, message) -> None:
    with pytest.raises(ValueError, match=message):
        draw(Canvas(4, 4))


@given(
    st.lists(st.tuples(st.floats(-5, 25), st.floats(-5, 25)), min_size=3, max_size=6),
    st.booleans(),
)
def test_any_polygon_stays_within_its_bounding_box_and_keeps_colours_between_the_two(
    points, antialias
) -> None:
    canvas = Canvas(20, 20, WHITE, antialias=antialias)
    canvas.polygon(points, BLACK)
    image = canvas.to_array()
    assert (image[..., 0] == image[..., 1]).all()  # grey levels only, between white and black
    xs, ys = zip(*points, strict=True)
    painted = np.argwhere(_painted(canvas))
    if len(painted):
        assert painted[:, 1].min() >= min(xs) - 1 and painted[:, 1].max() <= max(xs) + 1
        assert painted[:, 0].min() >= min(ys) - 1 and painted[:, 0].max() <= max(ys) + 1


_coordinate = st.floats(-5, 40, allow_nan=False).map(lambda v: round(v, 2))


@settings(deadline=None)  # a shared machine's load, not the drawing, decides the time
@given(_coordinate, _coordinate, _coordinate, _coordinate)
def test_an_anti_aliased_rectangle_paints_what_the_same_polygon_paints(xa, ya, xb, yb) -> None:
    rectangle, polygon = Canvas(37, 29), Canvas(37, 29)
    rectangle.rectangle((xa, ya), (xb, yb), RED)
    polygon.polygon([(xa, ya), (xb, ya), (xb, yb), (xa, yb)], RED)  # also when degenerate
    # the same coverage, computed in another order: at most one level of rounding apart
    difference = rectangle.to_array().astype(int) - polygon.to_array().astype(int)
    assert np.abs(difference).max() <= 1


_points = st.lists(st.tuples(_coordinate, _coordinate), min_size=2, max_size=12)


@settings(deadline=None)
@given(_points, st.sampled_from([0.5, 1.0, 1.5, 3.0]))
def test_a_polyline_covers_each_pixel_by_its_distance_to_the_nearest_segment(points, width):
    """One stroke, nothing missed: black on white, each pixel is as dark as the nearest segment
    makes it (computed here over every pixel and segment, up to one level of rounding)."""
    canvas = Canvas(37, 29)
    canvas.polyline(points, BLACK, width)
    ys, xs = np.mgrid[:29, :37].astype(float)
    nearest = np.full(xs.shape, np.inf)
    for (ax, ay), (bx, by) in itertools.pairwise(points):
        dx, dy = bx - ax, by - ay
        length2 = dx * dx + dy * dy
        t = 0.0 if length2 == 0 else np.clip(((xs - ax) * dx + (ys - ay) * dy) / length2, 0, 1)
        nearest = np.minimum(nearest, np.hypot(xs - (ax + t * dx), ys - (ay + t * dy)))
    coverage = np.clip(width / 2 - nearest + 0.5, 0.0, 1.0)
    expected = np.rint(255 * (1 - coverage))
    assert np.abs(canvas.to_array()[..., 0] - expected).max() <= 1


@settings(deadline=None)
@given(st.lists(st.tuples(_coordinate, _coordinate), min_size=1, max_size=8), st.booleans())
@example([(2.61, 1.98), (2.56, 1.97), (1.97, 2.62)], True)  # once 2 levels apart (issue 18)
def test_a_batch_of_shapes_paints_what_drawing_them_one_by_one_paints(centres, antialias) -> None:
    """circles() and rectangles() lay their shapes over one another exactly as separate calls
    would, rounding included, also where they overlap."""
    batch, one_by_one = Canvas(37, 29, antialias=antialias), Canvas(37, 29, antialias=antialias)
    batch.circles(centres, 2.5, RED)
    corners = [(x - 3, y - 1) for x, y in centres]
    opposites = [(x + 1.5, y + 4) for x, y in centres]
    batch.rectangles(corners, opposites, BLACK)
    for centre in centres:
        one_by_one.circle(centre, 2.5, RED)
    for corner, opposite in zip(corners, opposites, strict=True):
        one_by_one.rectangle(corner, opposite, BLACK)
    np.testing.assert_array_equal(batch.to_array(), one_by_one.to_array())


def test_plot_maps_data_onto_its_box_and_cuts_bars_at_its_edges() -> None:
    canvas = Canvas(60, 40, antialias=False)
    plot = Plot(canvas, (10, 5, 50, 35), (0, 4), (0, 10), margin=0.0)
    np.testing.assert_array_equal(plot.to_pixels([0, 4], [0, 10]), [[10, 35], [50, 5]])
    plot.bars(np.array([0.0, 4.0]), np.array([10.0, 5.0]), RED, width=1.0)
    painted = _painted(canvas)
    columns = np.flatnonzero(painted.any(axis=0))
    assert columns.min() == 10 and columns.max() == 50  # the half-bars outside the box are cut
    assert painted[5:36, 10].all() and not painted[:19, 50].any() and painted[21:36, 50].all()


def test_plot_widens_a_flat_range_and_refuses_a_reversed_one() -> None:
    canvas = Canvas(60, 40)
    flat = Plot(canvas, (10, 5, 50, 35), (0, 4), (3.0, 3.0))
    assert flat.to_pixels([2], [3.0])[0, 1] == 20.0  # a flat series sits in the middle
    with pytest.raises(ValueError, match=r"a range needs finite low <= high, got \(2.0, 1.0\)"):
        Plot(canvas, (10, 5, 50, 35), (2, 1), (0, 1))


def test_rectangles_on_pixel_centres_paint_whole_pixels_as_the_general_path_does() -> None:
    """Up to 64 rectangles with whole-number corners are copied in; more take the general
    path: the pixels are the same, with and without anti-aliasing."""
    rng = np.random.default_rng(0)
    corners = rng.integers(-3, 30, size=(65, 2)).astype(float)
    opposites = corners + rng.integers(-4, 5, size=(65, 2))
    for antialias in (True, False):
        batch, one_by_one = Canvas(31, 23, antialias=antialias), Canvas(31, 23, antialias=antialias)
        batch.rectangles(corners, opposites, RED)  # 65: the general path
        for corner, opposite in zip(corners, opposites, strict=True):
            one_by_one.rectangle(corner, opposite, RED)  # one: copied in
        np.testing.assert_array_equal(batch.to_array(), one_by_one.to_array())
    single = Canvas(6, 5)
    single.rectangle((1, 1), (3, 1), BLACK)  # no height: one sharp row of 3 pixels
    expected = np.zeros((5, 6), bool)
    expected[1, 1:4] = True
    assert (_painted(single) == expected).all()


def test_every_glyph_is_its_own_and_only_descenders_reach_below_the_baseline() -> None:
    bitmaps = {c: _text_mask(c) for c in _GLYPH_ROWS}
    assert len({b.tobytes() for b in bitmaps.values()}) == len(bitmaps)
    assert all(b.shape == (9, 5) for b in bitmaps.values())
    below = {c for c, b in bitmaps.items() if b[7:].any()}
    assert below == {"g", "j", "p", "q", "y", ",", "_"}
    assert set("0123456789.-+%/:()") | set("AZaz") <= set(_GLYPH_ROWS)


def test_text_paints_its_glyphs_where_aligned_and_cuts_at_the_edges() -> None:
    canvas = Canvas(40, 20)
    canvas.text((3, 2), "1.5", RED)
    painted = _painted(canvas)
    assert (painted[2:11, 3:20] == _text_mask("1.5")).all() and painted.sum() == _text_mask(
        "1.5"
    ).sum()
    assert (canvas.to_array()[painted] == RED).all()  # sharp: the colour itself, no blend
    right = Canvas(40, 20)
    right.text((30, 2), "1.5", RED, align="right")  # ends at x = 30
    assert (_painted(right)[2:11, 30 - text_width("1.5") : 30] == _text_mask("1.5")).all()
    unknown = Canvas(40, 20)
    unknown.text((3, 2), "€", RED)
    np.testing.assert_array_equal(_painted(unknown)[2:11, 3:8], _text_mask("?"))
    cut = Canvas(8, 6)
    cut.text((-3, -2), "Hi there", RED)  # mostly off the canvas: no error
    assert _painted(cut).any()
    with pytest.raises(ValueError, match=r"align must be one of \['left', 'center', 'right'\]"):
        cut.text((0, 0), "x", RED, align="middle")


@given(
    st.floats(-1e6, 1e6),
    st.floats(1e-3, 1e6),
    st.integers(2, 8),
    st.booleans(),
)
def test_nice_ticks_are_round_evenly_spaced_values_within_the_range(low, span, count, integer):
    high = low + span
    ticks = nice_ticks(low, high, count, integer=integer)
    assert len(ticks) >= 1 or integer
    slack = 1e-9 * max(span, 1.0)  # the rounding nice_ticks forgives, a billionth of a step
    assert (ticks >= low - slack).all() and (ticks <= high + slack).all()
    if len(ticks) > 1:
        step = ticks[1] - ticks[0]
        np.testing.assert_allclose(np.diff(ticks), step, atol=1e-12 * np.abs(ticks).max())
        mantissa = step / 10 ** np.floor(np.log10(step) + 1e-12)
        precision = 1e-9 * (1 + np.abs(ticks).max() / step)  # of a step between large ticks
        assert min(abs(mantissa - m) for m in (1, 2, 2.5, 5, 10)) < precision
        assert len(ticks) <= 2.5 * count + 1
    if integer:
        assert (ticks == np.round(ticks)).all()
    else:
        assert len(ticks) >= 1


def test_tick_labels_share_their_decimals_and_shorten_large_values() -> None:
    assert format_ticks(nice_ticks(0.93, 1.12, 4)) == ["0.95", "1.00", "1.05", "1.10"]
    assert format_ticks(np.array([-0.5, -0.0, 0.5])) == ["-0.5", "0.0", "0.5"]
    assert format_ticks(np.array([100.0, 120.0])) == ["100", "120"]
    assert format_ticks(np.array([150_000.0, 250_000.0])) == ["150k", "250k"]
    assert format_ticks(np.array([2.5e8, 5e8])) == ["250M", "500M"]
    assert format_ticks(np.array([0.0, 5e5, 1e6])) == ["0.0M", "0.5M", "1.0M"]
    assert text_width("12.5") == 23


def test_a_plot_labels_its_axes_left_and_below_its_box() -> None:
    canvas = Canvas(200, 120)
    plot = Plot(canvas, (50, 10, 190, 90), (0, 100), (0, 1), margin=0.0)
    ticks = plot.y_ticks(2, BLACK, grid=(230, 230, 230))
    assert list(ticks) == [0.0, 0.5, 1.0]
    painted = _painted(canvas)
    assert painted[:, :46].any() and not painted[:, 47:50].any()  # labels end 4 pixels left
    assert (canvas.to_array()[50, 50:191] == 230).all()  # the grid line at 0.5, sharp
    plot.x_ticks(np.array([0.0, 1.0, 50.0, 100.0]), ["0", "1", "50", "100"], BLACK)
    below = _painted(canvas)[94:103]
    columns = np.flatnonzero(below.any(axis=0))
    assert columns.min() >= 47 and columns.max() <= 199  # "100" moved in: not cut
    assert not below[:, 56:70].any()  # "1" would touch "0": left out


def test_stacked_areas_split_each_column_by_the_values() -> None:
    canvas = Canvas(120, 110)
    plot = Plot(canvas, (10, 5, 110, 105), (0, 3), (0, 1), margin=0.0)
    values = np.tile([0.25, 0.75], (4, 1))
    plot.stacked_areas(np.arange(4.0), values, [RED, BLACK])
    image = canvas.to_array()
    column = image[:, 60]
    assert (column[81:105] == RED).all() and (column[6:79] == 0).all()  # a quarter red, below
    assert (image[5:106, 10:111] != 255).any(axis=2).all()  # the whole box is covered
    with pytest.raises(ValueError, match="stacked areas need values >= 0"):
        plot.stacked_areas(np.arange(4.0), -values, [RED, BLACK])
