"""How fast ``read_dbn`` reads a Databento MBO file, beside databento-dbn's own decode to NumPy.

    uv run python benchmarks/dbn_read.py [--records 1000000] [--rounds 3]

The file: the tests' known-answer day (a snapshot, adds, modifies, a trade print with its fill
and cancel, a cancel, a lone fill, a record with no action, a clear), copied with shifted
times and order ids to about ``--records`` records, and encoded by databento-dbn's
``Transcoder`` twice: plain DBN and Zstandard-compressed DBN.

databento-dbn decodes DBN only into Python record objects (``DBNDecoder``); its fastest way to
NumPy is to decode, turn the records back into their bytes and view those as an array of the
record layout it names (``MBOMsg._dtypes``). That is the reference, on the same file. For a
plain file ``read_dbn`` needs no decoder (it views the records in place); for a compressed one
it decompresses through the same decoder, so most of its time is the reference's. Each entry
is the best of ``--rounds`` (wall time); the ratio is the reference's time over
``read_dbn``'s, so above 1 is faster than the reference.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import databento_dbn as dbn
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "finance" / "lob"))
from test_databento import metadata, the_day

from sekai.finance.lob.databento import read_dbn
from sekai.finance.lob.events import SNAPSHOT

LAYOUT = np.dtype(dbn.MBOMsg._dtypes)


def big_day(records: int) -> bytes:
    """The known-answer day copied to about ``records`` records, as plain DBN bytes (the
    snapshot only in the first copy)."""
    day = np.frombuffer(b"".join(map(bytes, the_day())), LAYOUT)
    copies = max(1, records // len(day))
    tiled = np.tile(day, copies)
    copy = np.repeat(np.arange(copies, dtype=np.uint64), len(day))
    span = np.uint64(20_000)  # ns per copy: the day's live part takes 10,000
    tiled["ts_event"] += copy * span
    tiled["ts_recv"] += copy * span
    tiled["order_id"] = np.where(
        tiled["order_id"] > 0, tiled["order_id"] + copy * np.uint64(100), 0
    )
    later = copy > 0
    tiled["flags"][later] &= ~np.uint8(SNAPSHOT | 8)
    # a later copy's snapshot records become live ones: their time is then ts_event
    snapshot_part = later & (np.tile(np.arange(len(day)), copies) < 4)
    tiled["ts_event"][snapshot_part] = tiled["ts_recv"][snapshot_part]
    return bytes(metadata()) + tiled.tobytes()


def encode(plain: bytes, compression: Any) -> bytes:
    """``plain`` re-encoded by databento-dbn's Transcoder."""
    out = io.BytesIO()
    transcoder = dbn.Transcoder(out, dbn.Encoding.DBN, compression)
    transcoder.write(plain)
    transcoder.flush()
    transcoder.finish()
    return out.getvalue()


def reference(path: Path) -> np.ndarray:
    """databento-dbn's fastest decode of a file to a NumPy array of its records."""
    data = path.read_bytes()
    zstd = data.startswith(b"\x28\xb5\x2f\xfd")
    decoder = dbn.DBNDecoder(compression=dbn.Compression.ZSTD if zstd else dbn.Compression.NONE)
    decoder.write(data)
    records = decoder.decode()[1:]  # the metadata first
    return np.frombuffer(b"".join(map(bytes, records)), LAYOUT)


def best(work: Callable[[], Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    plain = encode(big_day(args.records), dbn.Compression.NONE)
    folder = Path(tempfile.mkdtemp())
    files = {
        "plain .dbn": folder / "day.dbn",
        "zstd .dbn.zst": folder / "day.dbn.zst",
    }
    files["plain .dbn"].write_bytes(plain)
    files["zstd .dbn.zst"].write_bytes(encode(plain, dbn.Compression.ZSTD))
    n = len(reference(files["plain .dbn"]))
    events = len(read_dbn(files["plain .dbn"]))
    print(f"{n:,} MBO records ({events:,} events); best of {args.rounds}, wall time\n")
    print("| file | size | databento-dbn to NumPy | read_dbn | ratio |")
    print("|---|---:|---:|---:|---:|")
    for name, path in files.items():
        theirs = best(lambda path=path: reference(path), args.rounds)
        ours = best(lambda path=path: read_dbn(path), args.rounds)
        size = path.stat().st_size / 1e6
        print(
            f"| {name} | {size:.1f} MB | {theirs:.3f} s ({n / theirs / 1e6:.2f} M rec/s) "
            f"| {ours:.3f} s ({n / ours / 1e6:.2f} M rec/s) | {theirs / ours:.2f}x |"
        )


if __name__ == "__main__":
    main()
