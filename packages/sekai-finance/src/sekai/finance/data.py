"""Loading OHLCV bars from CSV (and Parquet, with pyarrow or pandas) into the arrays envs take.

>>> bars = load_csv("STOCKS_GOOGL.csv")       # doctest: +SKIP
>>> env = sekai.make("Trading-v0", prices=bars.close)  # doctest: +SKIP
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Bars", "load_csv", "load_parquet"]

_DATE_COLUMNS = ("date", "time", "timestamp", "datetime")
_PRICE_COLUMNS = ("open", "high", "low", "close")
_DOTTED_DATE = re.compile(r"(\d{2})\.(\d{2})\.(\d{4})(?:[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?$")


@dataclass(frozen=True)
class Bars:
    """A history of bars: ``dates`` (datetime64[ns]) and float64 ``open``, ``high``, ``low``,
    ``close`` and ``volume`` arrays of one length, dates strictly increasing."""

    dates: np.ndarray
    open: np.ndarray
    high: np.ndarray
    low: np.ndarray
    close: np.ndarray
    volume: np.ndarray

    def __len__(self) -> int:
        return len(self.dates)

    def between(self, start: Any = None, end: Any = None) -> Bars:
        """The bars dated in ``[start, end)`` (None: open-ended), e.g. a train or test period."""
        low = 0 if start is None else int(np.searchsorted(self.dates, np.datetime64(start, "ns")))
        high = (
            len(self) if end is None else int(np.searchsorted(self.dates, np.datetime64(end, "ns")))
        )
        return Bars(*(getattr(self, name)[low:high] for name in _FIELDS))


_FIELDS = ("dates", "open", "high", "low", "close", "volume")


def load_csv(path: str | Path) -> Bars:
    """Read bars from a CSV file with a header row.

    Columns (case-insensitive, in any order, others ignored): a date column named Date, Time,
    Timestamp or Datetime (ISO dates, or ``DD.MM.YYYY HH:MM:SS.mmm``), Open, High, Low, Close,
    and optionally Volume (zeros when absent). A malformed file raises ValueError naming the
    line and the column.
    """
    path = Path(path)
    with path.open(newline="") as file:
        reader = csv.reader(file)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path}: the file is empty; expected a header row")
        columns = _column_indices(path, header)
        dates: list[np.datetime64] = []
        values: dict[str, list[float]] = {name: [] for name in columns if name != "dates"}
        for row in reader:
            line = reader.line_num
            if not row:
                continue
            if len(row) != len(header):
                raise ValueError(
                    f"{path}, line {line}: {len(row)} fields, but the header has {len(header)}"
                )
            dates.append(_parse_date(path, line, header[columns["dates"]], row[columns["dates"]]))
            for name, cells in values.items():
                column = columns[name]
                cells.append(_parse_number(path, line, header[column], row[column]))
    if len(dates) < 2:
        raise ValueError(f"{path}: needs at least 2 bars, got {len(dates)}")
    arrays = {name: np.asarray(cells, dtype=np.float64) for name, cells in values.items()}
    names = {name: header[column].strip() for name, column in columns.items()}
    return _bars(path, np.asarray(dates, dtype="datetime64[ns]"), arrays, names, first_line=2)


def load_parquet(path: str | Path) -> Bars:
    """Read bars from a Parquet file with the columns of ``load_csv``; needs pyarrow or
    pandas (``pip install pyarrow``)."""
    path = Path(path)
    try:
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        frame = {name: table.column(name).to_numpy() for name in table.column_names}
    except ImportError:
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "reading Parquet needs pyarrow or pandas: pip install pyarrow"
            ) from None
        data = pd.read_parquet(path)
        frame = {str(name): data[name].to_numpy() for name in data.columns}
    columns = _column_indices(path, list(frame))
    names = list(frame)
    arrays = {
        name: np.asarray(frame[names[index]], dtype=np.float64)
        for name, index in columns.items()
        if name != "dates"
    }
    dates = np.asarray(frame[names[columns["dates"]]], dtype="datetime64[ns]")
    header = {name: names[index] for name, index in columns.items()}
    return _bars(path, dates, arrays, header, first_line=None)


def _column_indices(path: Path, header: list[str]) -> dict[str, int]:
    lower = [name.strip().lower() for name in header]
    columns: dict[str, int] = {}
    for name in _DATE_COLUMNS:
        if name in lower:
            columns["dates"] = lower.index(name)
            break
    else:
        raise ValueError(f"{path}: no date column; expected one named {', '.join(_DATE_COLUMNS)}")
    for name in (*_PRICE_COLUMNS, "volume"):
        if name in lower:
            columns[name] = lower.index(name)
        elif name != "volume":
            raise ValueError(f"{path}: no {name!r} column in the header {header}")
    return columns


def _parse_date(path: Path, line: int, column: str, cell: str) -> np.datetime64:
    text = cell.strip()
    dotted = _DOTTED_DATE.match(text)
    if dotted:
        day, month, year, clock = dotted.groups()
        text = f"{year}-{month}-{day}" + (f"T{clock}" if clock else "")
    try:
        return np.datetime64(text, "ns")
    except ValueError:
        raise ValueError(
            f"{path}, line {line}, column {column!r}: {cell!r} is not a date "
            "(expected YYYY-MM-DD[ HH:MM:SS] or DD.MM.YYYY HH:MM:SS.mmm)"
        ) from None


def _parse_number(path: Path, line: int, column: str, cell: str) -> float:
    try:
        return float(cell)
    except ValueError:
        raise ValueError(
            f"{path}, line {line}, column {column!r}: {cell!r} is not a number"
        ) from None


def _bars(
    path: Path,
    dates: np.ndarray,
    arrays: dict[str, np.ndarray],
    names: dict[str, str],
    first_line: int | None,
) -> Bars:
    """Check prices and dates, naming the first bad row (its CSV line when there is one)."""

    def where(row: int) -> str:
        return f"line {row + first_line}" if first_line is not None else f"row {row}"

    for name in _PRICE_COLUMNS:
        bad = np.flatnonzero(~(np.isfinite(arrays[name]) & (arrays[name] > 0)))
        if len(bad):
            raise ValueError(
                f"{path}, {where(int(bad[0]))}, column {names[name]!r}: price "
                f"{float(arrays[name][bad[0]])!r} "
                "is not a finite positive number"
            )
    volume = arrays.get("volume", np.zeros(len(dates)))
    bad = np.flatnonzero(~(np.isfinite(volume) & (volume >= 0)))
    if len(bad):
        raise ValueError(
            f"{path}, {where(int(bad[0]))}, column {names['volume']!r}: {float(volume[bad[0]])!r} "
            "is not a finite "
            "non-negative number"
        )
    bad = np.flatnonzero(np.diff(dates) <= np.timedelta64(0, "ns"))
    if len(bad):
        raise ValueError(
            f"{path}, {where(int(bad[0]) + 1)}: date {dates[bad[0] + 1]} does not come after "
            f"{dates[bad[0]]}; bars must be in strictly increasing time order"
        )
    return Bars(dates, arrays["open"], arrays["high"], arrays["low"], arrays["close"], volume)
