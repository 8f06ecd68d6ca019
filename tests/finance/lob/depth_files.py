"""The depth-only files shipped in tests/finance/lob/data/depth: the first ``EVENTS`` events
(about five minutes) of the synthetic day of tests/finance/lob/data/synthetic
(``synthetic_formats.synthetic_day(0)``) replayed, its top ``LEVELS`` levels after each event
written as an L2 incremental CSV (``depth.levels_to_depth``) and its executions (visible and
hidden) as a trades CSV, the taker on the other side of the executed order.
``python tests/finance/lob/depth_files.py`` writes them again; ``test_depth_replay`` checks
that they read back as the day."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).parent))

from synthetic_formats import synthetic_day

from sekai.finance.lob._replay_day import ReplayDay
from sekai.finance.lob.book import BUY, SELL
from sekai.finance.lob.depth import TRADE_DTYPE, levels_to_depth
from sekai.finance.lob.events import EXECUTE, PRICE_UNITS, TRADE
from sekai.finance.lob.lobster import orderbook_dtype

FOLDER = Path(__file__).parent / "data" / "depth"
LEVELS = 5
EVENTS = 1_500
TICK = 100


def depth_day(seed: int = 0) -> tuple[NDArray[Any], NDArray[Any]]:
    """The synthetic day's level updates and trades (see the module)."""
    events = synthetic_day(seed)[:EVENTS]
    top = ReplayDay(events, levels=LEVELS).top[1:]
    rows = np.zeros(len(top), orderbook_dtype(LEVELS))
    for side, name in ((BUY, "bid"), (SELL, "ask")):
        rows[f"{name}_price"] = np.where(top[:, side, :, 1] > 0, top[:, side, :, 0] * TICK, 0)
        rows[f"{name}_size"] = top[:, side, :, 1]
    executed = np.isin(events["kind"], (EXECUTE, TRADE))
    trades = np.empty(int(executed.sum()), TRADE_DTYPE)
    for name in ("time", "price", "size"):
        trades[name] = events[name][executed]
    trades["side"] = 1 - events["side"][executed]
    return levels_to_depth(events["time"], rows), trades


def write(folder: Path = FOLDER) -> tuple[Path, Path]:
    """Write ``SEKA_l2.csv`` and ``SEKA_trades.csv`` into ``folder``; return their paths."""
    depth, trades = depth_day()
    paths = folder / "SEKA_l2.csv", folder / "SEKA_trades.csv"
    for path, rows, sides in (
        (paths[0], depth, ("bid", "ask")),
        (paths[1], trades, ("buy", "sell")),
    ):
        lines = ["time,side,price,size"]
        lines += [
            f"{t},{sides[s]},{p / PRICE_UNITS:.2f},{n}"
            for t, s, p, n in zip(
                rows["time"], rows["side"], rows["price"], rows["size"], strict=True
            )
        ]
        path.write_text("\n".join(lines) + "\n")
    return paths


if __name__ == "__main__":
    for path in write():
        print(path, path.stat().st_size)
