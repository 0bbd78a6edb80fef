"""Live progress on a terminal: records per second per block, refreshed in place."""
from __future__ import annotations

import shutil
import sys
import time
from collections import deque
from typing import TextIO

RATE_WINDOW = 5.0       # seconds of counts a rate is averaged over


def human(n: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.1f}{unit}"
    return f"{n:.0f}"


class RateMeter:
    """Per-block rates averaged over the last ``window`` seconds. Counts reach the client in
    bursts (each worker reports about once a second, not in step with the refreshes), so
    the rate between two refreshes swings between 0 and many times the real one; over a
    window of several reports it is the rate the job runs at. Pure: times are given."""

    def __init__(self, window: float = RATE_WINDOW):
        self.window = window
        self.samples: deque[tuple[float, dict[int, int]]] = deque()

    def add(self, now: float, totals: dict[int, int]) -> dict[int, float]:
        """Record the totals at ``now``; the rates (records/s) per block since the oldest
        sample of the window (0 until two samples lie a moment apart)."""
        self.samples.append((now, dict(totals)))
        while len(self.samples) > 2 and now - self.samples[1][0] >= self.window:
            self.samples.popleft()
        first_time, first = self.samples[0]
        elapsed = now - first_time
        if elapsed < 0.1:
            return {block: 0.0 for block in totals}
        return {block: max(0, total - first.get(block, 0)) / elapsed for block, total in totals.items()}


def fit(line: str, columns: int) -> str:
    """``line`` cut to the terminal's width (one column spare: writing the last column
    wraps on some terminals, and the next refresh would then start a new row)."""
    width = max(columns - 1, 10)
    return line if len(line) <= width else line[:width - 1] + "…"


class Progress:
    """Called by the runtime about once a second. By default it prints only on a TTY
    (refreshing one line that fits the terminal); forced on elsewhere, it prints one plain
    line per call."""

    def __init__(self, stream: TextIO = sys.stderr, enabled: bool | None = None):
        self.stream = stream
        self.tty = stream.isatty()
        self.enabled = self.tty if enabled is None else enabled
        self.meter = RateMeter()
        self.shown = False

    def __call__(self, records_in: dict[int, int], names: dict[int, str], checkpoint: str = "") -> None:
        if not self.enabled:
            return
        rates = self.meter.add(time.monotonic(), records_in)
        parts = [f"b{block_id} {names.get(block_id, '')[:18]} {human(rates[block_id])}/s"
                 for block_id in sorted(records_in)]
        if checkpoint:
            parts.append(checkpoint)
        line = " | ".join(parts)
        if self.tty:
            self.stream.write("\r\x1b[K" + fit(line, shutil.get_terminal_size().columns))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.shown = True

    def finish(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
