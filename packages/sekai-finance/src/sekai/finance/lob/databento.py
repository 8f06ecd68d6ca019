"""Databento DBN files: MBO records as sekai order events, MBP-1 and MBP-10 records as level rows.

DBN is Databento's binary format: a metadata header (dataset, schema, symbology), then
fixed-size little-endian records. Files come plain (``.dbn``) or Zstandard-compressed
(``.dbn.zst``), in DBN versions 1 to 3 (the MBO and MBP records are the same in all three).
Reading them needs Databento's own ``databento-dbn`` package, the optional extra
``pip install "sekai-finance[databento]"``; it is imported when a file is read, never by
``import sekai.finance``.

How the records are read: a plain file's records are viewed in place with NumPy (the record
layout is fixed, and the tests check it against ``databento_dbn``'s own); ``databento-dbn``
decodes the metadata. A compressed file is decompressed by ``databento_dbn.DBNDecoder``,
which has no other way out than one Python object per record: those are turned back into
their bytes and viewed the same way, which costs about 1.7 microseconds a record.

**MBO records to events** (``read_dbn``), per Databento's documented actions:

- ``A`` add: ``ADD`` of the order at its price and size.
- ``C`` cancel: ``CANCEL`` of the record's size (the size cancelled; the order leaves the
  book when nothing is left of it).
- ``M`` modify: ``MODIFY`` with the order's new price and size (sekai's priority rule: a
  lower size at the same price keeps the order's place, anything else sends it to the back).
- ``F`` fill, a resting order traded: Databento's fills do not change the book; each comes
  with a cancel of the filled size that does. A fill and the next cancel of the same order
  id with the same size are one ``EXECUTE`` (at the cancel's place in the stream): the book
  changes once, and the replay knows the volume traded rather than left. A fill that no
  such cancel follows is a ``TRADE`` of that order (the tape only).
- ``T`` trade, the aggressor's print: not an event. Its volume is in the fills of the
  orders it traded with; a print with no fill behind it (a trade against volume that was
  never in the book) is therefore not in the events.
- ``N`` none: not an event (it changes nothing; it may only carry flags).
- ``R`` clear: ``CLEAR`` (no side, price or size).

A record that is not an event passes its ``F_LAST`` flag (the last record of a venue
packet) to the event before it. Sides: ``B`` is ``BUY``, ``A`` (ask) ``SELL``; an add,
cancel, modify or fill must have one. Flags keep ``F_SNAPSHOT`` (``SNAPSHOT``: the
start-of-day snapshot, a clear and the resting orders as adds) and ``F_LAST`` (``LAST``).
Time is ``ts_event``, nanoseconds since the epoch; a snapshot record's ``ts_event`` is
when its order last changed, possibly days before, so its event takes the record's
``ts_recv``, when the snapshot was taken. Prices are in 1e-9 units in DBN and become
sekai's 1e-4 units exactly (divided by 100,000). Top-of-book MBO (flag ``F_TOB``, as some
venues send) is not order by order and is refused.

Everything is checked before an event is returned: a file that is not DBN, cut short, of
another schema, with an unknown action, a price off the 1e-4 grid or undefined on an
order, time going backwards, or an instrument choice that does not fit the file is a
ValueError naming the file, and the record (numbered from 0 after the metadata) where it
applies.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob._paths import local_file
from sekai.finance.lob._replay_stream import first_stranger
from sekai.finance.lob.events import (
    ADD,
    BUY,
    CANCEL,
    CLEAR,
    EXECUTE,
    KINDS,
    LAST,
    MODIFY,
    NO_SIDE,
    SELL,
    SNAPSHOT,
    TRADE,
    empty,
)
from sekai.finance.lob.lobster import orderbook_dtype

PRICE_SCALE = 100_000  # DBN prices are in 1e-9 units, sekai's in 1e-4
UNDEF_PRICE = 2**63 - 1  # DBN's "no price"
_F_TOB = 1 << 6  # the record is a top-of-book update, not one order
_MBO, _MBP_1, _MBP_10 = 160, 1, 10  # record types
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_EXTRA = 'pip install "sekai-finance[databento]"'

_HEADER = [
    ("length", "u1"),  # the record's size in 4-byte words
    ("rtype", "u1"),
    ("publisher_id", "<u2"),
    ("instrument_id", "<u4"),
    ("ts_event", "<u8"),
]
# DBN's record layouts (unchanged from version 1 to 3); tests compare them with databento-dbn's
_MBO_DTYPE = np.dtype(
    [
        *_HEADER,
        ("order_id", "<u8"),
        ("price", "<i8"),
        ("size", "<u4"),
        ("flags", "u1"),
        ("channel_id", "u1"),
        ("action", "S1"),
        ("side", "S1"),
        ("ts_recv", "<u8"),
        ("ts_in_delta", "<i4"),
        ("sequence", "<u4"),
    ]
)
_LEVEL = np.dtype(
    [
        ("bid_px", "<i8"),
        ("ask_px", "<i8"),
        ("bid_sz", "<u4"),
        ("ask_sz", "<u4"),
        ("bid_ct", "<u4"),
        ("ask_ct", "<u4"),
    ]
)


def _mbp_dtype(levels: int) -> np.dtype[Any]:
    return np.dtype(
        [
            *_HEADER,
            ("price", "<i8"),
            ("size", "<u4"),
            ("action", "S1"),
            ("side", "S1"),
            ("flags", "u1"),
            ("depth", "u1"),
            ("ts_recv", "<u8"),
            ("ts_in_delta", "<i4"),
            ("sequence", "<u4"),
            ("levels", _LEVEL, (levels,)),
        ]
    )


_LAYOUTS = {  # schema -> (record type, record layout)
    "mbo": (_MBO, _MBO_DTYPE),
    "mbp-1": (_MBP_1, _mbp_dtype(1)),
    "mbp-10": (_MBP_10, _mbp_dtype(10)),
}
_RTYPE_NAMES = {0: "trades (mbp-0)", 1: "mbp-1", 10: "mbp-10", 160: "mbo"}


class DbnLevels(NamedTuple):
    """An MBP-1 or MBP-10 file's book rows, one per record, as ``read_dbn_levels`` returns
    them: ``rows`` in ``sekai.finance.lobster.orderbook_dtype(levels)`` (an empty level is
    price 0 and size 0, as ``read_orderbook`` reads one), and each row's ``time``
    (``ts_event``, nanoseconds since the epoch) and venue ``sequence`` number, to match the
    rows with the MBO records of the same day."""

    time: NDArray[np.int64]
    sequence: NDArray[np.int64]
    rows: NDArray[Any]


def read_dbn(
    path: str | os.PathLike[str],
    *,
    symbol: str | None = None,
    instrument_id: int | None = None,
) -> NDArray[Any]:
    """A Databento MBO file (``.dbn`` or ``.dbn.zst``) as an array of sekai order events
    (``sekai.finance.lob.events.EVENT_DTYPE``), in the file's order.

    The module's docstring says how each record becomes an event. A file with one instrument
    needs no choice; with several, name one by ``symbol`` (a symbol the file was requested
    with, mapped to instruments by the file's symbology) or by ``instrument_id``.
    """
    local = local_file(path)
    metadata, records = _records(local, "mbo")
    chosen = _choose(local, metadata, records, symbol, instrument_id)
    if chosen is None:
        return _events(local, records, None)
    return _events(local, records[chosen], chosen)


def read_dbn_levels(
    path: str | os.PathLike[str],
    *,
    symbol: str | None = None,
    instrument_id: int | None = None,
) -> DbnLevels:
    """A Databento MBP-1 or MBP-10 file (``.dbn`` or ``.dbn.zst``) as book rows, one per
    record: the top 1 or 10 levels after each update, for reconciliation as with a LOBSTER
    orderbook file. Prices are in 1e-4 units; a price off that grid, or a level with volume
    and no price, is a ValueError naming the record. Instruments are chosen as by
    ``read_dbn``."""
    local = local_file(path)
    metadata, records = _records(local, "mbp-1", "mbp-10")
    chosen = _choose(local, metadata, records, symbol, instrument_id)
    chosen_records = records if chosen is None else records[chosen]
    levels = chosen_records["levels"]
    rows = np.zeros(len(chosen_records), orderbook_dtype(levels.shape[1]))
    for side in ("bid", "ask"):
        prices, sizes = levels[f"{side}_px"], levels[f"{side}_sz"].astype(np.int64)
        full = sizes > 0
        for bad, what in (
            (full & (prices == UNDEF_PRICE), "has volume and no price"),
            (full & (prices % PRICE_SCALE != 0), "has a price off the 1e-4 grid"),
            (full & (prices <= 0), "has volume at a price of 0 or less"),
        ):
            if bad.any():
                row, level = (int(i[0]) for i in np.nonzero(bad))
                record = row if chosen is None else int(chosen[row])
                raise ValueError(
                    f"{local}: record {record}: {side} level {level + 1} {what} "
                    f"({int(prices[row, level])} in 1e-9 units)"
                )
        rows[f"{side}_price"] = np.where(full, prices // PRICE_SCALE, 0)
        rows[f"{side}_size"] = sizes
    return DbnLevels(
        chosen_records["ts_event"].astype(np.int64),
        chosen_records["sequence"].astype(np.int64),
        rows,
    )


# -- the file's records ----------------------------------------------------------------------
def _dbn() -> ModuleType:
    """``databento_dbn``, or an ImportError that says which extra brings it."""
    try:
        import databento_dbn
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"reading Databento DBN files needs the databento-dbn package: {_EXTRA}",
            name=error.name,
        ) from error
    return databento_dbn


def _records(path: os.PathLike[str], *schemas: str) -> tuple[Any, NDArray[Any]]:
    """The file's metadata and its records as a structured array of the layout of its schema,
    which must be one of ``schemas``."""
    dbn = _dbn()
    data = _read(path)
    body: bytes | memoryview
    if data.startswith(_ZSTD_MAGIC):
        metadata, body = _decompressed(dbn, path, data)
    elif data.startswith(b"DBN"):
        metadata, body = _plain(dbn, path, data)
    else:
        raise ValueError(f"{path}: not a DBN file (neither DBN nor Zstandard-compressed DBN)")
    schema = None if metadata.schema is None else str(metadata.schema)
    if schema not in schemas:
        readers = "read_dbn reads mbo files, read_dbn_levels mbp-1 and mbp-10 files"
        raise ValueError(f"{path}: a file of schema {schema}; {readers}")
    rtype, layout = _LAYOUTS[schema]
    if metadata.ts_out:  # every record ends with the gateway's send time
        layout = np.dtype([*(_fields(layout)), ("ts_out", "<u8")])
    size = layout.itemsize
    records = np.frombuffer(body, layout, count=len(body) // size)
    wrong = (records["length"] != size // 4) | (records["rtype"] != rtype)
    if wrong.any():
        at = int(np.argmax(wrong))
        found = _RTYPE_NAMES.get(int(records["rtype"][at]), f"type {records['rtype'][at]}")
        raise ValueError(
            f"{path}: record {at}: a {found} record of {int(records['length'][at]) * 4} bytes in a "
            f"{schema} file (its records are {schema} records of {size} bytes)"
        )
    if len(body) % size:
        raise ValueError(
            f"{path}: record {len(records)}: cut short ({len(body) % size} of its {size} "
            "bytes): the file is truncated"
        )
    return metadata, records


def _fields(layout: np.dtype[Any]) -> list[tuple[str, Any]]:
    return [(name, layout.fields[name][0]) for name in layout.names or ()]  # type: ignore[index]


def _read(path: os.PathLike[str]) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def _plain(dbn: ModuleType, path: object, data: bytes) -> tuple[Any, memoryview]:
    """An uncompressed DBN stream's metadata (decoded by databento-dbn) and record bytes."""
    if len(data) < 8:
        raise ValueError(f"{path}: the DBN header is cut short: the file is truncated")
    end = 8 + int.from_bytes(data[4:8], "little")
    if len(data) < end:
        raise ValueError(f"{path}: the DBN metadata is cut short: the file is truncated")
    try:
        metadata = dbn.Metadata.decode(data[:end])
    except dbn.DBNError as error:
        raise ValueError(f"{path}: bad DBN metadata: {error}") from None
    return metadata, memoryview(data)[end:]


def _decompressed(dbn: ModuleType, path: object, data: bytes) -> tuple[Any, bytes]:
    """A Zstandard-compressed DBN stream's metadata and record bytes: databento-dbn's decoder
    decompresses it (the only way it offers) into records, which go back to their bytes."""
    _check_zstd_frames(path, data)
    decoder = dbn.DBNDecoder(compression=dbn.Compression.ZSTD)
    metadata, parts = None, []
    chunk = 1 << 22
    try:
        for start in range(0, len(data), chunk):
            decoded = decoder.write_and_decode(data[start : start + chunk])
            if metadata is None and decoded and isinstance(decoded[0], dbn.Metadata):
                metadata, decoded = decoded[0], decoded[1:]
            parts.append(b"".join(map(bytes, decoded)))
    except dbn.DBNError as error:
        raise ValueError(f"{path}: not readable as DBN: {error}") from None
    if metadata is None:
        raise ValueError(f"{path}: the DBN metadata is cut short: the file is truncated")
    return metadata, b"".join(parts) + decoder.buffer()


def _check_zstd_frames(path: object, data: bytes) -> None:
    """Walk the Zstandard frames' block headers (RFC 8878) without decompressing: a frame
    that stops before its last block is a truncated file, which the decoder itself would
    pass over in silence."""
    at = 0
    while at < len(data):
        magic = int.from_bytes(data[at : at + 4], "little")
        if 0x184D2A50 <= magic <= 0x184D2A5F:  # a skippable frame
            at += 8 + int.from_bytes(data[at + 4 : at + 8], "little")
            continue
        if magic != 0xFD2FB528:
            raise ValueError(f"{path}: byte {at}: not a Zstandard frame")
        if at + 5 > len(data):
            break
        descriptor = data[at + 4]
        single = descriptor >> 5 & 1
        content_size = (1 if single else 0, 2, 4, 8)[descriptor >> 6]
        at += 5 + (0 if single else 1) + (0, 1, 2, 4)[descriptor & 3] + content_size
        last = False
        while not last and at + 3 <= len(data):
            header = int.from_bytes(data[at : at + 3], "little")
            last, kind, size = bool(header & 1), header >> 1 & 3, header >> 3
            at += 3 + (1 if kind == 1 else size)
        at += 4 * (descriptor >> 2 & 1)  # the content checksum
        if not last or at > len(data):
            break
    if at != len(data):
        raise ValueError(f"{path}: the Zstandard stream is cut short: the file is truncated")


# -- choosing an instrument ------------------------------------------------------------------
def _choose(
    path: object, metadata: Any, records: NDArray[Any], symbol: object, instrument_id: object
) -> NDArray[np.intp] | None:
    """The indices of the records of the one instrument chosen (None: all the records)."""
    if symbol is not None and instrument_id is not None:
        raise ValueError("give symbol= or instrument_id=, not both")
    ids = records["instrument_id"]
    present = np.unique(ids).tolist()
    if instrument_id is not None:
        if isinstance(instrument_id, bool) or not isinstance(instrument_id, int | np.integer):
            raise TypeError(f"instrument_id must be an int, got {instrument_id!r}")
        if int(instrument_id) not in present:
            raise ValueError(
                f"{path}: instrument {instrument_id} has no records; "
                f"the file holds {_describe(metadata, present)}"
            )
        return np.flatnonzero(ids == int(instrument_id))
    if symbol is not None:
        if not isinstance(symbol, str):
            raise TypeError(f"symbol must be a str, got {symbol!r}")
        return _by_symbol(path, metadata, records, symbol)
    if len(present) > 1:
        raise ValueError(
            f"{path}: the file holds {_describe(metadata, present)}: choose one with "
            "symbol= or instrument_id="
        )
    return None  # all of them


def _mappings(metadata: Any) -> dict[str, list[tuple[dt.date, dt.date, str]]]:
    """The file's symbology: each requested symbol's (start date, end date, mapped symbol)."""
    return {
        raw: [(m["start_date"], m["end_date"], m["symbol"]) for m in intervals]
        for raw, intervals in (metadata.mappings or {}).items()
    }


def _by_symbol(path: object, metadata: Any, records: NDArray[Any], symbol: str) -> Any:
    mappings = _mappings(metadata)
    if symbol not in mappings:
        known = ", ".join(sorted(mappings)) or "none (select by instrument_id=)"
        raise ValueError(f"{path}: symbol {symbol!r} is not in the file's symbology: {known}")
    ids, received = records["instrument_id"], records["ts_recv"]
    chosen = np.zeros(len(records), bool)
    for start, end, mapped in mappings[symbol]:
        if not mapped.isdigit():
            raise ValueError(
                f"{path}: the symbology maps {symbol!r} to {mapped!r}, not to instrument ids: "
                "select by instrument_id="
            )
        first, stop = (np.datetime64(day, "ns").astype(np.int64) for day in (start, end))
        chosen |= (ids == int(mapped)) & (received >= first) & (received < stop)
    if not chosen.any():
        raise ValueError(f"{path}: no records of symbol {symbol!r} in the file")
    return np.flatnonzero(chosen)


def _describe(metadata: Any, present: list[int]) -> str:
    names: dict[int, set[str]] = {}
    for raw, intervals in _mappings(metadata).items():
        for _, _, mapped in intervals:
            if mapped.isdigit():
                names.setdefault(int(mapped), set()).add(raw)
    listed = [
        f"{i} ({', '.join(sorted(names[i]))})" if i in names else str(i) for i in present[:20]
    ]
    more = f" and {len(present) - 20} more" if len(present) > 20 else ""
    return f"{len(present)} instrument{'s' * (len(present) != 1)}: {', '.join(listed)}{more}"


# -- MBO records to events -------------------------------------------------------------------
def _events(path: object, records: NDArray[Any], where: NDArray[np.intp] | None) -> NDArray[Any]:
    """The events of one instrument's MBO records (``where``: their indices in the file, None
    when they are all of the file's records)."""
    # contiguous copies of the fields: a structured array's fields are strided, which makes
    # every pass over them several times slower
    action = np.ascontiguousarray(records["action"]).view(np.uint8)
    side = np.ascontiguousarray(records["side"]).view(np.uint8)
    flags = np.ascontiguousarray(records["flags"])
    price = np.ascontiguousarray(records["price"])
    size = records["size"].astype(np.int64)
    order_id = np.ascontiguousarray(records["order_id"])
    ts_event = np.ascontiguousarray(records["ts_event"])
    a, c, m, r, t, f, n = (action == ord(letter) for letter in "ACMRTFN")
    on_book = a | c | m | f

    def refuse(bad: NDArray[np.bool_], what: str | Callable[[int], str]) -> None:
        if bad.any():
            at = int(np.argmax(bad))
            text = what(at) if callable(what) else what
            raise ValueError(f"{path}: record {at if where is None else int(where[at])}: {text}")

    refuse(
        ~(on_book | r | t | n),
        lambda at: f"unknown MBO action {bytes([action[at]])!r} (known: A C M R T F N)",
    )
    refuse(
        (flags & _F_TOB) != 0,
        "a top-of-book record (flag F_TOB): read_dbn needs order-by-order MBO data",
    )
    refuse(on_book & (side != ord("B")) & (side != ord("A")), "an order event with no side")
    refuse(on_book & (price == UNDEF_PRICE), "an order event with no price (UNDEF_PRICE)")
    refuse(
        on_book & (price % PRICE_SCALE != 0),
        lambda at: f"price {int(price[at])} (1e-9 units) is off sekai's 1e-4 grid",
    )
    refuse(on_book & (price <= 0), lambda at: f"price {int(price[at])} is not positive")
    refuse((a | c | f) & (size <= 0), "an add, cancel or fill of size 0")
    refuse(order_id > np.iinfo(np.int64).max, "an order id beyond int64")
    refuse(ts_event > np.iinfo(np.int64).max, "no ts_event (UNDEF_TIMESTAMP)")

    kind = np.zeros(len(records), np.int8)
    kind[a], kind[c], kind[m], kind[r], kind[f] = ADD, CANCEL, MODIFY, CLEAR, TRADE
    kept = kind != 0
    # a fill and the next cancel of its order by the same size: one execution, at the cancel
    fills_and_cancels = np.flatnonzero((f | c) & (order_id != 0))
    if len(fills_and_cancels) > 1:
        order = fills_and_cancels[np.argsort(order_id[fills_and_cancels], kind="stable")]
        first, then = order[:-1], order[1:]
        pair = (
            f[first] & c[then] & (order_id[first] == order_id[then]) & (size[first] == size[then])
        )
        kept[first[pair]] = False
        kind[then[pair]] = EXECUTE
    snapshot = (flags & SNAPSHOT) != 0
    time = np.where(snapshot, records["ts_recv"], ts_event).view(np.int64)
    event_flags = flags & (SNAPSHOT | LAST)
    # a record that is no event hands its LAST flag to the event before it
    kept_at = np.flatnonzero(kept)
    dropped_last = np.flatnonzero(~kept & ((flags & LAST) != 0))
    if len(dropped_last):
        before = np.searchsorted(kept_at, dropped_last) - 1
        event_flags[kept_at[before[before >= 0]]] |= LAST

    kept_time = time[kept_at]
    backwards = np.flatnonzero(kept_time[1:] < kept_time[:-1])
    if len(backwards):
        at = int(backwards[0]) + 1
        record = int(kept_at[at]) if where is None else int(where[kept_at[at]])
        raise ValueError(
            f"{path}: record {record}: time goes backwards "
            f"({int(kept_time[at])} ns after {int(kept_time[at - 1])} ns)"
        )
    kind, side, price = kind[kept_at], side[kept_at], price[kept_at]
    clear = kind == CLEAR
    events = empty(len(kept_at))
    events["time"] = kept_time
    events["kind"] = kind
    events["order_id"] = np.where(clear, 0, order_id[kept_at].view(np.int64))
    events["side"] = np.where(clear, NO_SIDE, np.where(side == ord("B"), BUY, SELL))
    events["price"] = np.where(clear, 0, price // PRICE_SCALE)
    events["size"] = np.where(clear, 0, size[kept_at])
    events["flags"] = event_flags[kept_at]
    if len(events) and events["flags"][0] & SNAPSHOT:
        # a day from a full snapshot knows every order: one it does not hold is an error
        stranger = first_stranger(events)
        if stranger >= 0:
            named = int(kept_at[stranger]) if where is None else int(where[kept_at[stranger]])
            what = KINDS[int(events["kind"][stranger])]
            unknown = int(events["order_id"][stranger])
            raise ValueError(
                f"{path}: record {named}: {what} of order {unknown}, which the book does not "
                "hold (the file starts with a snapshot of every order)"
            )
    return events


def read_dbn_trades(
    path: str | os.PathLike[str],
    *,
    symbol: str | None = None,
    instrument_id: int | None = None,
) -> NDArray[Any]:
    """The trades of a Databento MBP-1 or MBP-10 file (its records of action ``T``) as
    ``sekai.finance.lob.depth.TRADE_DTYPE`` rows (the side is the taker's: ``B`` a buyer
    took the asks, ``A`` a seller hit the bids); a trade with no aggressor side (``N``) is
    left out. Instruments are chosen as by ``read_dbn``."""
    from sekai.finance.lob.depth import TRADE_DTYPE

    local = local_file(path)
    metadata, records = _records(local, "mbp-1", "mbp-10")
    chosen = _choose(local, metadata, records, symbol, instrument_id)
    chosen_records = records if chosen is None else records[chosen]
    action = np.ascontiguousarray(chosen_records["action"]).view(np.uint8)
    side = np.ascontiguousarray(chosen_records["side"]).view(np.uint8)
    kept = (action == ord("T")) & (side != ord("N"))
    taken = chosen_records[kept]
    bad = taken["price"] % PRICE_SCALE != 0
    if bad.any():
        at = int(np.flatnonzero(kept)[np.argmax(bad)])
        raise ValueError(f"{local}: record {at}: a trade's price is off the 1e-4 grid")
    trades = np.empty(len(taken), TRADE_DTYPE)
    trades["time"] = taken["ts_event"].astype(np.int64)
    trades["side"] = np.where(side[kept] == ord("B"), BUY, SELL)
    trades["price"] = taken["price"] // PRICE_SCALE
    trades["size"] = taken["size"].astype(np.int64)
    return trades
