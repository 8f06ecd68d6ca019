"""The OHLCV loader on the real files, and its errors naming line and column."""

from __future__ import annotations

import numpy as np
import pytest

from sekai.finance import load_csv, load_parquet


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
        ("2020-01-02,1,2,0.5,-1,10\n", "line 3, column 'Close': price -1.0"),
        ("2020-01-02,1,2,0.5,nan,10\n", "line 3, column 'Close': price nan"),
        ("2020-01-01,1,2,0.5,1,10\n", "line 3: date 2020-01-01"),
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
    with pytest.raises(ValueError, match="no 'close' column"):
        load_csv(path)
    path.write_text("")
    with pytest.raises(ValueError, match="empty"):
        load_csv(path)


def test_parquet_needs_pyarrow_or_pandas(tmp_path, googl):
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        try:
            import pandas  # noqa: F401
        except ImportError:
            with pytest.raises(ImportError, match="pip install pyarrow"):
                load_parquet(tmp_path / "bars.parquet")
            return
        pytest.skip("pandas without pyarrow cannot write the Parquet file this test reads")
    path = tmp_path / "bars.parquet"
    columns = {"Date": googl.dates, "Open": googl.open, "High": googl.high}
    columns |= {"Low": googl.low, "Close": googl.close, "Volume": googl.volume}
    pq.write_table(pa.table(columns), path)
    bars = load_parquet(path)
    np.testing.assert_array_equal(bars.close, googl.close)
    np.testing.assert_array_equal(bars.dates, googl.dates)
