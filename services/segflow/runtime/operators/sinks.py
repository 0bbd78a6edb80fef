"""Sinks: results back to the caller, a function per record, and part files per replica."""
from __future__ import annotations

import csv
import io
import json
import os
import re
from typing import Any, Callable

from ..elements import Batch
from ..operator import Operator, Output, UserCall


class CollectSink(Operator):
    """Gathers records and delivers them to the caller at each end of stream."""

    state_fields = ("items",)

    def __init__(self, sink_id: int):
        self.sink_id = sink_id
        self.items: list = []

    def process(self, batch: Batch) -> Output:
        self.items.extend(batch.items)
        return None

    def on_end(self) -> Output:
        items, self.items = self.items, []
        self.ctx.deliver(self.sink_id, items)
        return None


class ForEachSink(Operator):
    def __init__(self, fn: Callable[[Any], Any]):
        self.fn = fn
        self.call = UserCall(self)

    def process(self, batch: Batch) -> Output:
        fn = self.fn
        i = 0
        items = batch.items
        try:
            for i, x in enumerate(items):
                fn(x)
        except Exception as exc:
            raise self.call.error(exc, i, items[i]) from exc
        self.call.seen += len(items)
        return None


def part_name(index: int, suffix: str) -> str:
    return f"part-{index:05d}{suffix}"


_PART = re.compile(r"^part-(\d{5})\.")


class FileSink(Operator):
    """Writes this replica's records to ``DIR/part-NNNNN.<suffix>``.

    The part appears under its final name only when the stream ends (written to a hidden
    temporary file, then renamed). Replica 0 removes parts left by an earlier run with more
    replicas, so the directory always holds exactly one run's output.
    """

    def __init__(self, directory: str, fmt: str, formatter: Callable | None, delimiter: str = ","):
        self.directory = directory
        self.fmt = fmt
        self.formatter = formatter
        self.delimiter = delimiter
        self.suffix = {"text": ".txt", "csv": ".csv", "jsonl": ".jsonl"}[fmt]
        self.call = UserCall(self)
        self.file: Any = None

    def open(self, ctx) -> None:
        super().open(ctx)
        os.makedirs(self.directory, exist_ok=True)
        if ctx.index == 0:
            for name in os.listdir(self.directory):
                match = _PART.match(name)
                if match and int(match.group(1)) >= ctx.replicas:
                    os.remove(os.path.join(self.directory, name))
        self.final = os.path.join(self.directory, part_name(ctx.index, self.suffix))
        self.temporary = os.path.join(self.directory, "." + part_name(ctx.index, self.suffix) + ".inprogress")
        self.file = open(self.temporary, "w", encoding="utf-8", newline="")

    def process(self, batch: Batch) -> Output:
        items = batch.items
        if self.file is None:
            self.file = open(self.final, "a", encoding="utf-8", newline="")
        try:
            self.file.write(self.render(items))
        except Exception as exc:
            self.call.fail(exc, items, lambda x: self.render([x]))
        self.call.seen += len(items)
        return None

    def render(self, items: list) -> str:
        fmt = self.fmt
        f = self.formatter
        if fmt == "text":
            lines = [str(x) for x in items] if f is None else [f(x) for x in items]
            return "\n".join(lines) + "\n" if lines else ""
        if fmt == "jsonl":
            rows = items if f is None else [f(x) for x in items]
            return "".join(json.dumps(r) + "\n" for r in rows)
        rows = items if f is None else [f(x) for x in items]
        buffer = io.StringIO()
        csv.writer(buffer, delimiter=self.delimiter).writerows(rows)
        return buffer.getvalue()

    def on_end(self) -> Output:
        if self.file is not None:
            self.file.close()
            self.file = None
            if os.path.exists(self.temporary):
                os.replace(self.temporary, self.final)
        return None

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
