"""Live progress on a terminal: records per second per block, refreshed in place."""
from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO

from ..observability.rates import RateMeter


def human(n: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.1f}{unit}"
    return f"{n:.0f}"


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
