"""The progress line: rates that follow the job, not the bursts its counts arrive in; a
line that fits the terminal; a summary that counts start-up."""
import io
import os

import pytest

from segflow.cli.progress_bar import Progress, fit
from segflow.observability.rates import RateMeter
from test_wordcount_contract import WORDCOUNT, segflow


def test_bursty_counts_give_the_steady_rate():
    """Counts reach the client once a second in bursts while the screen refreshes every
    0.25 s: between refreshes the naive rate is 0 or 4x; over the window it is 1000/s."""
    meter = RateMeter(window=5.0)
    total, shown = 0, []
    for tick in range(1, 81):
        now = tick * 0.25
        if tick % 4 == 0:
            total += 1000
        shown.append(meter.add(now, {0: total})[0])
    steady = shown[30:]
    assert all(800 <= rate <= 1250 for rate in steady), steady


def test_the_rate_follows_a_change_within_the_window():
    meter = RateMeter(window=2.0)
    total = 0
    for second in range(1, 21):
        total += 100 if second <= 10 else 1000
        rate = meter.add(float(second), {0: total})[0]
    assert rate == pytest.approx(1000, rel=0.01)


def test_no_rate_before_time_has_passed():
    meter = RateMeter()
    assert meter.add(10.0, {0: 5, 1: 0}) == {0: 0.0, 1: 0.0}


def test_a_line_fits_the_terminal():
    assert fit("x" * 200, 80) == "x" * 78 + "…"
    assert len(fit("x" * 200, 80)) == 79
    assert fit("short", 80) == "short"


def test_forced_progress_prints_a_plain_line_per_call():
    out = io.StringIO()
    progress = Progress(out, enabled=True)
    progress({0: 10, 1: 4}, {0: "generate", 1: "map"})
    progress({0: 20, 1: 8}, {0: "generate", 1: "map"}, checkpoint="chk 3")
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].startswith("b0 generate ") and lines[1].endswith("| chk 3")


def test_the_summary_counts_start_up(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b a\n" * 1000, encoding="utf-8")
    result = segflow("run", WORDCOUNT, "-p", f"input={source}", "-p", f"output={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr
    summary = result.stderr.strip().splitlines()[-1]
    assert summary.startswith("segflow: done in ") and " s starting and stopping, " in summary
    wall = float(summary.split("done in ")[1].split(" s")[0])
    running = float(summary.split("stopping, ")[1].split(" s running")[0])
    assert 0 <= running < wall
    assert os.path.isdir(tmp_path / "out")
