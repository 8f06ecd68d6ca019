"""data= on Trading-v0 and Portfolio-v0 (single and native): tables, features, dates, checks."""

from __future__ import annotations

import datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sekai
from sekai.envs.finance.portfolio import PortfolioEnv
from sekai.envs.finance.trading import TradingEnv
from sekai.finance import Bars, DateRange, SequentialStart, datasets


@pytest.fixture(scope="module")
def table(googl) -> dict[str, np.ndarray]:
    """GOOGL's date and close with two features known at each bar's close."""
    close = googl.close
    moving = np.convolve(close, np.ones(5) / 5)[: len(close)]  # trailing mean: past bars only
    moving[:4] = close[:4]
    return {
        "Date": googl.dates,
        "Close": close,
        "feature_ma5": close / moving - 1.0,
        "feature_volume": np.log(googl.volume),
    }


def _episode(env, actions, start):
    observation, info = env.reset(seed=0, options={"start": start})
    observations, infos, rewards = [observation], [info], []
    for action in actions:
        step = env.step(action)
        observations.append(step.observation)
        infos.append(step.info)
        rewards.append(step.reward)
        if step.terminated:
            break
    return np.array(observations), infos, rewards


def test_the_observation_is_each_bars_return_then_its_features_then_the_position(table):
    env = TradingEnv(data=table, lookback=3)
    assert env.features == ("feature_ma5", "feature_volume")
    assert env.observation_space.shape == (3 * 3 + 1,)
    observation, info = env.reset(seed=0, options={"start": 100})
    rows = observation[:-1].reshape(3, 3)
    bars = np.arange(98, 101)
    returns = np.log(table["Close"][bars] / table["Close"][bars - 1])
    np.testing.assert_array_equal(rows[:, 0], returns.astype(np.float32))
    np.testing.assert_array_equal(rows[:, 1], table["feature_ma5"][bars].astype(np.float32))
    np.testing.assert_array_equal(rows[:, 2], table["feature_volume"][bars].astype(np.float32))
    assert observation[-1] == 0 and info["date"] == datetime.datetime(2009, 10, 14)


def test_without_features_the_observation_is_as_with_prices(googl):
    plain = TradingEnv(googl.close)
    dated = TradingEnv(data={"date": googl.dates, "close": googl.close})
    assert dated.observation_space == plain.observation_space
    a, infos_a, rewards_a = _episode(plain, [1, 0, 1], 50)
    b, infos_b, rewards_b = _episode(dated, [1, 0, 1], 50)
    np.testing.assert_array_equal(a, b)
    assert rewards_a == rewards_b
    assert [{k: v for k, v in info.items() if k != "date"} for info in infos_b] == infos_a


@pytest.mark.needs("pandas", "polars", "pyarrow")
def test_every_kind_of_data_gives_the_same_env(tmp_path, table):
    import pandas as pd
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = pd.DataFrame(table)
    frame.to_csv(tmp_path / "bars.csv", index=False)
    pq.write_table(pa.table(table), tmp_path / "bars.parquet")
    bars = Bars(
        table["Date"],
        table["Close"],
        features={name: table[name] for name in ("feature_ma5", "feature_volume")},
    )
    expected = _episode(TradingEnv(data=table), [1, 1, 0], 300)
    sources = [frame, pl.DataFrame(table), pa.table(table), bars, tmp_path / "bars.parquet"]
    sources += [frame.set_index("Date"), frame.iloc[::-1]]  # a date index; newest first
    for data in sources:
        observations, infos, rewards = _episode(TradingEnv(data=data), [1, 1, 0], 300)
        np.testing.assert_array_equal(observations, expected[0])
        assert infos == expected[1] and rewards == expected[2]
    from_csv = _episode(TradingEnv(data=str(tmp_path / "bars.csv")), [1, 1, 0], 300)
    np.testing.assert_allclose(from_csv[0], expected[0], rtol=1e-6)  # decimal text


def test_features_and_price_column_choose_columns(table):
    data = {**table, "Adj": table["Close"] * 2, "rsi": np.zeros(len(table["Close"]))}
    env = TradingEnv(data=data, features=["RSI"], price_column="adj")
    assert env.features == ("rsi",) and env.prices[0] == 2 * table["Close"][0]
    assert TradingEnv(data=data, features=[]).observation_space.shape == (11,)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"prices": np.ones(300)}, "give data= .* or prices= .*, not both"),
        ({"features": ["x"], "data": None}, "features= chooses columns of data="),
        ({"data": {"close": np.r_[np.ones(299), np.nan]}}, "row 299, column 'close': nan"),
        ({"data": {"close": np.ones(300), "feature_x": np.r_[np.nan, np.ones(299)]}}, "row 0"),
        ({"data": {"price": np.ones(300)}}, r"no price column 'close'.*\['price'\]"),
    ],
)
def test_bad_data_names_the_problem(kwargs, message):
    kwargs.setdefault("data", {"close": np.ones(300)})
    with pytest.raises(ValueError, match=message):
        TradingEnv(**kwargs)


@pytest.mark.needs("sekai-vector")
def test_dates_reach_the_infos_and_the_env(table, trading_vec_env):
    env = TradingEnv(data=table, episode_length=5)
    assert env._dates.dtype == np.dtype("datetime64[ns]") and len(env._dates) == len(env.prices)
    _, infos, _ = _episode(env, [1] * 5, 200)
    assert [info["date"] for info in infos] == env._dates[200:206].astype("datetime64[us]").tolist()
    assert list(infos[1])[:2] == ["timestamp", "date"]
    vec = trading_vec_env(2, data=table, episode_length=5)
    result = vec.reset(seed=0, options=[{"start": 200}, {"start": 10}])
    assert result.infos[1]["date"] == datetime.datetime(2009, 6, 8)
    assert vec.step([1, 0]).infos[0]["date"] == infos[1]["date"]
    assert TradingEnv()._dates is None and "date" not in TradingEnv().reset(seed=0)[1]


def test_a_date_range_takes_its_dates_from_the_data(table, googl):
    env = TradingEnv(data=table, episode_length=21, sampler=DateRange(start="2017-01-01"))
    for seed in range(5):
        assert env.reset(seed=seed)[1]["date"] >= datetime.datetime(2017, 1, 1)
    env.sampler = DateRange(end="2010-01-01", inner=SequentialStart())
    assert env.reset()[1]["date"] == datetime.datetime(2009, 6, 8)  # bar 10, the first start
    with pytest.raises(ValueError, match="DateRange has 2334 dates, but the env's history has"):
        TradingEnv(data=table, sampler=DateRange(googl.dates[1:]))
    with pytest.raises(ValueError, match="this env has no dates"):
        TradingEnv(googl.close, sampler=DateRange(start="2017-01-01"))
    with pytest.raises(ValueError, match=r"date 2 \(2009-05-22.*\) does not come after date 1"):
        DateRange(googl.dates[[0, 1, 0]])


def test_periods_per_year_is_inferred_from_the_dates(googl, eurusd):
    assert TradingEnv(data=googl).periods_per_year == 252.0
    assert TradingEnv(data=googl, periods_per_year=250).periods_per_year == 250.0
    hourly = TradingEnv(data=datasets.path("EURUSD"))
    assert hourly.periods_per_year == pytest.approx(6225 * 365.25 / 362, rel=1e-3)
    assert TradingEnv(googl.close).periods_per_year == 252.0
    with pytest.warns(UserWarning, match="spanning only"):
        TradingEnv(data=googl.between("2018-04-01"), episode_length=50)


short = {"lookback": 5, "episode_length": 40, "periods_per_year": 252}  # 100 bars: a short span


def _perturbed_after(data: dict[str, np.ndarray], t: int, rng) -> dict[str, np.ndarray]:
    changed = dict(data)
    for name, values in data.items():
        if name.lower() not in ("date", "tic"):
            values = values.copy()
            values[t + 1 :] *= rng.uniform(0.9, 1.1, size=values[t + 1 :].shape)
            changed[name] = values
    return changed


@settings(max_examples=25, deadline=None)
@given(st.integers(20, 60), st.integers(0, 2**32 - 1))
def test_trading_sees_nothing_after_its_bar(table, t, seed):
    """Perturbing every row after bar t (prices and features) changes nothing observed at or
    before bar t."""
    rng = np.random.default_rng(seed)
    data = {name: values[:100] for name, values in table.items()}
    actions = rng.integers(-1, 2, size=40)
    runs = [
        _episode(TradingEnv(data=d, allow_short=True, **short), actions, 15)
        for d in (data, _perturbed_after(data, t, rng))
    ]
    seen = t - 15 + 1  # observations and infos of decision bars 15..t
    np.testing.assert_array_equal(runs[0][0][:seen], runs[1][0][:seen])
    assert runs[0][1][:seen] == runs[1][1][:seen]
    assert runs[0][2][: seen - 1] == runs[1][2][: seen - 1]


def _long_table(googl, eurusd, n: int = 400) -> dict[str, np.ndarray]:
    """A FinRL-style long table (date, tic, close, a feature) of two assets, n dates."""
    dates = googl.dates[:n]
    close = np.concatenate([googl.close[:n], eurusd.close[:n]])
    momentum = np.concatenate([np.r_[0.0, np.diff(np.log(c))] for c in (close[:n], close[n:])])
    return {
        "date": np.tile(dates, 2),
        "tic": np.repeat(["GOOGL", "EURUSD"], n),
        "close": close,
        "feature_momentum": momentum,
    }


@settings(max_examples=15, deadline=None)
@given(st.integers(20, 60), st.integers(0, 2**32 - 1))
def test_portfolio_sees_nothing_after_its_bar(googl, eurusd, t, seed):
    rng = np.random.default_rng(seed)
    long = _long_table(googl, eurusd, 100)
    n = 100
    changed = _perturbed_after({k: v.reshape(2, n).T for k, v in long.items()}, t, rng)
    changed = {k: v.T.ravel() for k, v in changed.items()}
    actions = rng.dirichlet(np.ones(3), size=40)
    runs = [_episode(PortfolioEnv(data=d, **short), actions, 15) for d in (long, changed)]
    seen = t - 15 + 1
    np.testing.assert_array_equal(runs[0][0][:seen], runs[1][0][:seen])
    for a, b in zip(runs[0][1][:seen], runs[1][1][:seen], strict=True):
        assert a.keys() == b.keys() and a["date"] == b["date"]
        np.testing.assert_array_equal(a["weights"], b["weights"])
        assert a["wealth"] == b["wealth"] and a["cost"] == b["cost"]


def test_portfolio_reads_a_long_table_with_features_in_a_documented_layout(googl, eurusd):
    long = _long_table(googl, eurusd)
    env = PortfolioEnv(data=long, lookback=4)
    assert env.n_assets == 2 and env.features == ("feature_momentum",)
    assert env.symbols == ("GOOGL", "EURUSD") and PortfolioEnv().symbols is None
    assert env.observation_space.shape == (4 * 2 * 2 + 2 + 1,)
    observation, info = env.reset(seed=0, options={"start": 50})
    rows = observation[:-3].reshape(4, 4)  # per bar: 2 returns, then 2 assets' features
    bars = np.arange(47, 51)
    np.testing.assert_array_equal(
        rows[:, 0], np.log(googl.close[bars] / googl.close[bars - 1]).astype(np.float32)
    )
    np.testing.assert_array_equal(rows[:, 1], long["feature_momentum"][400 + bars].astype("f4"))
    np.testing.assert_array_equal(rows[:, 3], rows[:, 1])  # a momentum is the log return
    np.testing.assert_array_equal(observation[-3:], [0, 0, 1])
    assert info["date"] == googl.dates[50].astype("datetime64[us]").item()
    by_symbol = {
        "GOOGL": {"date": googl.dates[:400], "close": googl.close[:400]},
        "EURUSD": {"date": googl.dates[:400], "close": eurusd.close[:400]},
    }
    plain = PortfolioEnv(data=by_symbol)
    assert plain.observation_space.shape == (10 * 2 + 3,)
    np.testing.assert_array_equal(plain.prices, env.prices)


def test_portfolio_aligns_dates_or_names_the_missing_one(googl, eurusd):
    gappy = {"date": np.delete(googl.dates[:400], 123), "close": np.delete(eurusd.close[:400], 123)}
    data = {"GOOGL": {"date": googl.dates[:400], "close": googl.close[:400]}, "EUR": gappy}
    with pytest.raises(ValueError, match="symbol 'EUR' has no bar dated 2009-11-16, which"):
        PortfolioEnv(data=data)
    inner = PortfolioEnv(data=data, align="inner")
    assert (
        len(inner.prices) == 399
        and 123 not in np.flatnonzero(np.isin(googl.dates[:400], inner._dates)) - 0
    )
    with pytest.raises(ValueError, match=r"align= chooses columns of data="):
        PortfolioEnv(align="inner")


def test_max_leverage_needs_shorts_and_costs_stay_below_one():
    with pytest.raises(ValueError, match=r"max_leverage=2\.0 .* needs allow_short=True"):
        PortfolioEnv(max_leverage=2.0)
    assert PortfolioEnv(max_leverage=2.0, allow_short=True).action_space.max_leverage == 2.0
    for env_class in (TradingEnv, PortfolioEnv):
        with pytest.raises(ValueError, match="transaction_cost must be below 1"):
            env_class(transaction_cost=1.0)
        env_class(transaction_cost=0.999)


def test_empty_prices_and_wrong_action_shapes_name_the_problem():
    with pytest.raises(ValueError, match=r"prices is empty: .* 263 bars are needed"):
        TradingEnv(prices=[])
    env = TradingEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"one action, a position, got an array of shape \(2,\)"):
        env.step(np.array([1, 0]))
    assert env.step(np.array([1])).info["position"] == 1


@pytest.mark.needs("sekai-vector")
@pytest.mark.parametrize("kind", ["trading", "portfolio"])
def test_native_and_single_agree_exactly_on_data_with_features(
    kind, table, googl, eurusd, trading_vec_env, portfolio_vec_env
):
    if kind == "trading":
        env_class, vec_class, data = TradingEnv, trading_vec_env, table
        actions = np.random.default_rng(1).integers(-1, 2, size=(60, 3))
        kwargs = {"data": data, "allow_short": True, "episode_length": 60}
    else:
        env_class, vec_class, data = PortfolioEnv, portfolio_vec_env, _long_table(googl, eurusd)
        actions = np.random.default_rng(1).dirichlet(np.ones(3), size=(60, 3))
        kwargs = {"data": data, "episode_length": 60}
    starts = [10, 120, 250]
    vec = vec_class(3, autoreset=False, **kwargs)
    assert vec.template.data is data
    with pytest.raises(AttributeError, match="data is read-only"):
        vec.set_attr("data", None)
    with pytest.raises(AttributeError, match="features is read-only"):
        vec.template.features = ()
    result = vec.reset(seed=0, options=[{"start": s} for s in starts])
    observations, infos = [result.observations], [result.infos]
    for row in actions:
        result = vec.step(row)
        observations.append(result.observations)
        infos.append(result.infos)
    for i, start in enumerate(starts):
        single, single_infos, _ = _episode(env_class(**kwargs), actions[:, i], start)
        np.testing.assert_array_equal(single, np.array(observations)[:, i])
        for a, b in zip(single_infos, [row[i] for row in infos], strict=True):
            assert a.keys() == b.keys()
            for key in a:
                np.testing.assert_array_equal(a[key], b[key])


def test_envs_on_data_with_features_keep_the_env_contract(table, googl, eurusd):
    for env in (TradingEnv(data=table), PortfolioEnv(data=_long_table(googl, eurusd))):
        sekai.check_env(env)


def test_a_finrl_csv_feeds_portfolio(tmp_path, googl, eurusd):
    """FinRL writes ``date,tic,close,...`` sorted by date then tic; its indicators are plain
    column names, chosen with features=."""
    long = _long_table(googl, eurusd, 300)
    order = np.lexsort((long["tic"], long["date"]))
    lines = ["date,tic,open,close,macd"] + [
        f"{str(long['date'][i])[:10]},{long['tic'][i]},1.0,{float(long['close'][i])!r},"
        f"{float(long['feature_momentum'][i])!r}"
        for i in order
    ]
    (tmp_path / "finrl.csv").write_text("\n".join(lines) + "\n")
    env = PortfolioEnv(data=tmp_path / "finrl.csv", features=["macd"], episode_length=100)
    assert env.symbols == ("EURUSD", "GOOGL") and env.features == ("macd",)
    np.testing.assert_array_equal(env.prices[:, 1], googl.close[:300])
    expected = PortfolioEnv(data=long, episode_length=100).reset(seed=0, options={"start": 99})
    observation, _ = env.reset(seed=0, options={"start": 99})
    np.testing.assert_array_equal(observation[-3:], expected.observation[-3:])
    rows = observation[:-3].reshape(10, 4)  # returns of EURUSD, GOOGL; then their macd
    np.testing.assert_array_equal(rows, expected.observation[:-3].reshape(10, 4)[:, [1, 0, 3, 2]])
