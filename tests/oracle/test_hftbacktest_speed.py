"""benchmarks/hftbacktest_speed.py --quick runs end to end and prints every figure of its
three sections, well formed (the speeds themselves are the script's to measure, not a test's)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
NUMBER = r"[\d,]+(?:\.\d+)?"
ROW = re.compile(
    rf"^(?P<name>\S.*?)\s+(?P<setup>{NUMBER})\s+(?P<run>{NUMBER})\s+(?P<rate>{NUMBER})$"
)
RATIO = re.compile(rf"^(?P<name>.+): x(?P<ratio>{NUMBER})(?: \(target >= \d+x\))?$")


@pytest.fixture(scope="module")
def printed(tmp_path_factory):
    """The quick run's output, split into its sections (before the first: the preamble)."""
    import subprocess
    import sys

    script = BENCHMARKS / "hftbacktest_speed.py"
    out = subprocess.run(
        [sys.executable, str(script), "--quick"], capture_output=True, text=True, check=True
    ).stdout
    return re.split(r"\n\n(?=\([abc]\) )", out.strip())


def _rows(section: str) -> dict[str, float]:
    """Each timed line's events per second, by name (its setup and run seconds: shown to the
    millisecond, so a tiny day's may be 0.000)."""
    rows = {}
    for line in section.splitlines():
        if match := ROW.match(line):
            setup, run = float(match["setup"]), float(match["run"])
            assert setup >= 0 and run >= 0, line
            rows[match["name"]] = float(match["rate"].replace(",", ""))
    return rows


def _ratios(section: str) -> dict[str, float]:
    return {
        m["name"]: float(m["ratio"].replace(",", ""))
        for line in section.splitlines()
        if (m := RATIO.match(line))
    }


def test_the_quick_run_prints_its_three_sections_with_the_load(printed):
    preamble, *sections = printed
    assert [s[:3] for s in sections] == ["(a)", "(b)", "(c)"]
    assert re.match(rf"load average {NUMBER}, {NUMBER}, {NUMBER} on \d+ cores", preamble)
    assert re.search(rf"^day: {NUMBER} events over {NUMBER} h", preamble, re.M)
    assert re.search(rf"\nload average {NUMBER}, {NUMBER}, {NUMBER}$", sections[-1])


def test_each_section_times_every_side_and_gives_its_ratios(printed):
    _, one, many, book = printed
    at_orders, every_step = "hftbacktest, waking at orders", "hftbacktest, waking every 1 s"
    batch, touch = "sekai make_vec", "sekai make_vec, best bid and ask"
    sides = {
        one: ["sekai LobsterReplay-v0", "sekai replay_orders (compiled)", at_orders, every_step],
        many: [batch, touch, at_orders, every_step],
        book: [
            "sekai OrderBook",
            "sekai compiled replay",
            "hftbacktest, both books",
            "hftbacktest, local book",
        ],
    }
    for section, names in sides.items():
        rows = _rows(section)
        assert list(rows) == names, section
        assert all(rate > 0 for rate in rows.values())
    assert list(_ratios(one)) == [
        f"sekai / {at_orders}",
        f"sekai / {every_step}",
        f"sekai replay_orders / {at_orders}",
        f"sekai replay_orders / {every_step}",
    ]
    assert list(_ratios(many)) == [
        f"{ours} / {theirs} loop" for theirs in (at_orders, every_step) for ours in (batch, touch)
    ]
    assert len(_ratios(book)) == 3
    # each ratio is the quotient of the rates it names (to the printed precision)
    rows = _rows(one)
    ours = rows["sekai LobsterReplay-v0"]
    assert _ratios(one)[f"sekai / {at_orders}"] == pytest.approx(ours / rows[at_orders], abs=0.01)
    compiled = rows["sekai replay_orders (compiled)"] / rows[at_orders]
    assert _ratios(one)[f"sekai replay_orders / {at_orders}"] == pytest.approx(compiled, abs=0.01)


def test_both_sides_fill_orders_and_hftbacktest_fills_the_same_however_often_it_wakes(printed):
    match = re.search(
        r"orders filled: sekai (\d+), hftbacktest (\d+) and (\d+), sekai replay_orders (\d+)",
        printed[1],
    )
    assert match, printed[1]
    sekai, at_orders, every_step, compiled = map(int, match.groups())
    assert sekai > 0 and at_orders > 0
    assert every_step == at_orders
    # every order the env's agent sends fills in replay_orders as in the env; replay_orders is
    # also sent those the env's masks refuse (an improve on a one-tick spread)
    assert compiled >= sekai
