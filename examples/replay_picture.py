"""Draw the picture of docs/limit-order-book.md's "A real day as an env" and save it as a PNG.

A LobsterReplay-v0 agent on the default day (an hour of recorded flow) keeps a bid and an ask
at the best quotes, rejoining whenever an order fills or the best moves away, for 40 seconds
of exchange time, with 20 ms of order-entry latency. The picture: the book through time (the
top five levels of each side, shaded by their lots), the agent's bid and ask, its fills; below,
the lots ahead of each of its orders in the queue; then its inventory. Drawn with sekai's NumPy
canvas, saved without any imaging library. Run from the repository:
``python examples/replay_picture.py [OUT.png]``.
"""

import struct
import sys
import zlib
from pathlib import Path

import numpy as np

import sekai
from sekai._raster import Canvas, Plot, nice_ticks
from sekai.finance import BUY, SELL

KEEP, JOIN = 0, 3
STEPS = 40
BID_COLOR, ASK_COLOR = (30, 150, 60), (210, 50, 40)
AGENT_BID, AGENT_ASK = (31, 90, 180), (230, 130, 20)
TEXT, GRID = (40, 40, 40), (232, 232, 232)


def run() -> dict[str, np.ndarray]:
    """Every step's book, the agent's orders, queue positions, fills and inventory."""
    env = sekai.make("LobsterReplay-v0", entry_latency=0.02, episode_steps=STEPS)
    model = env.unwrapped.model
    price = model.terms.market.price(np.arange(model.terms.days.n_ticks))
    env.reset(options={"start": 600})
    rows: dict[str, list] = {k: [] for k in ("book", "orders", "fills", "inventory")}
    for step in range(STEPS):
        top = model.terms.days.top[model.cursor[0]]
        orders = model.orders[0, 0]
        action = [KEEP if orders[side, 0] == top[side, 0, 0] else JOIN for side in (BUY, SELL)]
        env.step([*action, 0])
        top = model.terms.days.top[model.cursor[0]]
        rows["book"].append(np.stack([price[np.maximum(top[..., 0], 0)], top[..., 1]], -1))
        orders = model.orders[0, 0]
        rows["orders"].append(
            [price[o[0]] if o[0] >= 0 else np.nan for o in orders] + [o[2] for o in orders]
        )
        for _, side, tick, lots, _ in env.unwrapped.fills().tolist():
            rows["fills"].append((step + 1, side, price[tick], lots))
        rows["inventory"].append(model.inventory[0, 0])
    return {name: np.array(values, np.float64) for name, values in rows.items()}


def draw(trace: dict[str, np.ndarray]) -> np.ndarray:
    canvas = Canvas(720, 560)
    steps = np.arange(1, STEPS + 1, dtype=np.float64)
    book, orders, fills = trace["book"], trace["orders"], trace["fills"]
    shown = book[..., 0][book[..., 1] > 0]
    left, right = 70, 700
    upper = Plot(canvas, (left, 24, right, 300), (0.5, STEPS + 0.5), (shown.min(), shown.max()))
    upper.y_ticks(6, TEXT, GRID)
    upper.title("the replayed book (top 5 levels, darker: more lots), the agent's quotes, fills")
    most = book[..., 1].max()
    tick = np.diff(np.unique(shown)).min()
    for side, color in ((BUY, BID_COLOR), (SELL, ASK_COLOR)):
        for level in range(book.shape[2]):
            prices, lots = book[:, side, level, 0], book[:, side, level, 1]
            for shade in (0.25, 0.5, 0.75, 1.0):  # four shades, one batch each
                pick = (lots > 0) & (lots / most <= shade) & (lots / most > shade - 0.25)
                tint = tuple(int(255 - (255 - c) * (0.25 + 0.75 * shade)) for c in color)
                lows = upper.to_pixels(steps[pick] - 0.5, prices[pick] - tick * 0.4)
                highs = upper.to_pixels(steps[pick] + 0.5, prices[pick] + tick * 0.4)
                canvas.rectangles(lows, highs, tint)
    for column, color in ((0, AGENT_BID), (1, AGENT_ASK)):
        quoted = ~np.isnan(orders[:, column])
        quoted = ~np.isnan(orders[:, column])  # a dash across each step the order rests
        lows = upper.to_pixels(steps[quoted] - 0.45, orders[quoted, column]) - np.array([0, 1.5])
        highs = upper.to_pixels(steps[quoted] + 0.45, orders[quoted, column]) + np.array([0, 1.5])
        canvas.rectangles(lows, highs, color)
    if len(fills):
        for side, color in ((BUY, BID_COLOR), (SELL, ASK_COLOR)):
            mine = fills[:, 1] == side
            upper.markers(fills[mine, 0], fills[mine, 2], (0, 0, 0), radius=5.0)
            upper.markers(fills[mine, 0], fills[mine, 2], color, radius=3.5)
    middle = Plot(
        canvas, (left, 330, right, 450), (0.5, STEPS + 0.5), (0.0, max(orders[:, 2:].max(), 1))
    )
    middle.y_ticks(4, TEXT, GRID, integer=True)
    middle.title("lots ahead of the agent's bid (blue) and ask (orange) in the queue")
    for column, color in ((2, AGENT_BID), (3, AGENT_ASK)):
        quoted = ~np.isnan(orders[:, column - 2])
        middle.markers(steps[quoted], orders[quoted, column], color, radius=3.0)
    inventory = trace["inventory"]
    lower = Plot(
        canvas,
        (left, 480, right, 530),
        (0.5, STEPS + 0.5),
        (min(inventory.min(), -1), max(inventory.max(), 1)),
    )
    lower.y_ticks(3, TEXT, GRID, integer=True)
    lower.title("inventory (lots)")
    lower.line(steps, inventory, AGENT_BID)
    ticks = nice_ticks(0, STEPS, 7, integer=True)
    lower.x_ticks(ticks, [f"{int(t)} s" for t in ticks], TEXT)
    return canvas.to_array()


def save_png(path: Path, image: np.ndarray) -> None:
    """An RGB uint8 image as a PNG file (zlib and struct only)."""
    height, width, _ = image.shape
    raw = b"".join(b"\x00" + image[row].tobytes() for row in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
    path.write_bytes(png + chunk(b"IEND", b""))


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/assets/replay-queue.png")
    save_png(out, draw(run()))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
