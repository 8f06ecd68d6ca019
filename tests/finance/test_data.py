"""The OHLCV loader on the real files, and its errors naming line and column."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sekai.finance import Bars, datasets, load_csv, load_parquet, read_bars, read_panel
from sekai.finance.data import infer_periods_per_year


def test_loads_the_real_daily_and_hourly_files(googl, eurusd):
    assert len(googl) == 2335 and len(eurusd) == 6225
    assert googl.dates[0] == np.datetime64("2009-05-22")
    assert googl.close[0] == pytest.approx(196.946945) and googl.volume[0] == 3433700
    assert eurusd.dates[0] == np.datetime64("2017-01-01T22:00:00")
    assert eurusd.open[1] == pytest.approx(1.05227)
    for bars in (googl, eurusd):
        assert (np.diff(bars.dates) > np.timedelta64(0)).all()
        assert (bars.high >= bars.low).all() and bars.close.dtype == np.float64


def test_between_splits_a_history_by_date(googl):
    train, test = googl.between(end="2016-01-01"), googl.between("2016-01-01")
    assert len(train) + len(test) == len(googl)
    assert train.dates[-1] < np.datetime64("2016-01-01") <= test.dates[0]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("2020-01-02,1,2,0.5,abc,10\n", "line 3, column 'Close': 'abc' is not a number"),
        ("2020-13-45,1,2,0.5,1,10\n", "line 3, column 'Date': '2020-13-45' is not a date"),
        ("2020-01-02,1,2,0.5,1\n", "line 3: 5 fields, but the header has 6"),
        ("2020-01-02,1,2,0.5,-1,10\n", "line 3, column 'Close': -1.0 is not a finite positive"),
        ("2020-01-02,1,2,0.5,nan,10\n", "line 3, column 'Close': nan is not a finite"),
        ("2020-01-02,1,2,0.5,inf,10\n", "line 3, column 'Close': inf is not a finite"),
        ("2020-01-02,1,2,0.5,,10\n", "line 3, column 'Close': nan is not a finite"),
        ("2020-01-01,1,2,0.5,1,10\n", "line 3, column 'Date': date 2020-01-01"),
        ("2020-01-02,1,2,0.5,1,-5\n", "line 3, column 'Volume': -5.0 is not a finite non-neg"),
    ],
)
def test_malformed_csv_names_the_line_and_column(tmp_path, rows, message):
    path = tmp_path / "bars.csv"
    path.write_text("Date,Open,High,Low,Close,Volume\n2020-01-01,1,2,0.5,1,10\n" + rows)
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        load_csv(path)


def test_missing_columns_and_empty_files(tmp_path):
    path = tmp_path / "bars.csv"
    path.write_text("Date,Open,High,Low\n2020-01-01,1,2,0.5\n")
    with pytest.raises(ValueError, match=r"no price column 'close'.*\['Date', 'Open'"):
        load_csv(path)
    path.write_text("")
    with pytest.raises(ValueError, match="empty"):
        load_csv(path)


def test_parquet_needs_pyarrow_polars_or_pandas(tmp_path, googl):
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        if any(importlib.util.find_spec(name) for name in ("polars", "pandas")):
            pytest.skip("this test writes its Parquet file with pyarrow")
        with pytest.raises(ImportError, match=r"sekai-finance\[parquet\]"):
            load_parquet(tmp_path / "bars.parquet")
        return
    path = tmp_path / "bars.parquet"
    columns = {"Date": googl.dates, "Open": googl.open, "High": googl.high}
    columns |= {"Low": googl.low, "Close": googl.close, "Volume": googl.volume}
    pq.write_table(pa.table(columns), path)
    bars = load_parquet(path)
    np.testing.assert_array_equal(bars.close, googl.close)
    np.testing.assert_array_equal(bars.dates, googl.dates)


def test_datasets_load_by_any_case_and_list_their_names():
    assert datasets.names() == ("EURUSD", "GOOGL")
    assert datasets.load("googl") is datasets.load(" GOOGL ")  # read once
    prices = datasets.load("GOOGL").close
    assert len(prices) == 2335 and not prices.flags.writeable
    assert datasets.path("eurusd").name == "FOREX_EURUSD_1H_ASK.csv"
    licence = datasets.path("GOOGL").with_name("LICENSE-gym-anytrading.txt")
    assert "MIT License" in licence.read_text()
    with pytest.raises(ValueError, match="no dataset 'SPY'; the datasets are EURUSD, GOOGL"):
        datasets.load("SPY")


def _write(tmp_path, text, name="bars.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_date_and_close_alone_are_enough(tmp_path):
    bars = load_csv(_write(tmp_path, "date,close\n2024-01-02,10\n2024-01-03,11\n"))
    assert bars.close.tolist() == [10.0, 11.0] and bars.open is None and bars.volume is None
    assert bars.dates[1] == np.datetime64("2024-01-03")


def test_a_newest_first_file_is_read_in_time_order(tmp_path):
    text = "Date,Close,feature_x\n2024-01-04,12,3\n2024-01-03,11,2\n2024-01-02,10,1\n"
    bars = load_csv(_write(tmp_path, text))
    assert bars.close.tolist() == [10.0, 11.0, 12.0]
    assert bars.features["feature_x"].tolist() == [1.0, 2.0, 3.0]
    assert (np.diff(bars.dates) > np.timedelta64(0)).all()


@pytest.mark.parametrize(
    ("dates", "message"),
    [
        ("2024-01-04,2024-01-02,2024-01-03", "line 3, column 'Date': date 2024-01-02"),
        ("2024-01-02,2024-01-03,2024-01-03", "line 4, column 'Date': date 2024-01-03"),
        ("2024-01-03,2024-01-03,2024-01-02", "line 2, column 'Date': date 2024-01-03"),
    ],
)
def test_dates_out_of_order_or_duplicated_name_the_row(tmp_path, dates, message):
    rows = "".join(f"{d},{10 + i}\n" for i, d in enumerate(dates.split(",")))
    with pytest.raises(ValueError, match=message):
        load_csv(_write(tmp_path, "Date,Close\n" + rows))


@pytest.mark.parametrize(
    ("scale", "unit"), [(1, "s"), (1_000, "ms"), (1_000_000, "us"), (1_000_000_000, "ns")]
)
def test_unix_epoch_dates_are_parsed_in_their_unit(tmp_path, scale, unit):
    seconds = np.array([1514764800, 1514851200])  # 2018-01-01 and 2018-01-02
    text = "timestamp,close\n" + "".join(f"{s * scale},{i + 1}\n" for i, s in enumerate(seconds))
    expected = np.array(["2018-01-01", "2018-01-02"], dtype="datetime64[ns]")
    np.testing.assert_array_equal(load_csv(_write(tmp_path, text)).dates, expected)
    table = {"timestamp": seconds * scale, "close": [1.0, 2.0]}
    np.testing.assert_array_equal(read_bars(table).dates, expected)


def test_small_numbers_are_no_epoch(tmp_path):
    with pytest.raises(ValueError, match="before 1973 even in seconds"):
        read_bars({"date": [20240102, 20240103], "close": [1.0, 2.0]})


def test_the_price_column_is_case_insensitive_and_can_be_chosen():
    table = {"Date": ["2024-01-02", "2024-01-03"], "CLOSE": [1.0, 2.0], "Adj Close": [3.0, 4.0]}
    assert read_bars(table).close.tolist() == [1.0, 2.0]
    assert read_bars(table, price_column="adj close").close.tolist() == [3.0, 4.0]
    with pytest.raises(ValueError, match="no price column 'last'"):
        read_bars(table, price_column="last")


def test_features_default_to_feature_columns_or_are_chosen():
    table = {"close": [1.0, 2.0], "feature_a": [0.1, 0.2], "FEATURE_B": [1, 2], "rsi": [5, 6]}
    assert list(read_bars(table).features) == ["feature_a", "FEATURE_B"]
    assert list(read_bars(table, features=["RSI"]).features) == ["rsi"]
    with pytest.raises(ValueError, match="no feature column 'macd'"):
        read_bars(table, features=["macd"])
    with pytest.raises(TypeError, match="list of column names"):
        read_bars(table, features="rsi")


def test_a_nan_feature_raises_unless_filled_and_never_from_the_future():
    table = {"close": [1.0, 2.0, 3.0, 4.0], "feature_x": [1.0, np.nan, np.inf, 4.0]}
    with pytest.raises(ValueError, match="row 1, column 'feature_x': feature nan"):
        read_bars(table)
    assert read_bars(table, fill="ffill").features["feature_x"].tolist() == [1, 1, 1, 4]
    assert read_bars(table, fill=0.0).features["feature_x"].tolist() == [1, 0, 0, 4]
    with pytest.raises(ValueError, match="nothing before it to carry forward"):
        read_bars({"close": [1.0, 2.0], "feature_x": [np.nan, 1.0]}, fill="ffill")
    with pytest.raises(ValueError, match="fill must be"):
        read_bars(table, fill="bfill")


@pytest.mark.needs("pandas", "polars", "pyarrow")
def test_every_dataframe_library_gives_the_same_bars():
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    dates = np.array(["2024-01-02", "2024-01-03", "2024-01-04"], dtype="datetime64[ns]")
    columns = {"Date": dates, "Close": [1.0, 2.0, 3.0], "feature_m": [0.5, 0.6, 0.7]}
    expected = read_bars(columns)
    indexed = pd.DataFrame({"Close": [1.0, 2.0, 3.0], "feature_m": [0.5, 0.6, 0.7]}, index=dates)
    utc = pd.DataFrame(columns).assign(Date=lambda f: f.Date.dt.tz_localize("UTC"))
    for frame in (pd.DataFrame(columns), pl.DataFrame(columns), pa.table(columns), indexed, utc):
        bars = read_bars(frame)
        np.testing.assert_array_equal(bars.dates, expected.dates)
        np.testing.assert_array_equal(bars.close, expected.close)
        np.testing.assert_array_equal(bars.features["feature_m"], expected.features["feature_m"])


@pytest.mark.needs("pyarrow")
def test_a_parquet_file_follows_the_csv_rules(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    seconds = np.array([1514851200, 1514764800])  # newest first, unix seconds
    pq.write_table(pa.table({"time": seconds, "Close": [2.0, 1.0]}), tmp_path / "b.parquet")
    bars = load_parquet(tmp_path / "b.parquet")
    assert bars.close.tolist() == [1.0, 2.0] and str(bars.dates[0]).startswith("2018-01-01")
    assert read_bars(tmp_path / "b.parquet").close.tolist() == [1.0, 2.0]


def test_errors_in_a_table_name_the_row_and_column():
    with pytest.raises(ValueError, match=r"row 2, column 'close': -1\.0 is not a finite positive"):
        read_bars({"close": [1.0, 2.0, -1.0]})
    with pytest.raises(ValueError, match="column 'b' has 3 rows, but the first column has 2"):
        read_bars({"close": [1.0, 2.0], "b": [1, 2, 3]})
    with pytest.raises(TypeError, match="data= takes Bars, a pandas"):
        read_bars(42)
    with pytest.raises(ValueError, match=r"reads \.csv and \.parquet files"):
        read_bars("prices.xlsx")


def test_bars_given_as_data_are_checked_like_any_table():
    dates = np.array(["2024-01-03", "2024-01-02"], dtype="datetime64[ns]")
    bars = read_bars(Bars(dates, np.array([2.0, 1.0]), features={"sma": np.array([1.5, 1.0])}))
    assert bars.close.tolist() == [1.0, 2.0] and bars.features["sma"].tolist() == [1.0, 1.5]
    with pytest.raises(ValueError, match=r"column 'close': 0\.0 is not a finite positive"):
        read_bars(Bars(None, np.array([1.0, 0.0])))


def test_a_long_table_or_a_dict_of_tables_makes_a_panel():
    long = {
        "date": ["2024-01-02", "2024-01-02", "2024-01-03", "2024-01-03"],
        "tic": ["MSFT", "AAPL", "MSFT", "AAPL"],
        "close": [10.0, 20.0, 11.0, 21.0],
        "feature_v": [1.0, 2.0, 3.0, 4.0],
    }
    panel = read_panel(long)
    assert panel.symbols == ("MSFT", "AAPL") and panel.feature_names == ("feature_v",)
    assert panel.close.tolist() == [[10.0, 20.0], [11.0, 21.0]]
    assert panel.features[:, :, 0].tolist() == [[1.0, 2.0], [3.0, 4.0]]
    split = read_panel(
        {
            "A": {"date": long["date"][::2], "close": [1.0, 2.0]},
            "B": {"date": long["date"][1::2], "close": [3.0, 4.0]},
        }
    )
    assert split.symbols == ("A", "B") and split.close.tolist() == [[1.0, 3.0], [2.0, 4.0]]


def test_a_date_one_symbol_lacks_raises_unless_inner():
    a = {"date": ["2024-01-02", "2024-01-03", "2024-01-04"], "close": [1.0, 2.0, 3.0]}
    b = {"date": ["2024-01-02", "2024-01-04"], "close": [5.0, 6.0]}
    with pytest.raises(ValueError, match="symbol 'B' has no bar dated 2024-01-03"):
        read_panel({"A": a, "B": b})
    inner = read_panel({"A": a, "B": b}, align="inner")
    assert inner.close.tolist() == [[1.0, 5.0], [3.0, 6.0]]
    assert inner.dates.astype("datetime64[D]").astype(str).tolist() == ["2024-01-02", "2024-01-04"]
    with pytest.raises(ValueError, match='align must be "exact" or "inner"'):
        read_panel({"A": a}, align="outer")
    with pytest.raises(ValueError, match="'symbol'"):
        read_panel(a)


@given(st.lists(st.floats(0.01, 1e6), min_size=2, max_size=30), st.booleans())
def test_any_positive_history_reads_back_exactly_in_either_order(closes, newest_first):
    dates = np.datetime64("2020-01-01", "ns") + np.arange(len(closes)) * np.timedelta64(1, "D")
    table = (
        {"date": dates[::-1], "close": closes[::-1]}
        if newest_first
        else {"date": dates, "close": closes}
    )
    bars = read_bars(table)
    assert bars.close.tolist() == closes
    np.testing.assert_array_equal(bars.dates, dates)


def test_periods_per_year_follow_the_dates(googl, eurusd):
    assert infer_periods_per_year(googl.dates) == 252.0
    assert infer_periods_per_year(eurusd.dates) == pytest.approx(6225, rel=0.02)
    weekly = np.datetime64("2000-01-03") + np.arange(300) * np.timedelta64(7, "D")
    assert infer_periods_per_year(weekly.astype("datetime64[ns]")) == 52.0
    with pytest.warns(UserWarning, match="inferred as 236 from dates spanning only 31 days"):
        infer_periods_per_year(googl.dates[:21])
