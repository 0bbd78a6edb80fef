"""Live progress on a terminal: records per second per block, refreshed in place."""
from __future__ import annotations

import sys
import time
from typing import TextIO


def human(n: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.1f}{unit}"
    return f"{n:.0f}"


class Progress:
    """Called by the runtime about once a second. By default it prints only on a TTY
    (refreshing one line); forced on elsewhere, it prints one plain line per call."""

    def __init__(self, stream: TextIO = sys.stderr, enabled: bool | None = None):
        self.stream = stream
        self.tty = stream.isatty()
        self.enabled = self.tty if enabled is None else enabled
        self.last: dict[int, int] = {}
        self.last_time = time.monotonic()
        self.shown = False

    def __call__(self, records_in: dict[int, int], names: dict[int, str], checkpoint: str = "") -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        elapsed = max(now - self.last_time, 1e-6)
        parts = []
        for block_id, total in sorted(records_in.items()):
            rate = (total - self.last.get(block_id, 0)) / elapsed
            parts.append(f"b{block_id} {names.get(block_id, '')[:18]} {human(rate)}/s")
        self.last, self.last_time = dict(records_in), now
        if checkpoint:
            parts.append(checkpoint)
        line = " | ".join(parts)[:220]
        self.stream.write("\r\x1b[K" + line if self.tty else line + "\n")
        self.stream.flush()
        self.shown = True

    def finish(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
