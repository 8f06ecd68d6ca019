"""How fast ``read_itch`` reads a NASDAQ TotalView-ITCH 5.0 file, in messages per second.

    python benchmarks/itch_read.py [--messages 5000000] [--rounds 3] [--stocks 3]

Writes a synthetic day to a temporary folder: a stock directory of three stocks, then the
orders of the first ``--stocks`` of them (SEKA, the one read, alone with 1) interleaved in
time, each order added ('A'), executed ('E', 30% of them) and cancelled
in part ('X', 25%), then deleted ('D') or replaced ('U', 10%; the new order is deleted
later), as the real files mix them (about 40% adds, 35% deletes). Every message counts,
the other stocks' too: the reader walks all of them. ``read_itch`` is timed reading one stock
(wall clock and CPU time of this process, best of ``--rounds``, after a first call that loads
numba's compiled walk); the load average is printed beside the figure.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from sekai.finance.lob.itch import read_itch

STOCKS = ("SEKA", "AAPL", "MSFT")  # SEKA is read
OPEN, CLOSE = 34_200 * 10**9, 57_600 * 10**9  # 9:30 and 16:00, ns since midnight


def _layout(fields: list[tuple[str, str]]) -> np.dtype:
    """A message with its 2-byte length prefix, packed, integers big-endian."""
    head = [("length", ">u2"), ("type", "S1"), ("locate", ">u2"), ("tracking", ">u2")]
    return np.dtype([*head, ("clock", "V6"), *fields])


LAYOUTS = {
    "R": _layout(
        [("stock", "S8"), ("rest", "V20")],  # category to inverse indicator: 20 bytes
    ),
    "A": _layout(
        [("ref", ">u8"), ("side", "S1"), ("shares", ">u4"), ("stock", "S8"), ("price", ">u4")],
    ),
    "E": _layout([("ref", ">u8"), ("shares", ">u4"), ("match", ">u8")]),
    "X": _layout([("ref", ">u8"), ("shares", ">u4")]),
    "D": _layout([("ref", ">u8")]),
    "U": _layout([("ref", ">u8"), ("new_ref", ">u8"), ("shares", ">u4"), ("price", ">u4")]),
}


def _clock(ns: np.ndarray) -> np.ndarray:
    """ns since midnight as 6 bytes, big-endian."""
    return ns.astype(">u8").view(np.uint8).reshape(-1, 8)[:, 2:].copy().view("V6")[:, 0]


def synthetic_day(path: Path, messages: int, stocks: int = 3, seed: int = 0) -> int:
    """Write about ``messages`` messages of the first ``stocks`` of ``STOCKS`` to ``path``;
    return how many it wrote."""
    rng = np.random.default_rng(seed)
    orders = int(messages / 2.55)  # each order: 1 add, 0.3 E, 0.25 X, 1 D or U (+ its D)
    add_time = np.sort(rng.integers(OPEN, CLOSE - 10**9, orders))
    stock = rng.integers(0, stocks, orders)
    side = rng.integers(0, 2, orders)
    price = 1_000_000 + rng.integers(-500, 500, orders) * 100
    shares = rng.integers(3, 20, orders) * 100  # more than E and X take
    ref = np.arange(1, orders + 1)
    executed = rng.random(orders) < 0.3
    cancelled = rng.random(orders) < 0.25
    replaced = rng.random(orders) < 0.1
    steps = np.cumsum(rng.integers(1, 100_000_000, (orders, 4)), axis=1)  # later, in order
    rows = {
        "A": (
            add_time,
            stock,
            dict(
                ref=ref,
                side=np.where(side, b"S", b"B"),
                shares=shares,
                stock=np.array([name.ljust(8) for name in STOCKS], "S8")[stock],
                price=price,
            ),
        ),
        "E": (
            add_time[executed] + steps[executed, 0],
            stock[executed],
            dict(
                ref=ref[executed],
                shares=np.full(executed.sum(), 100),
                match=np.arange(executed.sum()),
            ),
        ),
        "X": (
            add_time[cancelled] + steps[cancelled, 1],
            stock[cancelled],
            dict(ref=ref[cancelled], shares=np.full(cancelled.sum(), 100)),
        ),
        "U": (
            add_time[replaced] + steps[replaced, 2],
            stock[replaced],
            dict(
                ref=ref[replaced],
                new_ref=ref[replaced] + orders,
                shares=shares[replaced],
                price=price[replaced] + 100,
            ),
        ),
    }
    gone = ~replaced
    delete_ref = np.concatenate([ref[gone], ref[replaced] + orders])
    delete_time = np.concatenate(
        [add_time[gone] + steps[gone, 2], add_time[replaced] + steps[replaced, 3]]
    )
    rows["D"] = (delete_time, np.concatenate([stock[gone], stock[replaced]]), dict(ref=delete_ref))
    directory = np.zeros(len(STOCKS), LAYOUTS["R"])
    directory["stock"] = [name.ljust(8) for name in STOCKS]
    directory["locate"] = np.arange(1, len(STOCKS) + 1)
    directory["clock"] = _clock(np.arange(len(STOCKS)))
    directory["type"] = "R"
    records = [(np.zeros(len(STOCKS)), directory)]
    for kind, (clock, locate, fields) in rows.items():
        record = np.zeros(len(clock), LAYOUTS[kind])
        record["type"] = kind
        record["clock"] = _clock(clock)
        record["locate"] = locate + 1
        for name, column in fields.items():
            record[name] = column
        records.append((clock, record))
    for _, record in records:
        record["length"] = record.dtype.itemsize - 2
    # all messages in time order, written into one buffer
    clock = np.concatenate([c for c, _ in records])
    width = np.concatenate([np.full(len(r), r.dtype.itemsize) for _, r in records])
    order = np.argsort(clock, kind="stable")
    offset = np.empty(len(order), np.int64)
    offset[order] = np.cumsum(width[order]) - width[order]
    buffer = np.zeros(int(width.sum()), np.uint8)
    start = 0
    for _, record in records:
        size = record.dtype.itemsize
        windows = np.lib.stride_tricks.sliding_window_view(buffer, size, writeable=True)
        windows[offset[start : start + len(record)]] = record.view(np.uint8).reshape(-1, size)
        start += len(record)
    buffer.tofile(path)
    return len(order)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=5_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stocks", type=int, default=3, choices=(1, 2, 3))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "12302019.NASDAQ_ITCH50"
        written = synthetic_day(path, args.messages, args.stocks)
        size = path.stat().st_size
        events = read_itch(path, "SEKA")  # numba's walk compiled or loaded, the file cached
        best_wall = best_cpu = float("inf")
        for _ in range(args.rounds):
            wall, cpu = time.perf_counter(), time.process_time()
            read_itch(path, "SEKA")
            best_wall = min(best_wall, time.perf_counter() - wall)
            best_cpu = min(best_cpu, time.process_time() - cpu)
    print(f"{written:,} messages ({size / 1e6:.0f} MB), {len(events):,} events of SEKA")
    print(
        f"read_itch: {written / best_wall / 1e6:.1f}M messages/s wall ({best_wall:.2f} s), "
        f"{written / best_cpu / 1e6:.1f}M/s CPU ({best_cpu:.2f} s), best of {args.rounds}"
    )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
