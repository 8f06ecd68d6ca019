"""The classic-control pictures, drawn on a ``Canvas``.

Each function draws one task's frame with the size, geometry and colours of gymnasium's
renderer (its coordinates have y up, as here), and returns it as a uint8 array of shape
``(height, width, 3)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from sekai._raster import BLACK, Canvas, Point

CARTPOLE_SIZE = (600, 400)
PENDULUM_SIZE = (500, 500)
MOUNTAIN_CAR_SIZE = (600, 400)
ACROBOT_SIZE = (500, 500)

_POLE = (202, 152, 101)
_AXLE = (129, 132, 203)
_PENDULUM_ROD = (204, 77, 77)
_WHEEL = (128, 128, 128)
_FLAG = (204, 204, 0)
_ACROBOT_LINK = (0, 204, 204)
_ACROBOT_JOINT = (204, 204, 0)


def draw_cartpole(
    x: float, theta: float, x_threshold: float, half_pole_length: float
) -> np.ndarray:
    """A cart at position ``x`` on a track, its pole leaning ``theta`` radians from upright."""
    width, height = CARTPOLE_SIZE
    canvas = Canvas(width, height, y_up=True)
    scale = width / (2 * x_threshold)
    pole_width, pole_length = 10.0, scale * 2 * half_pole_length
    cart_width, cart_height = 50.0, 30.0
    axle_offset = cart_height / 4
    cart_x, cart_y = x * scale + width / 2, 100.0  # the middle and the top of the cart
    half_w, half_h = cart_width / 2, cart_height / 2
    canvas.polygon(_moved(_box(-half_w, half_w, -half_h, half_h), cart_x, cart_y), BLACK)
    half_pole = pole_width / 2
    pole = _rotated(_box(-half_pole, half_pole, -half_pole, pole_length - half_pole), -theta)
    canvas.polygon(_moved(pole, cart_x, cart_y + axle_offset), _POLE)
    canvas.circle((int(cart_x), int(cart_y + axle_offset)), int(pole_width / 2), _AXLE)
    canvas.line((0, cart_y), (width, cart_y), BLACK)
    return canvas.to_array()


def draw_pendulum(theta: float, last_torque: float | None) -> np.ndarray:
    """A pendulum at angle ``theta`` (0 upright), with an arrow sized by the last torque."""
    size = PENDULUM_SIZE[0]
    canvas = Canvas(size, size, y_up=True)
    scale = size / (2 * 2.2)
    center = size // 2
    rod_length, rod_width = 1 * scale, 0.2 * scale
    rod = _rotated(_box(0, rod_length, -rod_width / 2, rod_width / 2), theta + math.pi / 2)
    canvas.polygon(_moved(rod, center, center), _PENDULUM_ROD)
    canvas.circle((center, center), int(rod_width / 2), _PENDULUM_ROD)
    ((end_x, end_y),) = _rotated([(rod_length, 0.0)], theta + math.pi / 2)
    canvas.circle((int(end_x + center), int(end_y + center)), int(rod_width / 2), _PENDULUM_ROD)
    if last_torque is not None and last_torque != 0:
        _torque_arrow(canvas, center, scale * abs(last_torque) / 2, last_torque > 0)
    canvas.circle((center, center), int(0.05 * scale), BLACK)
    return canvas.to_array()


def draw_mountain_car(
    position: float,
    min_position: float,
    max_position: float,
    goal_position: float,
    height_at: Callable[[np.ndarray], np.ndarray],
) -> np.ndarray:
    """The car at ``position`` on the hill ``height_at``, with the goal flag."""
    width, height = MOUNTAIN_CAR_SIZE
    canvas = Canvas(width, height, y_up=True)
    scale = width / (max_position - min_position)
    car_width, car_height, clearance = 40.0, 20.0, 10.0
    xs = np.linspace(min_position, max_position, 100)
    track = np.stack([(xs - min_position) * scale, height_at(xs) * scale], axis=1)
    canvas.polyline(track, BLACK)

    angle = math.cos(3 * position)
    ground_x = (position - min_position) * scale
    ground_y = clearance + float(height_at(np.array(position))) * scale
    car = _rotated(_box(-car_width / 2, car_width / 2, 0, car_height), angle)
    canvas.polygon(_moved(car, ground_x, ground_y), BLACK)
    for wheel_x, wheel_y in _rotated([(car_width / 4, 0.0), (-car_width / 4, 0.0)], angle):
        wheel = (int(wheel_x + ground_x), int(wheel_y + ground_y))
        canvas.circle(wheel, int(car_height / 2.5), _WHEEL)

    flag_x = int((goal_position - min_position) * scale)
    flag_bottom = int(float(height_at(np.array(goal_position))) * scale)
    flag_top = flag_bottom + 50
    canvas.line((flag_x, flag_bottom), (flag_x, flag_top), BLACK)
    flag = [(flag_x, flag_top), (flag_x, flag_top - 10), (flag_x + 25, flag_top - 5)]
    canvas.polygon(flag, _FLAG)
    return canvas.to_array()


def draw_acrobot(
    theta1: float, theta2: float, link_length_1: float, link_length_2: float
) -> np.ndarray:
    """The two links at angles ``theta1`` and ``theta2``, and the height line to swing above."""
    size = ACROBOT_SIZE[0]
    canvas = Canvas(size, size, y_up=True)
    bound = link_length_1 + link_length_2 + 0.2
    scale = size / (2 * bound)
    offset = size / 2
    line_y = int(scale + offset)  # whole pixels, as pygame draws it
    canvas.line((int(-2.2 * scale + offset), line_y), (int(2.2 * scale + offset), line_y), BLACK)
    elbow = (link_length_1 * math.sin(theta1) * scale, -link_length_1 * math.cos(theta1) * scale)
    joints = [(0.0, 0.0), elbow]
    angles = [theta1 - math.pi / 2, theta1 + theta2 - math.pi / 2]
    lengths = [link_length_1 * scale, link_length_2 * scale]
    for (x, y), angle, length in zip(joints, angles, lengths, strict=True):
        x, y = x + offset, y + offset
        link = _rotated(_box(0, length, -0.1 * scale, 0.1 * scale), angle)
        canvas.polygon(_moved(link, x, y), _ACROBOT_LINK)
        canvas.circle((int(x), int(y)), int(0.1 * scale), _ACROBOT_JOINT)
    return canvas.to_array()


def _torque_arrow(canvas: Canvas, center: float, size: float, counterclockwise: bool) -> None:
    """A circular arrow ``size`` pixels across around ``center``: clockwise for a negative
    torque, as gymnasium's picture, mirrored for a positive one."""
    radius, width = 0.48 * size, max(0.03 * size, 1.0)
    side = -1.0 if counterclockwise else 1.0  # mirrors left and right
    # angles measured on the picture, y down: from the top, clockwise round to the left
    angles = np.linspace(-math.pi / 2, math.pi, 60)
    arc = [(center + side * radius * math.cos(a), center - radius * math.sin(a)) for a in angles]
    canvas.polyline(arc, BLACK, width)
    head_x, half = center - side * 0.44 * size, 0.065 * size  # at the arc's end, pointing up
    head = [(head_x - half, center), (head_x + half, center), (head_x, center + 0.145 * size)]
    canvas.polygon(head, BLACK)


def _box(left: float, right: float, bottom: float, top: float) -> list[Point]:
    """The corners of an axis-aligned rectangle, in gymnasium's order."""
    return [(left, bottom), (left, top), (right, top), (right, bottom)]


def _rotated(points: Sequence[Point], angle: float) -> list[Point]:
    """``points`` rotated counterclockwise by ``angle`` radians about the origin."""
    cos, sin = math.cos(angle), math.sin(angle)
    return [(x * cos - y * sin, x * sin + y * cos) for x, y in points]


def _moved(points: Sequence[Point], dx: float, dy: float) -> list[Point]:
    return [(x + dx, y + dy) for x, y in points]
