"""benchmarks/finance_throughput.py's load gate and docs table, with a faked load and faked
measurements: no timing here."""

from __future__ import annotations

from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import finance_throughput

    return finance_throughput


@pytest.fixture
def page(bench, tmp_path):
    path = tmp_path / "performance.md"
    path.write_text(f"# Performance\n\n{bench.DOCS_START}\nold table\n{bench.DOCS_END}\n\nmore\n")
    return path


def _loads(monkeypatch, bench, *values):
    """Fake os.getloadavg: each call gives the next 1-minute value, the last one repeating."""
    remaining = list(values)

    def getloadavg():
        value = remaining.pop(0) if len(remaining) > 1 else remaining[0]
        return value, value, value

    monkeypatch.setattr(bench.os, "getloadavg", getloadavg)


def _measured(bench, monkeypatch, *ratios):
    """Fake the issue-24 measurements: one check per ratio, each with target 1.0."""
    checks = [bench.Check(f"ratio {k}", ratio, 1.0) for k, ratio in enumerate(ratios)]
    monkeypatch.setattr(bench, "issue24", lambda seconds, rounds: checks)


def test_the_gate_refuses_a_load_over_1_5_and_names_it(bench):
    assert bench.refusal(1.5) is None
    assert bench.refusal(0.2) is None
    assert "load average is 1.51, over 1.5" in bench.refusal(1.51)


def test_a_busy_machine_gets_exit_status_2_before_any_measurement(bench, page, monkeypatch, capsys):
    before = page.read_text()
    _loads(monkeypatch, bench, 2.4)
    monkeypatch.setattr(bench, "issue24", lambda *args: pytest.fail("measured on a busy machine"))
    assert bench.main(["--issue24", "--write-docs", str(page)]) == 2
    assert page.read_text() == before
    assert "refusing to write the docs table" in capsys.readouterr().err


def test_a_load_that_rises_during_the_runs_refuses_after_them(bench, page, monkeypatch, capsys):
    before = page.read_text()
    _loads(monkeypatch, bench, 0.9, 0.9, 1.8)  # quiet at the start, busy by the second run's end
    _measured(bench, monkeypatch, 1.2, 3.0)
    assert bench.main(["--issue24", "--runs", "2", "--write-docs", str(page)]) == 2
    assert page.read_text() == before
    assert "1.80, over 1.5" in capsys.readouterr().err


def test_a_quiet_machine_gets_the_runs_table_between_the_markers(bench, page, monkeypatch):
    _loads(monkeypatch, bench, 0.7)
    _measured(bench, monkeypatch, 1.25, 3.0)
    assert bench.main(["--issue24", "--runs", "3", "--write-docs", str(page)]) == 0
    text = page.read_text()
    assert "old table" not in text
    assert text.startswith(f"# Performance\n\n{bench.DOCS_START}\n")
    assert text.endswith(f"{bench.DOCS_END}\n\nmore\n")
    assert "| ratio 0 | >= 1x | 1.25x | 1.25x | 1.25x |" in text
    assert "load average 0.70, 0.70, 0.70" in text


def test_a_failing_ratio_makes_the_runs_exit_1(bench, monkeypatch, capsys):
    _loads(monkeypatch, bench, 0.7)
    _measured(bench, monkeypatch, 1.25, 0.99)
    assert bench.main(["--issue24", "--runs", "3"]) == 1
    output = capsys.readouterr().out
    assert output.count("0.99x") == 3
    assert "FAIL" in output and "issue 24: 3 run(s), 3 FAIL" in output


def test_a_page_without_the_markers_is_refused_before_measuring(bench, tmp_path, monkeypatch):
    _loads(monkeypatch, bench, 0.5)
    monkeypatch.setattr(bench, "issue24", lambda *args: pytest.fail("measured for nothing"))
    plain = tmp_path / "plain.md"
    plain.write_text("# no markers\n")
    with pytest.raises(ValueError, match="no block between"):
        bench.main(["--issue24", "--write-docs", str(plain)])


def test_a_reference_ratio_is_printed_and_tabled_but_never_fails(bench, page, monkeypatch, capsys):
    _loads(monkeypatch, bench, 0.7)
    checks = [bench.Check("ratio 0", 1.25, 1.0), bench.Check("  the bound", 0.5, None)]
    monkeypatch.setattr(bench, "issue24", lambda seconds, rounds: checks)
    assert bench.main(["--issue24", "--write-docs", str(page)]) == 0
    output = capsys.readouterr().out
    assert "  the bound" in output and "reference" in output
    assert "1 PASS, 0 FAIL" in output
    assert "| the bound | reference | 0.50x |" in page.read_text()
