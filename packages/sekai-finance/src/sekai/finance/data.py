"""The user's data in: CSV or Parquet files, dataframes, dicts of arrays -> the arrays envs index.

>>> from sekai.finance import datasets
>>> bars = datasets.load("GOOGL")
>>> env = sekai.make("Trading-v0", data=bars)  # doctest: +SKIP

One set of rules for ``load_csv``, ``load_parquet`` and the envs' ``data=``:

- **Columns** are found case-insensitively: the price column (``close``, or ``price_column=``),
  optional ``open``, ``high``, ``low``, ``volume``, an optional date column (``date``, ``time``,
  ``timestamp`` or ``datetime``; a pandas datetime index serves too) and the feature columns
  (``features=[...]``, by default every column whose name starts with ``feature_``).
- **Dates** may be datetimes, ISO strings, ``DD.MM.YYYY HH:MM:SS.mmm`` strings or unix epoch
  numbers; an epoch's unit follows its magnitude (largest value below 1e11: seconds, 1e14:
  milliseconds, 1e17: microseconds, else nanoseconds; below 1e8 is no recognised epoch).
  A newest-first history (dates strictly decreasing) is read in time order; otherwise dates
  must strictly increase.
- **Checks** name the column and the row (a CSV's line): a close (or open, high, low) must be
  finite and positive, a volume finite and non-negative, a feature finite unless ``fill=``
  (``"ffill"``: the last finite value before it, never a later one; or a number).
"""

from __future__ import annotations

import csv
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "Bars",
    "Panel",
    "infer_periods_per_year",
    "load_csv",
    "load_parquet",
    "read_bars",
    "read_panel",
]

_DATE_COLUMNS = ("date", "time", "timestamp", "datetime")
_SYMBOL_COLUMNS = ("symbol", "tic")
_OPTIONAL_PRICES = ("open", "high", "low")
_DOTTED_DATE = re.compile(r"(\d{2})\.(\d{2})\.(\d{4})(?:[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?$")
_EPOCH_TEXT = re.compile(r"\s*-?\d+(\.\d*)?\s*$")
# (largest magnitude below which, nanoseconds per unit): 1e8 s is 1973, so smaller is no epoch
_EPOCH_UNITS = ((1e8, 0), (1e11, 10**9), (1e14, 10**6), (1e17, 10**3), (np.inf, 1))


@dataclass(frozen=True)
class Bars:
    """One asset's history: float64 ``close`` and, when the data has them, ``dates``
    (datetime64[ns], strictly increasing), ``open``, ``high``, ``low``, ``volume`` (else None)
    and ``features`` (name -> float64 array), every array of one length and read-only."""

    dates: np.ndarray | None
    close: np.ndarray
    open: np.ndarray | None = None
    high: np.ndarray | None = None
    low: np.ndarray | None = None
    volume: np.ndarray | None = None
    features: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.close)

    def between(self, start: Any = None, end: Any = None) -> Bars:
        """The bars dated in ``[start, end)`` (None: open-ended), e.g. a train or test period."""
        if self.dates is None:
            raise ValueError("these bars have no dates: between() needs a date column")
        low = 0 if start is None else int(np.searchsorted(self.dates, np.datetime64(start, "ns")))
        high = (
            len(self) if end is None else int(np.searchsorted(self.dates, np.datetime64(end, "ns")))
        )
        cut = slice(low, high)

        def part(values: np.ndarray | None) -> np.ndarray | None:
            return None if values is None else values[cut]

        return Bars(
            self.dates[cut],
            self.close[cut],
            part(self.open),
            part(self.high),
            part(self.low),
            part(self.volume),
            {name: values[cut] for name, values in self.features.items()},
        )


@dataclass(frozen=True)
class Panel:
    """Several assets on common dates: ``close`` ``(T, n_assets)``, ``features``
    ``(T, n_assets, n_features)`` (None without features), ``dates`` (T,) or None, the
    ``symbols`` in column order and the ``feature_names``."""

    dates: np.ndarray | None
    close: np.ndarray
    features: np.ndarray | None
    symbols: tuple[str, ...]
    feature_names: tuple[str, ...]


def load_csv(
    path: str | Path,
    *,
    price_column: str = "close",
    features: Sequence[str] | None = None,
    fill: str | float | None = None,
) -> Bars:
    """Read one asset's bars from a CSV file with a header row (see the module's rules).

    A malformed file raises ValueError naming the line and the column.
    """
    return read_bars(
        _csv_table(Path(path)), price_column=price_column, features=features, fill=fill
    )


def load_parquet(
    path: str | Path,
    *,
    price_column: str = "close",
    features: Sequence[str] | None = None,
    fill: str | float | None = None,
) -> Bars:
    """Read one asset's bars from a Parquet file, by the rules of ``load_csv``; needs pyarrow,
    polars or pandas (``pip install "sekai-finance[parquet]"``)."""
    return read_bars(
        _parquet_table(Path(path)), price_column=price_column, features=features, fill=fill
    )


def read_bars(
    data: Any,
    *,
    price_column: str = "close",
    features: Sequence[str] | None = None,
    fill: str | float | None = None,
) -> Bars:
    """One asset's ``Bars`` from ``data``: ``Bars``, a pandas, polars or pyarrow table, a dict
    of 1-D arrays, or the path of a CSV or Parquet file (what Trading-v0's ``data=`` takes)."""
    if isinstance(data, Bars):  # checked again, as any table: Bars(...) checks nothing itself
        if features is None:
            features = list(data.features)
        data, price_column = _bars_columns(data), "close"
    table = _table(data)
    symbol = _symbol_column(table)
    if symbol is not None:
        raise ValueError(
            f"{table.source} has a {table.names[symbol]!r} column: a long table "
            "of several assets feeds Portfolio-v0; give one asset's rows here"
        )
    return _bars_of(table, np.arange(table.length), price_column, features, fill)


def read_panel(
    data: Any,
    *,
    price_column: str = "close",
    features: Sequence[str] | None = None,
    fill: str | float | None = None,
    align: str = "exact",
) -> Panel:
    """Several assets on common dates from ``{symbol: table}`` (each anything ``read_bars``
    takes) or one long table with a ``symbol`` (or FinRL's ``tic``) column, symbols in order
    of first appearance (what Portfolio-v0's ``data=`` takes).

    ``align="exact"``: every symbol must have every date of the others, else a ValueError
    names the symbol and the date; ``align="inner"`` keeps the dates all symbols share.
    """
    if align not in ("exact", "inner"):
        raise ValueError(f'align must be "exact" or "inner", got {align!r}')
    if (
        isinstance(data, Mapping)
        and data
        and all(not isinstance(value, np.ndarray | list | tuple) for value in data.values())
    ):
        assets = {
            str(symbol): read_bars(table, price_column=price_column, features=features, fill=fill)
            for symbol, table in data.items()
        }
    else:
        table = _table(data)
        column = _symbol_column(table)
        if column is None:
            raise ValueError(
                "Portfolio-v0's data= takes {symbol: table} or a long table with a 'symbol' "
                f"(or 'tic') column; {getattr(table, 'source', 'the data')} has neither"
            )
        symbols = np.asarray(table.columns[column]).astype(str)
        order, first = np.unique(symbols, return_index=True)
        assets = {
            str(symbol): _bars_of(
                table, np.flatnonzero(symbols == symbol), price_column, features, fill
            )
            for symbol in order[np.argsort(first)]
        }
    if not assets:
        raise ValueError("data= has no assets")
    return _align(assets, align)


def infer_periods_per_year(dates: np.ndarray) -> float:
    """Bars per year from the dates: ``(T - 1)`` intervals over the span in years of 365.25
    days, rounded to a whole number, then snapped to 12, 52, 252 or 365 when within 5% of it.
    Warns (UserWarning) when the dates span less than half a year, too short to be sure."""
    span = (dates[-1] - dates[0]) / np.timedelta64(1, "D") / 365.25
    per_year = float(round((len(dates) - 1) / span))
    for usual in (12.0, 52.0, 252.0, 365.0):
        if abs(per_year - usual) <= 0.05 * usual:
            per_year = usual
            break
    if span < 0.5:
        warnings.warn(
            f"periods_per_year inferred as {per_year:g} from dates spanning only "
            f"{span * 365.25:.0f} days; pass periods_per_year= to be sure",
            UserWarning,
            stacklevel=3,
        )
    return per_year


# -- tables: whatever came in, as named columns ---------------------------------------------------
@dataclass
class _Table:
    """Columns by lower-case name (``names`` keeps the user's spelling), a datetime index when
    the frame has one, where it came from, and the CSV line of row 0 (None: report rows)."""

    columns: dict[str, np.ndarray]
    names: dict[str, str]
    index_dates: np.ndarray | None
    source: str
    first_line: int | None = None

    @property
    def length(self) -> int:
        return len(next(iter(self.columns.values())))

    def where(self, row: int, column: str | None = None) -> str:
        place = f"line {row + self.first_line}" if self.first_line is not None else f"row {row}"
        named = "" if column is None else f", column {self.names.get(column, column)!r}"
        return f"{self.source}, {place}{named}"


def _table(data: Any) -> _Table:
    if isinstance(data, _Table):
        return data
    if isinstance(data, Bars):
        return _dict_table(_bars_columns(data))
    if isinstance(data, str | Path):
        path = Path(data)
        if path.suffix.lower() in (".parquet", ".pq"):
            return _parquet_table(path)
        if path.suffix.lower() in (".csv", ".txt"):
            return _csv_table(path)
        raise ValueError(f"{path}: data= reads .csv and .parquet files, not {path.suffix!r}")
    if isinstance(data, Mapping):
        return _dict_table(data)
    return _frame_table(data)


def _add(
    columns: dict[str, np.ndarray], names: dict[str, str], name: str, values: Any, source: str
) -> None:
    key = str(name).strip().lower()
    if key in columns:
        raise ValueError(f"{source}: two columns are named {key!r} (names are case-insensitive)")
    columns[key], names[key] = values, str(name).strip()


def _dict_table(data: Mapping[str, Any]) -> _Table:
    columns: dict[str, np.ndarray] = {}
    names: dict[str, str] = {}
    length = None
    for name, values in data.items():
        array = np.asarray(values)
        if array.ndim != 1:
            raise ValueError(f"data: column {name!r} must be 1-D, got shape {array.shape}")
        if length is not None and len(array) != length:
            raise ValueError(
                f"data: column {name!r} has {len(array)} rows, but the first column has {length}"
            )
        length = len(array)
        _add(columns, names, name, array, "data")
    if not columns:
        raise ValueError("data: the dict has no columns")
    return _Table(columns, names, None, "data")


def _frame_table(data: Any, source: str = "data") -> _Table:
    import narwhals as nw

    try:
        frame = nw.from_native(data, eager_only=True)
    except TypeError:
        raise TypeError(
            "data= takes Bars, a pandas, polars or pyarrow table, a dict of 1-D arrays or the "
            f"path of a CSV or Parquet file, got {type(data).__name__}"
        ) from None
    columns: dict[str, np.ndarray] = {}
    names: dict[str, str] = {}
    for name in frame.columns:
        series = frame[name]
        if isinstance(series.dtype, nw.Datetime) and series.dtype.time_zone is not None:
            series = series.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
        _add(columns, names, name, series.to_numpy(), source)
    index = nw.maybe_get_index(frame)
    index_dates = None
    if index is not None and getattr(index, "tz", None) is not None:
        index = index.tz_convert(None)
    if index is not None and np.asarray(index).dtype.kind == "M":
        index_dates = np.asarray(index, dtype="datetime64[ns]")
    if not columns:
        raise ValueError(f"{source}: the table has no columns")
    return _Table(columns, names, index_dates, source)


def _csv_table(path: Path) -> _Table:
    with path.open(newline="") as file:
        reader = csv.reader(file)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path}: the file is empty; expected a header row")
        rows = []
        for row in reader:
            if not row:
                continue
            if len(row) != len(header):
                raise ValueError(
                    f"{path}, line {reader.line_num}: {len(row)} fields, but the header has "
                    f"{len(header)}"
                )
            rows.append(row)
    cells = np.array(rows, dtype=str).reshape(len(rows), len(header))
    columns: dict[str, np.ndarray] = {}
    names: dict[str, str] = {}
    for j, name in enumerate(header):
        _add(columns, names, name, cells[:, j], str(path))
    return _Table(columns, names, None, str(path), first_line=2)


def _parquet_table(path: Path) -> _Table:
    import narwhals as nw

    for backend in ("pyarrow", "polars", "pandas"):
        try:
            __import__(backend)
        except ImportError:
            continue
        frame = nw.read_parquet(str(path), backend=backend)
        return _frame_table(frame.to_native(), str(path))
    raise ImportError(
        'reading Parquet needs pyarrow, polars or pandas: pip install "sekai-finance[parquet]"'
    )


def _symbol_column(table: _Table) -> str | None:
    return next((name for name in _SYMBOL_COLUMNS if name in table.columns), None)


# -- one asset's columns, checked --------------------------------------------------------------
def _bars_of(
    table: _Table,
    rows: np.ndarray,
    price_column: str,
    features: Sequence[str] | None,
    fill: str | float | None,
) -> Bars:
    """``Bars`` of ``table``'s ``rows`` (row numbers of the whole table, for the errors)."""
    close_name = _require(table, price_column, "price column")
    dates = _dates(table, rows)
    if dates is not None and len(dates) > 1 and dates[0] > dates[-1]:
        rows, dates = rows[::-1], dates[::-1]  # newest first: read in time order
    if dates is not None:
        bad = np.flatnonzero(np.diff(dates) <= np.timedelta64(0, "ns"))
        if len(bad):
            row = int(rows[bad[0] + 1])
            raise ValueError(
                f"{table.where(row, _date_column(table))}: date {_show(dates[bad[0] + 1])} does "
                f"not come after {_show(dates[bad[0]])}; bars must be in time order, without "
                "duplicates"
            )
    close = _numbers(table, close_name, rows, minimum=0.0)
    prices = {
        name: _numbers(table, name, rows, minimum=0.0) if name in table.columns else None
        for name in _OPTIONAL_PRICES
    }
    volume = (
        _numbers(table, "volume", rows, minimum=0.0, strict=False)
        if "volume" in table.columns
        else None
    )
    if features is None:
        chosen = [name for name in table.columns if name.startswith("feature_")]
    else:
        chosen = [_require(table, name, "feature column") for name in _names(features)]
    values = {table.names[name]: _feature(table, name, rows, fill) for name in chosen}
    return Bars(dates, close, prices["open"], prices["high"], prices["low"], volume, values)


def _show(date: np.datetime64) -> str:
    """A date as ISO text, without a midnight time or zero seconds' fractions."""
    return str(np.datetime_as_string(date, unit="s")).removesuffix("T00:00:00")


def _names(features: Sequence[str]) -> list[str]:
    if isinstance(features, str) or not all(isinstance(name, str) for name in features):
        raise TypeError(f"features must be a list of column names, got {features!r}")
    return list(features)


def _require(table: _Table, name: str, what: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"the {what} must be a column name, got {name!r}")
    key = name.strip().lower()
    if key not in table.columns:
        raise ValueError(
            f"{table.source}: no {what} {name!r} (names are case-insensitive); the columns are "
            f"{list(table.names.values())}"
        )
    return key


def _date_column(table: _Table) -> str | None:
    return next((name for name in _DATE_COLUMNS if name in table.columns), None)


def _numbers(
    table: _Table, name: str, rows: np.ndarray, minimum: float, strict: bool = True
) -> np.ndarray:
    """Column ``name`` at ``rows`` as read-only float64, each finite and above ``minimum``
    (at least, when not ``strict``); ValueError naming the column and the row."""
    values = _floats(table, name, rows)
    ok = np.isfinite(values) & ((values > minimum) if strict else (values >= minimum))
    bad = np.flatnonzero(~ok)
    if len(bad):
        sign = "positive" if strict else "non-negative"
        raise ValueError(
            f"{table.where(int(rows[bad[0]]), name)}: {float(values[bad[0]])!r} is not a finite "
            f"{sign} number"
        )
    values.flags.writeable = False
    return values


def _floats(table: _Table, name: str, rows: np.ndarray) -> np.ndarray:
    raw = table.columns[name][rows]
    if raw.dtype.kind in "biuf":
        return raw.astype(np.float64)
    values = np.empty(len(raw))
    for i, cell in enumerate(raw.tolist()):
        try:
            values[i] = float("nan") if cell is None or cell == "" else float(cell)
        except (TypeError, ValueError):
            raise ValueError(
                f"{table.where(int(rows[i]), name)}: {cell!r} is not a number"
            ) from None
    return values


def _feature(table: _Table, name: str, rows: np.ndarray, fill: str | float | None) -> np.ndarray:
    values = _floats(table, name, rows)
    missing = ~np.isfinite(values)
    if missing.any() and fill is not None:
        if fill == "ffill":
            last = np.where(missing, 0, np.arange(len(values)))
            np.maximum.accumulate(last, out=last)
            values = np.where(missing & np.isfinite(values[last]), values[last], values)
        elif isinstance(fill, int | float) and np.isfinite(fill) and not isinstance(fill, bool):
            values = np.where(missing, float(fill), values)
        else:
            raise ValueError(f'fill must be None, "ffill" or a finite number, got {fill!r}')
        missing = ~np.isfinite(values)
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        hint = " (nothing before it to carry forward)" if fill == "ffill" else ""
        raise ValueError(
            f"{table.where(int(rows[row]), name)}: feature {float(values[row])!r} is not finite"
            f'{hint}; clean it, or pass fill="ffill" or fill=<number>'
        )
    values.flags.writeable = False
    return values


def _dates(table: _Table, rows: np.ndarray) -> np.ndarray | None:
    """The rows' dates as datetime64[ns] (None when the table has none)."""
    name = _date_column(table)
    if name is None:
        return None if table.index_dates is None else table.index_dates[rows]
    raw = table.columns[name][rows]
    if raw.dtype.kind == "M":
        dates = raw.astype("datetime64[ns]")
    elif raw.dtype.kind in "iuf":
        dates = _epoch(table, name, rows, raw)
    else:
        cells = [str(cell).strip() for cell in raw.tolist()]
        if cells and all(_EPOCH_TEXT.match(cell) for cell in cells):
            integers = not any("." in cell for cell in cells)
            numbers = np.array(cells, dtype=np.int64 if integers else np.float64)
            dates = _epoch(table, name, rows, numbers)
        else:
            dates = np.array(
                [
                    _parse_date(table, name, int(row), cell)
                    for row, cell in zip(rows, cells, strict=True)
                ],
                dtype="datetime64[ns]",
            )
    missing = np.flatnonzero(np.isnat(dates))
    if len(missing):
        raise ValueError(f"{table.where(int(rows[missing[0]]), name)}: the date is missing")
    dates.flags.writeable = False
    return dates


def _epoch(table: _Table, name: str, rows: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    """Unix time in the unit its magnitude gives, as datetime64[ns] (integers exactly)."""
    largest = float(np.abs(numbers).max()) if len(numbers) else 0.0
    nanoseconds = next(unit for bound, unit in _EPOCH_UNITS if largest < bound)
    if nanoseconds == 0:
        raise ValueError(
            f"{table.where(int(rows[int(np.abs(numbers).argmax())]), name)}: dates as numbers "
            f"must be unix time (seconds, ms, µs or ns since 1970), but the largest, "
            f"{largest:g}, is before 1973 even in seconds"
        )
    if numbers.dtype.kind in "iu":
        return (numbers.astype(np.int64) * nanoseconds).view("datetime64[ns]")
    return np.round(numbers * nanoseconds).astype(np.int64).view("datetime64[ns]")


def _parse_date(table: _Table, name: str, row: int, text: str) -> np.datetime64:
    dotted = _DOTTED_DATE.match(text)
    if dotted:
        day, month, year, clock = dotted.groups()
        text = f"{year}-{month}-{day}" + (f"T{clock}" if clock else "")
    try:
        return np.datetime64(text, "ns")
    except ValueError:
        raise ValueError(
            f"{table.where(row, name)}: {text!r} is not a date (expected YYYY-MM-DD[ HH:MM:SS], "
            "DD.MM.YYYY HH:MM:SS.mmm or unix time)"
        ) from None


def _bars_columns(bars: Bars) -> dict[str, Any]:
    """``Bars`` as a dict of columns, to be read (and checked) as any table."""
    columns: dict[str, Any] = {} if bars.dates is None else {"date": bars.dates}
    columns["close"] = bars.close
    for name in (*_OPTIONAL_PRICES, "volume"):
        if getattr(bars, name) is not None:
            columns[name] = getattr(bars, name)
    return {**columns, **bars.features}


# -- several assets on common dates ------------------------------------------------------------
def _align(assets: dict[str, Bars], align: str) -> Panel:
    symbols = tuple(assets)
    feature_names = tuple(next(iter(assets.values())).features)
    for symbol, bars in assets.items():
        if tuple(bars.features) != feature_names:
            raise ValueError(
                f"symbol {symbol!r} has features {list(bars.features)}, but {symbols[0]!r} has "
                f"{list(feature_names)}: every asset needs the same feature columns"
            )
    dated = [bars.dates is not None for bars in assets.values()]
    every = [bars.dates for bars in assets.values() if bars.dates is not None]
    rows: dict[str, Any]
    dates: np.ndarray | None
    if not any(dated):
        lengths = {symbol: len(bars) for symbol, bars in assets.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"without dates the assets must have one length, got {lengths}")
        rows = {symbol: slice(None) for symbol in symbols}
        dates = None
    elif not all(dated):
        undated = symbols[dated.index(False)]
        raise ValueError(f"symbol {undated!r} has no dates, but others do: align needs dates")
    else:
        if align == "inner":
            common = every[0]
            for other in every[1:]:
                common = np.intersect1d(common, other)
        else:
            common = np.unique(np.concatenate(every))
            for symbol, own in zip(symbols, every, strict=True):
                absent = common[~np.isin(common, own)]
                if len(absent):
                    raise ValueError(
                        f"symbol {symbol!r} has no bar dated {_show(absent[0])}, which other "
                        f'symbols have ({len(absent)} such dates); pass align="inner" to keep '
                        "only the dates every symbol has"
                    )
        if len(common) == 0:
            raise ValueError(f"the symbols {list(symbols)} share no date")
        rows = {s: np.searchsorted(own, common) for s, own in zip(symbols, every, strict=True)}
        dates = np.array(common, dtype="datetime64[ns]")
        dates.flags.writeable = False
    close = np.column_stack([assets[s].close[rows[s]] for s in symbols])
    close.flags.writeable = False
    stacked = None
    if feature_names:
        stacked = np.stack(
            [
                np.column_stack([assets[s].features[f][rows[s]] for f in feature_names])
                for s in symbols
            ],
            axis=1,
        )
        stacked.flags.writeable = False
    return Panel(dates, close, stacked, symbols, feature_names)
