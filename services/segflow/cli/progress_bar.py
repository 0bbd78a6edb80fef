"""Live progress on a terminal: records per second per block, and for sources that know
how much they will read, a bar with the percentage done and the time left.

On a terminal it is a rich display that redraws in place and fits the terminal's width
(messages printed through :meth:`Progress.say` appear above it); elsewhere, when forced
on, one plain line per update.
"""
from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, TextIO

from ..observability.rates import RateMeter

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress
    from rich.progress import TaskID


def human(n: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.1f}{unit}"
    return f"{n:.0f}"


def describe(rates: dict[int, float], names: dict[int, str], checkpoint: str = "") -> str:
    """``b0 generate 3.0k/s | b1 map 2.9k/s | chk 4``."""
    parts = [f"b{block} {names.get(block, '')[:18]} {human(rates[block])}/s" for block in sorted(rates)]
    if checkpoint:
        parts.append(checkpoint)
    return " | ".join(parts)


def expected_records(graph) -> dict[int, int]:
    """Source block -> the records it will read, for the sources that know (``generate``
    with a count)."""
    return {b.id: b.expected_records for b in graph.blocks if b.is_source and b.expected_records is not None}


def completion(records_in: dict[int, int], expected: dict[int, int]) -> tuple[int, int] | None:
    """(records read, records to read) over the sources that know their size, or None."""
    if not expected:
        return None
    total = sum(expected.values())
    return min(sum(records_in.get(block, 0) for block in expected), total), total


def seconds_left(done: int, total: int, rate: float) -> float | None:
    """At ``rate`` records/s; None while there is no rate to go by."""
    if rate <= 0:
        return None
    return max(total - done, 0) / rate


class Progress:
    """Called by the runtime about once a second. By default it shows only on a TTY."""

    def __init__(self, stream: TextIO = sys.stderr, enabled: bool | None = None):
        self.stream = stream
        self.tty = stream.isatty()
        self.enabled = self.tty if enabled is None else enabled
        self.meter = RateMeter()
        self.expected: dict[int, int] = {}
        self._display: RichProgress | None = None       # while shown on a terminal
        self._task: TaskID | None = None

    def expect(self, expected: dict[int, int]) -> None:
        """Source block -> the records it will read (sources whose size is known)."""
        self.expected = dict(expected)

    def __call__(self, records_in: dict[int, int], names: dict[int, str], checkpoint: str = "") -> None:
        if not self.enabled:
            return
        rates = self.meter.add(time.monotonic(), records_in)
        line = describe(rates, names, checkpoint)
        done = completion(records_in, self.expected)
        if not self.tty:
            if done is not None:
                left = seconds_left(*done, sum(rates.get(b, 0.0) for b in self.expected))
                line = f"{done[0] / max(done[1], 1):.0%}" + (f" {left:.0f} s left" if left is not None else "") + \
                    f" | {line}"
            self.stream.write(line + "\n")
            self.stream.flush()
            return
        if self._display is None or self._task is None:
            display, task = self._start(bounded=done is not None)
        else:
            display, task = self._display, self._task
        if done is None:
            display.update(task, rates=line)
        else:
            display.update(task, completed=done[0], total=done[1], rates=line)

    def _start(self, bounded: bool) -> tuple[RichProgress, TaskID]:
        # Imported here: every worker process imports this module, and rich takes ~50 ms.
        from rich.console import Console
        from rich.progress import BarColumn, SpinnerColumn, TaskProgressColumn, TextColumn, TimeRemainingColumn
        from rich.progress import Progress as RichProgress
        from rich.table import Column

        rates = TextColumn("{task.fields[rates]}", table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1))
        columns = ([BarColumn(bar_width=24), TaskProgressColumn(), TimeRemainingColumn(compact=True)] if bounded
                   else [SpinnerColumn()])
        display = RichProgress(*columns, rates, console=Console(file=self.stream), transient=True,
                               expand=True, refresh_per_second=4)
        task = display.add_task("job", total=None, rates="")
        display.start()
        self._display, self._task = display, task
        return display, task

    def say(self, text: str) -> None:
        """A message above the display (or a plain line when there is none)."""
        if self._display is not None:
            self._display.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, file=self.stream, flush=True)

    def finish(self) -> None:
        if self._display is not None:
            self._display.stop()
            self._display = None
