"""The progress display: rates that follow the job, not the bursts its counts arrive in; a
percentage and the time left for sources of known size; a display that fits the terminal;
a summary that counts start-up."""
import io
import os
import re

import pytest

from segflow.api.environment import StreamEnvironment
from segflow.cli import progress_bar
from segflow.cli.progress_bar import Progress, completion, expected_records, seconds_left
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


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_terminal_display_fits_its_width_and_shows_the_percentage(monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    out = Terminal()
    progress = Progress(out)
    progress.expect({0: 1000})
    names = {0: "generate", 1: "add_timestamps(reading)", 2: "window.process(summary)"}
    progress({0: 250, 1: 240, 2: 200}, names)
    progress.say("segflow: a message above the bar")
    progress({0: 500, 1: 490, 2: 450}, names, checkpoint="chk 2")
    progress._display.refresh()
    progress.finish()
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())
    rows = [row for row in re.split(r"[\r\n]", screen) if row.strip()]
    assert rows and all(len(row) <= 60 for row in rows), rows
    assert any(" 50%" in row and "b0 generate" in row for row in rows), rows
    assert "segflow: a message above the bar" in rows


def test_percentage_and_time_left_come_from_the_sources_of_known_size():
    env = StreamEnvironment()
    env.generate(lambda i: i, count=500).map(str).collect()
    env.generate(lambda i: i).collect()
    assert expected_records(env.graph) == {0: 500}
    assert completion({0: 125, 3: 10**6}, {0: 500}) == (125, 500)
    assert completion({0: 900}, {0: 500}) == (500, 500)
    assert completion({0: 5}, {}) is None
    assert seconds_left(125, 500, 25.0) == 15.0 and seconds_left(1, 2, 0.0) is None


def test_plain_lines_carry_the_percentage_and_time_left(monkeypatch):
    clock = iter([10.0, 12.0])
    monkeypatch.setattr(progress_bar.time, "monotonic", lambda: next(clock))
    out = io.StringIO()
    progress = Progress(out, enabled=True)
    progress.expect({0: 1000})
    progress({0: 100}, {0: "generate"})
    progress({0: 300}, {0: "generate"})
    first, second = out.getvalue().splitlines()
    assert first.startswith("10% | b0 generate 0/s")
    assert second.startswith("30% 7 s left | b0 generate 100/s"), second


def test_forced_progress_prints_a_plain_line_per_call():
    out = io.StringIO()
    progress = Progress(out, enabled=True)
    progress({0: 10, 1: 4}, {0: "generate", 1: "map"})
    progress({0: 20, 1: 8}, {0: "generate", 1: "map"}, checkpoint="chk 3")
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].startswith("b0 generate ") and lines[1].endswith("| chk 3")
    assert "%" not in out.getvalue()       # no source said how much it reads


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
