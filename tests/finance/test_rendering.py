"""render_mode="rgb_array" for the finance envs: each draws a non-trivial frame of its episode,
which changes as the episode goes on; wrong modes are a ValueError naming the allowed ones."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import sekai
from sekai._raster import _text_mask

SINGLE_IDS = ["Trading-v0", "Portfolio-v0", "MarketMaking-v0", "OptimalExecution-v0"]


def _colours(frame: np.ndarray) -> int:
    return len(np.unique(frame.reshape(-1, 3), axis=0))


def _check_frame(frame: np.ndarray, shape: tuple[int, int, int]) -> None:
    assert frame.shape == shape and frame.dtype == np.uint8
    assert _colours(frame) >= 6  # axes, background, lines in several colours, anti-aliasing
    assert (frame != 255).any(axis=2).mean() > 0.02  # not blank: a share of the pixels is drawn


@pytest.mark.parametrize("env_id", SINGLE_IDS)
def test_single_env_frame_shows_the_episode_and_changes_with_it(env_id):
    env = sekai.make(env_id, render_mode="rgb_array")
    assert env.render_mode == "rgb_array" and "rgb_array" in env.metadata["render_modes"]
    env.reset(seed=1)
    env.action_space.seed(1)
    first = env.render()
    _check_frame(first, (400, 600, 3))
    for _ in range(8):
        env.step(env.action_space.sample())
    before = env.render()
    env.step(env.action_space.sample())
    after = env.render()
    _check_frame(after, (400, 600, 3))
    assert not np.array_equal(first, before)
    assert not np.array_equal(before, after)  # each step redraws
    env.reset(seed=1)
    assert np.array_equal(env.render(), first)  # a new episode starts a new picture


@pytest.mark.parametrize("env_id", SINGLE_IDS)
def test_render_before_reset_is_none_and_ansi_still_a_line(env_id):
    assert sekai.make(env_id, render_mode="rgb_array").render() is None
    env = sekai.make(env_id, render_mode="ansi")
    env.reset(seed=0)
    assert isinstance(env.render(), str)


def test_trading_frame_marks_buys_green_and_sells_red():
    env = sekai.make("Trading-v0", render_mode="rgb_array")
    env.reset(seed=0)
    for action in (1, 1, 0, 0, 1, 0):
        env.step(action)
    frame = env.render().astype(int)
    price_chart = frame[10:181]
    greenish = (
        (price_chart[..., 1] > 120) & (price_chart[..., 0] < 80) & (price_chart[..., 2] < 100)
    )
    reddish = (price_chart[..., 0] > 180) & (price_chart[..., 1] < 80) & (price_chart[..., 2] < 80)
    assert greenish.sum() > 20 and reddish.sum() > 20


@pytest.mark.parametrize("env_id", [*SINGLE_IDS, "LimitOrderBook-v0"])
def test_an_unknown_mode_is_a_value_error_naming_the_allowed_ones(env_id):
    with pytest.raises(
        ValueError, match=r"render_mode must be None or one of .*'rgb_array'.*'svg'"
    ):
        sekai.make(env_id, render_mode="svg")


def test_limit_order_book_frame_shows_the_book_and_the_session():
    env = sekai.make("LimitOrderBook-v0", render_mode="rgb_array")
    observations, _ = env.reset(seed=0)
    for agent in env.possible_agents:
        env.action_spaces[agent].seed(0)
    first = env.render()
    _check_frame(first, (520, 600, 3))
    book = first[10:111].astype(int)
    assert ((book[..., 1] > 120) & (book[..., 0] < 80)).sum() > 50  # green bids
    assert ((book[..., 0] > 180) & (book[..., 1] < 80)).sum() > 50  # red asks
    for _ in range(10):
        actions = {a: env.action_spaces[a].sample(mask=env.action_mask(a)) for a in observations}
        observations = env.step(actions).observations
    later = env.render()
    _check_frame(later, (520, 600, 3))
    assert not np.array_equal(first, later)
    for text in ("book: lots by price", "bids", "asks", "mid price", "values", "inventory"):
        assert _has_text(later, text), text
    assert all(_has_text(later, agent) for agent in env.possible_agents)  # the legend


@pytest.mark.needs("sekai-vector")
@pytest.mark.parametrize("env_id", SINGLE_IDS)
def test_native_vec_render_is_one_frame_per_sub_env(env_id):
    with sekai.make_vec(env_id, 3, "native", render_mode="rgb_array") as vec:
        assert vec.render_mode == "rgb_array" and "rgb_array" in vec.metadata["render_modes"]
        assert vec.render() == [None, None, None]
        vec.reset(seed=[5, 6, 7])
        vec.action_space.seed(0)
        for _ in range(8):
            vec.step(np.stack([vec.action_space.sample() for _ in range(3)]))
        frames = vec.render()
    assert len(frames) == 3
    for frame in frames:
        _check_frame(frame, (400, 600, 3))
    assert not np.array_equal(frames[1], frames[2])  # each sub-env draws its own episode


# -- readable frames: labels, rebased prices, dates, legend ----------------------------------------
_TEXT = (40, 40, 40)  # the frames' text colour


def _has_text(frame: np.ndarray, text: str, color: tuple[int, int, int] = _TEXT) -> bool:
    """Whether ``text`` is written in ``color`` somewhere in ``frame``: its glyphs' pixels in
    that colour and no other pixel of its box."""
    mask = _text_mask(text)
    inked = (frame == color).all(axis=2)
    windows = np.lib.stride_tricks.sliding_window_view(inked, mask.shape)
    return bool((windows == mask).all(axis=(2, 3)).any())


def _played(env_id: str, steps: int, action=None, **kwargs):
    env = sekai.make(env_id, render_mode="rgb_array", **kwargs)
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(steps):
        env.step(env.action_space.sample() if action is None else action)
    return env


def test_trading_frame_names_its_charts_and_labels_its_axes_with_steps():
    frame = _played("Trading-v0", 30).render()
    for text in ("price", "equity", "position", "buy", "sell", "step", "0", "10", "20", "30"):
        assert _has_text(frame, text), text
    assert not _has_text(frame, "date")


def test_portfolio_rebases_prices_so_a_cheap_asset_is_not_flattened_by_a_dear_one():
    t = np.arange(300.0)
    prices = np.column_stack([1000.0 * (1 + 0.3 * t / 300), 1.0 * (1 - 0.3 * t / 300)])
    env = sekai.make(
        "Portfolio-v0",
        prices=prices,
        episode_length=100,
        render_mode="rgb_array",
        sampler="sequential",
    )
    env.reset(seed=0)
    for _ in range(100):
        env.step(np.array([0.3, 0.3, 0.4]))
    frame = env.render()
    assert _has_text(frame, "price / first price")
    chart = frame[22:168].astype(int)  # the price chart's box
    for color in ((31, 90, 180), (230, 130, 20)):  # the two assets' colours
        rows = np.flatnonzero((np.abs(chart - color).max(axis=2) < 10).any(axis=1))
        assert rows.max() - rows.min() > 0.4 * len(chart)  # each moves over the chart


def test_portfolio_legend_names_the_assets_and_cash_and_weights_stack_in_their_colours():
    env = _played("Portfolio-v0", 20, np.array([0.5, 0.2, 0.2, 0.1]), n_assets=3)
    frame = env.render()
    for text in ("asset 1", "asset 2", "asset 3", "cash", "weights, stacked", "wealth"):
        assert _has_text(frame, text), text
    column = frame[294:359, 580].astype(int)  # the weights chart at the last steps
    shares = [
        (np.abs(column - color).max(axis=1) < 3).mean()
        for color in ((31, 90, 180), (230, 130, 20), (40, 160, 160), (190, 190, 190))
    ]
    # (the weights drift a little with the prices after each rebalance)
    np.testing.assert_allclose(np.array(shares) / sum(shares), [0.5, 0.2, 0.2, 0.1], atol=0.04)
    env.unwrapped._symbols = ["GOOGL", "MSFT", "AAPL"]
    assert _has_text(env.render(), "GOOGL") and _has_text(env.render(), "AAPL")


def test_a_legend_too_long_for_the_frame_numbers_the_assets():
    frame = _played("Portfolio-v0", 5, np.full(11, 1 / 11), n_assets=10).render()
    assert _has_text(frame, "10") and _has_text(frame, "cash")
    assert not _has_text(frame, "asset 1")


def test_portfolio_with_short_weights_draws_them_as_lines():
    env = _played(
        "Portfolio-v0",
        10,
        np.array([1.0, -0.5, 0.5]),
        n_assets=2,
        allow_short=True,
        max_leverage=2.0,
    )
    frame = env.render()
    assert _has_text(frame, "weights") and not _has_text(frame, "weights, stacked")


def test_dated_data_puts_dates_on_the_x_axis(googl):
    bars = googl
    env = sekai.make("Trading-v0", prices=bars.close, render_mode="rgb_array")
    env.unwrapped._dates = bars.dates
    env.reset(options={"start": 500})
    for _ in range(150):
        env.step(1)
    frame = env.render()
    assert _has_text(frame, "date") and not _has_text(frame, "step")
    # 150 daily bars from bar 500: the months that begin within them
    dates = bars.dates[500:651].astype("datetime64[M]")
    months = sorted({str(d) for d in dates[1:][np.diff(dates.astype(int)) != 0]})
    assert months and all(_has_text(frame, month) for month in months)
    env.unwrapped._dates = bars.dates[:100]
    with pytest.raises(ValueError, match="_dates must hold one date per bar"):
        env.render()


def test_hourly_dates_are_labelled_by_day_at_midnight():
    from sekai.envs.finance._pictures import _date_ticks

    hours = np.arange("2017-10-24T21", "2017-10-27T05", dtype="datetime64[h]")
    ticks, labels = _date_ticks(hours.astype("datetime64[ns]"), 538)
    assert labels == ["2017-10-25", "2017-10-26", "2017-10-27"]
    assert [str(hours[int(t)]) for t in ticks] == [f"2017-10-2{d}T00" for d in (5, 6, 7)]
    one, label = _date_ticks(hours[:1], 538)
    assert list(one) == [0.0] and label == ["2017-10-24"]


@pytest.mark.needs("sekai-vector")
def test_native_vec_frames_take_their_dates_from_the_template(googl):
    bars = googl
    with sekai.make_vec(
        "Trading-v0", 2, "native", prices=bars.close, render_mode="rgb_array"
    ) as vec:
        vec.template._dates = bars.dates
        vec.reset(seed=0)
        for _ in range(60):
            vec.step(np.ones(2, np.int64))
        frames = vec.render()
    assert all(_has_text(frame, "date") for frame in frames)


@pytest.mark.needs("matplotlib")
def test_the_docs_frames_example_saves_both_pictures(tmp_path, monkeypatch):
    """examples/finance_frames.py, which draws the frames docs/finance.md shows."""
    import runpy

    from matplotlib.image import imread

    example = Path(__file__).resolve().parents[2] / "examples" / "finance_frames.py"
    monkeypatch.setattr(sys, "argv", ["finance_frames.py", str(tmp_path)])
    runpy.run_path(str(example), run_name="__main__")
    trading = (imread(tmp_path / "frame-trading.png")[..., :3] * 255).round().astype(np.uint8)
    portfolio = (imread(tmp_path / "frame-portfolio.png")[..., :3] * 255).round().astype(np.uint8)
    assert trading.shape == portfolio.shape == (400, 600, 3)
    assert _has_text(trading, "date") and _has_text(trading, "2016-10")
    assert _has_text(portfolio, "weights, stacked") and _has_text(portfolio, "asset 5")
