"""A Parquet event store: many days of order events (``events.EVENT_DTYPE``), one file a day.

The store is a folder, partitioned the Hive way by symbol and date::

    <root>/symbol=<SYMBOL>/date=<YYYY-MM-DD>/events.parquet

Each file holds one symbol's events of one day, in time order, with exactly the columns of
``EVENT_DTYPE`` and their integer types (``time`` int64, ``kind`` int8, ``order_id`` int64,
``side`` int8, ``price`` int64, ``size`` int64, ``flags`` uint8), Zstandard-compressed. Any
Parquet reader takes the folder as a dataset with ``symbol`` and ``date`` as partition
columns; ``read_day`` reads one day back as an event array.

**A day** is the UTC calendar date of ``time`` (nanoseconds since the epoch): a LOBSTER or
ITCH day, whose times are its date's midnight plus the time of day, is its file's date; a
Databento file, whose times are real UTC, splits at UTC midnight (as Databento splits its own
daily files). ``write_events`` writes one day per call and refuses events of several days
(``split_days`` splits them). Writing a day that is already in the store replaces it
atomically: the new file is written beside it and renamed over it, so a reader sees the old
day or the new one, never a part of either.

**pyarrow** is needed to write or read a day: the optional extra
``pip install "sekai-finance[parquet]"``. It is imported when a day is written or read, never
by importing this module; without it, those calls raise an ImportError naming the extra.
``symbols`` and ``days`` only list folders and need no pyarrow.

``convert`` and ``describe`` are what ``sekai data convert`` and ``sekai data info`` run: any
supported file (LOBSTER message files, NASDAQ ITCH 5.0, Databento MBO) into the store, and a
summary of a store or a file.
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from sekai.finance.lob._paths import local_file, local_name
from sekai.finance.lob.events import (
    ADD,
    CROSS,
    DAY,
    EVENT_DTYPE,
    MODIFY,
    PRICE_UNITS,
    check_events,
)
from sekai.finance.lob.files import format_of

__all__ = [
    "FILE_NAME",
    "Written",
    "convert",
    "day_of",
    "days",
    "describe",
    "read_day",
    "split_days",
    "symbols",
    "write_events",
]

FILE_NAME = "events.parquet"  # each day's file, in its symbol=/date= folder
_EXTRA = 'pip install "sekai-finance[parquet]"'
_SYMBOL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+^-]*")
_EPOCH = datetime.date(1970, 1, 1)
_COMPRESSION = "zstd"


class Written(NamedTuple):
    """One day ``convert`` wrote: its symbol, date, number of events and file."""

    symbol: str
    date: datetime.date
    events: int
    path: Path


# -- days ------------------------------------------------------------------------------------
def day_of(time: int) -> datetime.date:
    """The UTC calendar date of ``time`` (nanoseconds since the epoch): the store's day."""
    return _EPOCH + datetime.timedelta(days=int(time) // DAY)


def split_days(events: NDArray[Any]) -> list[tuple[datetime.date, NDArray[Any]]]:
    """``events`` (checked with ``events.check_events``) cut at UTC midnights: each day's
    date and its events (a view of ``events``), in time order, days without events left
    out."""
    check_events(events)
    if not len(events):
        return []
    day_numbers = events["time"] // DAY
    cuts = np.flatnonzero(day_numbers[1:] != day_numbers[:-1]) + 1
    starts = [0, *cuts.tolist()]
    stops = [*cuts.tolist(), len(events)]
    return [(day_of(events["time"][a]), events[a:b]) for a, b in zip(starts, stops, strict=True)]


# -- the store -------------------------------------------------------------------------------
def write_events(root: str | os.PathLike[str], symbol: str, events: NDArray[Any]) -> Path:
    """Write one day of ``symbol``'s ``events`` into the store at ``root`` (created if need
    be); return the file written.

    The events are checked (``events.check_events``) and must all fall on one UTC date, the
    day's date; an empty array, or one spanning several days, is a ValueError. A day
    already in the store is replaced atomically."""
    symbol = _check_symbol(symbol)
    check_events(events)
    if not len(events):
        raise ValueError(f"no events for {symbol}: a day needs at least one event")
    first, last = day_of(events["time"][0]), day_of(events["time"][-1])
    if first != last:
        raise ValueError(
            f"the events of {symbol} span {first} to {last}: write_events writes one day "
            "(split_days cuts events at UTC midnights)"
        )
    pa, pq = _pyarrow()
    target = _day_file(_folder(root, must_exist=False), symbol, first)
    table = pa.table(
        [pa.array(np.ascontiguousarray(events[name])) for name in EVENT_DTYPE.names or ()],
        schema=_schema(pa),
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{FILE_NAME}.{uuid.uuid4().hex}.tmp")
    try:
        pq.write_table(table, temporary, compression=_COMPRESSION)
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
    return target


def symbols(root: str | os.PathLike[str]) -> list[str]:
    """The symbols of the store at ``root``, sorted (a ``symbol=`` folder each)."""
    folder = _folder(root)
    return sorted(
        entry.name.removeprefix("symbol=")
        for entry in folder.iterdir()
        if entry.is_dir() and entry.name.startswith("symbol=")
    )


def days(root: str | os.PathLike[str], symbol: str) -> list[datetime.date]:
    """The dates of ``symbol``'s days in the store at ``root``, sorted. Lists folders only
    (no pyarrow); a symbol the store does not hold is a ValueError naming those it does."""
    found = []
    for entry in _symbol_folder(root, symbol).iterdir():
        if not entry.name.startswith("date=") or not (entry / FILE_NAME).is_file():
            continue
        found.append(_as_date(entry.name.removeprefix("date="), f"{entry}: the folder's date"))
    return sorted(found)


def read_day(root: str | os.PathLike[str], symbol: str, date: datetime.date | str) -> NDArray[Any]:
    """``symbol``'s events of ``date`` (a ``datetime.date`` or ``'YYYY-MM-DD'``) from the
    store at ``root``, as an ``EVENT_DTYPE`` array checked with ``events.check_events``.
    Reads that day's file only. A day the store does not hold, or a file whose columns are
    not ``EVENT_DTYPE``'s, is a ValueError naming it."""
    path = _day_path(root, symbol, _as_date(date, "date"))
    columns = _read_columns(path, EVENT_DTYPE.names or ())
    events = np.empty(len(columns["time"]), EVENT_DTYPE)
    for name, values in columns.items():
        events[name] = values
    return check_events(events, path)


class DaySpan(NamedTuple):
    """What a replay needs to know of a stored day before it loads it (``day_span``)."""

    first_time: int  # ns since the epoch, the day's first event
    last_time: int  # and its last
    highest_price: int  # the highest price of an event that is no halt or clear


def day_span(root: str | os.PathLike[str], symbol: str, date: datetime.date | str) -> DaySpan:
    """``symbol``'s day ``date`` in the store at ``root``: its first and last event times and
    its highest price, from the file's statistics (its time and price columns where a file
    has none), without reading its events."""
    path = _day_path(root, symbol, _as_date(date, "date"))
    _, pq = _pyarrow()
    metadata = pq.ParquetFile(path).metadata
    names = [metadata.schema.column(i).name for i in range(metadata.num_columns)]
    time_at, price_at = names.index("time"), names.index("price")
    groups = [metadata.row_group(g) for g in range(metadata.num_row_groups)]
    stats = [(g.column(time_at).statistics, g.column(price_at).statistics) for g in groups]
    if groups and all(t is not None and t.has_min_max and p is not None for t, p in stats):
        # halts (prices -1 to 1) and clears (0) never raise the highest price of a day
        return DaySpan(
            min(int(t.min) for t, _ in stats),
            max(int(t.max) for t, _ in stats),
            max(int(p.max) for _, p in stats),
        )
    columns = _read_columns(path, ("time", "price"))
    return DaySpan(
        int(columns["time"].min()), int(columns["time"].max()), int(columns["price"].max())
    )


def _day_path(root: str | os.PathLike[str], symbol: str, day: datetime.date) -> Path:
    """The file of ``symbol``'s ``day``; a ValueError naming the days held if there is none."""
    folder = _symbol_folder(root, symbol)
    path = folder / f"date={day.isoformat()}" / FILE_NAME
    if not path.is_file():
        held = days(root, symbol)
        span = f"{len(held)} day{'s' * (len(held) != 1)}"
        if held:
            span += f", {held[0]} to {held[-1]}"
        raise ValueError(f"{folder}: no day {day} of {symbol} in the store (it holds {span})")
    return path


# -- pyarrow ---------------------------------------------------------------------------------
def _pyarrow() -> tuple[ModuleType, ModuleType]:
    """``pyarrow`` and ``pyarrow.parquet``, or an ImportError that names the extra."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ModuleNotFoundError as error:
        raise ModuleNotFoundError(
            f"the Parquet event store needs pyarrow: {_EXTRA}", name=error.name
        ) from error
    return pyarrow, pyarrow.parquet


def _schema(pa: ModuleType) -> Any:
    types = {"i": {1: pa.int8(), 8: pa.int64()}, "u": {1: pa.uint8()}}
    return pa.schema(
        [
            pa.field(name, types[EVENT_DTYPE[name].kind][EVENT_DTYPE[name].itemsize], False)
            for name in EVENT_DTYPE.names or ()
        ]
    )


def _read_columns(path: Path, names: Sequence[str]) -> dict[str, NDArray[Any]]:
    """The columns ``names`` of a day's file as NumPy arrays, after checking that the file
    has exactly ``EVENT_DTYPE``'s columns, of its types, without nulls."""
    pa, pq = _pyarrow()
    try:
        file = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as error:
        raise ValueError(f"{path}: not readable as Parquet: {error}") from None
    expected = _schema(pa)
    found = file.schema_arrow
    if sorted(found.names) != sorted(expected.names):
        raise ValueError(
            f"{path}: columns {', '.join(found.names)}; a day's file has exactly "
            f"{', '.join(expected.names)}"
        )
    for field in expected:
        if not found.field(field.name).type.equals(field.type):
            raise ValueError(
                f"{path}: column {field.name} is {found.field(field.name).type}, not {field.type}"
            )
    table = file.read(columns=list(names))
    columns = {}
    for name in names:
        column = table.column(name)
        if column.null_count:
            raise ValueError(f"{path}: column {name} has {column.null_count} missing values")
        columns[name] = column.to_numpy()
    return columns


# -- paths -----------------------------------------------------------------------------------
def _check_symbol(symbol: object) -> str:
    if not isinstance(symbol, str):
        raise TypeError(f"symbol must be a str, got {type(symbol).__name__}")
    if not _SYMBOL.fullmatch(symbol):
        raise ValueError(
            f"symbol {symbol!r} cannot name a store folder: a letter or digit, then letters, "
            "digits and . _ + ^ - only"
        )
    return symbol


def _as_date(value: object, what: str) -> datetime.date:
    if isinstance(value, str):
        try:
            return datetime.date.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{what} must be 'YYYY-MM-DD', got {value!r}") from None
    if isinstance(value, datetime.datetime) or not isinstance(value, datetime.date):
        raise TypeError(f"{what} must be a datetime.date or 'YYYY-MM-DD', got {value!r}")
    return value


def _folder(root: object, *, must_exist: bool = True) -> Path:
    text = local_name(root, "root", "the store is a local folder")
    folder = Path(text)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{text}: not a folder")
    if must_exist and not folder.exists():
        raise FileNotFoundError(f"{text}: no such store folder")
    return folder


def _symbol_folder(root: object, symbol: str) -> Path:
    base = _folder(root)
    folder = base / f"symbol={_check_symbol(symbol)}"
    if not folder.is_dir():
        held = symbols(base)
        listed = ", ".join(held) if held else "none"
        raise ValueError(f"{root}: no symbol {symbol} in the store (symbols: {listed})")
    return folder


def _day_file(root: Path, symbol: str, date: datetime.date) -> Path:
    return root / f"symbol={symbol}" / f"date={date.isoformat()}" / FILE_NAME


# -- sekai data convert ----------------------------------------------------------------------
def convert(
    sources: Sequence[str | os.PathLike[str]],
    dest: str | os.PathLike[str],
    *,
    symbols: Sequence[str] = (),
    instrument_id: int | None = None,
    date: datetime.date | str | None = None,
) -> list[Written]:
    """Write every day of every file in ``sources`` into the store ``dest`` (created if need
    be); return the days written, in order. What ``sekai data convert`` runs.

    A file's format comes from its name:

    - a LOBSTER message file (``AAPL_2012-06-21_34200000_57600000_message_10.csv``, plain
      or compressed as ``lobster.read_messages`` takes it): its symbol is the name's part
      before the date (or before ``_message_`` in a name without a date; ``symbols``, when
      given, must include it), its day ``date`` or the name's;
    - a NASDAQ ITCH 5.0 file (``*.NASDAQ_ITCH50``, or ``.gz``): the stocks ``symbols`` (at
      least one), on ``date`` or the date the name starts with (``MMDDYYYY.``);
    - a Databento MBO file (``.dbn``, ``.dbn.zst``): each of ``symbols``, or the instrument
      ``instrument_id``, or the one instrument of the file, as ``databento.read_dbn`` reads
      them, cut into UTC days; its times carry their dates, so ``date`` is refused. An
      instrument not chosen by symbol is stored under the symbol the file's symbology maps
      to it, else its id.

    Every file is read and checked, and each day written to a staging folder inside
    ``dest``, before any day enters the store: an unknown format, a bad file, a symbol a
    file does not hold (or a symbol with no events), or two files giving the same symbol's
    same day are a ValueError (FileNotFoundError for a missing file) and leave ``dest`` as
    it was. Days already in the store are then replaced."""
    if isinstance(sources, str | os.PathLike):
        raise TypeError("sources must be a list of paths")
    for symbol in symbols:
        _check_symbol(symbol)
    _pyarrow()
    if not sources:
        raise ValueError("no files to convert")
    folder = _folder(dest, must_exist=False)
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".convert-", dir=folder))
    try:
        staged: dict[tuple[str, datetime.date], tuple[str, int]] = {}
        for source in sources:
            read = _source_events(source, symbols=symbols, instrument_id=instrument_id, date=date)
            for symbol, events in read.items():
                for day, day_events in split_days(events):
                    if (symbol, day) in staged:
                        raise ValueError(
                            f"{source} and {staged[symbol, day][0]} both hold {symbol} on "
                            f"{day}: convert them into different stores"
                        )
                    write_events(staging, symbol, day_events)
                    staged[symbol, day] = (os.fspath(source), len(day_events))
        written = []
        for (symbol, day), (_, count) in staged.items():
            target = _day_file(folder, symbol, day)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(_day_file(staging, symbol, day), target)
            written.append(Written(symbol, day, count, target))
        return written
    except BaseException:
        if created:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _source_events(
    source: str | os.PathLike[str],
    *,
    symbols: Sequence[str] = (),
    instrument_id: int | None = None,
    date: datetime.date | str | None = None,
) -> dict[str, NDArray[Any]]:
    """The events of a supported file, by symbol (each symbol's possibly of several days),
    read by the rules ``convert`` gives."""

    path = local_file(source)
    name = path.name
    lowered = name.lower()
    if date is not None:
        date = _as_date(date, "date")
    if re.search(r"_orderbook_\w*\.csv(\.gz|\.bz2|\.xz|\.zip)?$", lowered):
        raise ValueError(f"{path}: a LOBSTER orderbook file; convert its message file")
    kind = format_of(path)
    if instrument_id is not None and kind != "dbn":
        raise ValueError(f"{path}: --instrument-id chooses an instrument of a Databento file")
    if kind == "lobster":
        return _lobster(path, symbols, date)
    if kind == "itch":
        return _itch(path, symbols, date)
    if date is not None:
        raise ValueError(f"{path}: a Databento file's times carry their dates; drop --date")
    return _dbn(path, symbols, instrument_id)


def _lobster(
    path: Path, symbols: Sequence[str], date: datetime.date | None
) -> dict[str, NDArray[Any]]:
    from sekai.finance.lob import lobster

    named = re.match(r"(.+?)_\d{4}-\d{2}-\d{2}_", path.name) or re.match(
        r"(.+?)_message_", path.name, re.IGNORECASE
    )
    if named is None and len(symbols) != 1:
        raise ValueError(
            f"{path}: no symbol in the name (SYMBOL_YYYY-MM-DD_...): give one --symbol"
        )
    symbol = _check_symbol(named.group(1) if named else symbols[0])
    if symbols and symbol not in symbols:
        raise ValueError(
            f"{path}: a LOBSTER file of {symbol} (by its name), not of {', '.join(symbols)}"
        )
    day = date or lobster.date_of(path)
    if day is None:
        raise ValueError(f"{path}: no date in the name (SYMBOL_YYYY-MM-DD_...): give --date")
    events = lobster.to_events(lobster.read_messages(path), date=day)
    if not len(events):
        raise ValueError(f"{path}: no messages")
    return {symbol: events}


def _itch(
    path: Path, symbols: Sequence[str], date: datetime.date | None
) -> dict[str, NDArray[Any]]:
    from sekai.finance.lob import itch

    if not symbols:
        raise ValueError(f"{path}: an ITCH file holds many stocks: name them with --symbol")
    if date is None and itch._name_midnight(path.name) is None:
        raise ValueError(f"{path}: no date in the name (MMDDYYYY.NASDAQ_ITCH50): give --date")
    found = {}
    for symbol in dict.fromkeys(symbols):
        events = itch.read_itch(path, symbol, date=date)
        if not len(events):
            raise ValueError(f"{path}: no events of {symbol} in the file")
        found[symbol] = events
    return found


def _dbn(path: Path, symbols: Sequence[str], instrument_id: int | None) -> dict[str, NDArray[Any]]:
    from sekai.finance.lob import databento

    if symbols and instrument_id is not None:
        raise ValueError(f"{path}: give --symbol or --instrument-id, not both")
    metadata, records = databento._records(path, "mbo")
    found = {}
    for symbol in dict.fromkeys(symbols):
        chosen = databento._choose(path, metadata, records, symbol, None)
        found[symbol] = databento._events(path, records[chosen], chosen)
    if not symbols:
        chosen = databento._choose(path, metadata, records, None, instrument_id)
        if chosen is None:
            events = databento._events(path, records, None)
            ids = np.unique(records["instrument_id"]).tolist()
        else:
            events = databento._events(path, records[chosen], chosen)
            ids = [instrument_id]
        if not len(events):
            raise ValueError(f"{path}: no MBO events in the file")
        names = {
            raw
            for raw, intervals in databento._mappings(metadata).items()
            for _, _, mapped in intervals
            if mapped.isdigit() and int(mapped) == ids[0]
        }
        found[_check_symbol(names.pop() if len(names) == 1 else str(ids[0]))] = events
    for symbol, events in found.items():
        if not len(events):
            raise ValueError(f"{path}: no MBO events of {symbol} in the file")
    return found


# -- sekai data info -------------------------------------------------------------------------
def describe(
    path: str | os.PathLike[str],
    *,
    symbols: Sequence[str] = (),
    instrument_id: int | None = None,
    date: datetime.date | str | None = None,
) -> str:
    """What ``sekai data info`` prints of a store (a folder) or of one supported file (read
    as ``convert`` reads it, with the same ``symbols``, ``instrument_id`` and ``date``): per
    symbol, a line with its days, events, first and last event time (ISO, nanoseconds) and
    price range (currency units, 4 decimals; halts and clears have no price), then one such
    line per day. ``symbols`` limits a store's to those."""
    text = os.fspath(path)
    if "://" not in text and Path(text).is_dir():
        if instrument_id is not None or date is not None:
            raise ValueError(f"{text}: a store; --instrument-id and --date are for single files")
        summaries = _store_summaries(Path(text), symbols)
    else:
        read = _source_events(path, symbols=symbols, instrument_id=instrument_id, date=date)
        summaries = {
            symbol: [(day, _summary(day_events)) for day, day_events in split_days(events)]
            for symbol, events in sorted(read.items())
        }
    lines = []
    for symbol, per_day in summaries.items():
        total = _combine([summary for _, summary in per_day])
        count = len(per_day)
        lines.append(f"{symbol}: {count} day{'s' * (count != 1)}, {_format(total)}")
        lines += [f"  {day}: {_format(summary)}" for day, summary in per_day]
    return "\n".join(lines) + "\n"


class _Summary(NamedTuple):
    events: int
    first: int
    last: int
    low: int | None  # None: no event with a price
    high: int | None


def _summary(events: NDArray[Any]) -> _Summary:
    return _columns_summary(events["time"], events["kind"], events["price"])


def _columns_summary(
    time: NDArray[np.int64], kind: NDArray[np.int8], price: NDArray[np.int64]
) -> _Summary:
    priced = (((kind >= ADD) & (kind <= CROSS)) | (kind == MODIFY)) & (price > 0)
    prices = price[priced]
    if not len(prices):
        return _Summary(len(time), int(time[0]), int(time[-1]), None, None)
    low, high = int(prices.min()), int(prices.max())
    return _Summary(len(time), int(time[0]), int(time[-1]), low, high)


def _combine(summaries: list[_Summary]) -> _Summary:
    lows = [s.low for s in summaries if s.low is not None]
    highs = [s.high for s in summaries if s.high is not None]
    return _Summary(
        sum(s.events for s in summaries),
        min(s.first for s in summaries),
        max(s.last for s in summaries),
        min(lows) if lows else None,
        max(highs) if highs else None,
    )


def _format(summary: _Summary) -> str:
    span = f"{_iso(summary.first)} to {_iso(summary.last)}"
    prices = "no prices"
    if summary.low is not None and summary.high is not None:
        prices = f"prices {_money(summary.low)} to {_money(summary.high)}"
    return f"{summary.events} events, {span}, {prices}"


def _iso(time: int) -> str:
    return str(np.datetime_as_string(np.datetime64(time, "ns"), unit="ns"))


def _money(price: int) -> str:
    whole, fraction = divmod(price, PRICE_UNITS)
    return f"{whole}.{fraction:04d}"


def _store_summaries(
    root: Path, wanted: Sequence[str]
) -> dict[str, list[tuple[datetime.date, _Summary]]]:
    held = symbols(root)
    if not held:
        raise ValueError(f"{root}: not an event store (no symbol=... folders)")
    for symbol in wanted:
        if symbol not in held:
            raise ValueError(
                f"{root}: no symbol {symbol} in the store (symbols: {', '.join(held)})"
            )
    found = {}
    for symbol in sorted(wanted) if wanted else held:
        per_day = []
        for day in days(root, symbol):
            path = _day_file(root, symbol, day)
            columns = _read_columns(path, ("time", "kind", "price"))
            if not len(columns["time"]):
                raise ValueError(f"{path}: no events")
            per_day.append(
                (day, _columns_summary(columns["time"], columns["kind"], columns["price"]))
            )
        if per_day:
            found[symbol] = per_day
    if not found:
        raise ValueError(f"{root}: the store holds no days")
    return found
