"""Sinks: results back to the caller, a function per record, and part files per replica
(S3 objects: s3_sink; Redis Streams: redis_streams)."""
from __future__ import annotations

import os
import re
from typing import Any, Callable

from ..elements import FINAL_CHECKPOINT, Batch
from ..operator import Operator, Output, UserCall
from .two_phase import COMMITTED, SUCCESS, PartSink


class CollectSink(Operator):
    """Gathers records for the caller. Without checkpoints it delivers at each end of
    stream; with them, only when the job's end is committed (so a recovery can neither
    lose nor repeat records)."""

    spark_step = "collect"

    state_fields = ("items",)

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        return {"items": [x for s in states for x in s["items"]] if index == 0 else []}

    def __init__(self, sink_id: int):
        self.sink_id = sink_id
        self.items: list = []

    def process(self, batch: Batch) -> Output:
        self.items.extend(batch.items)
        return None

    def on_end(self) -> Output:
        if not self.ctx.transactional:
            self._deliver()
        return None

    def on_checkpoint_complete(self, checkpoint_id: int) -> None:
        if checkpoint_id == FINAL_CHECKPOINT:
            self._deliver()

    def _deliver(self) -> None:
        items, self.items = self.items, []
        self.ctx.deliver(self.sink_id, items)


class ForEachSink(Operator):
    spark_step = "for_each"

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


_PENDING = re.compile(r"^\.part-(\d{5})\.epoch-(\d+)\.pending$")


class FileSink(PartSink):
    """Writes this replica's records to part files in ``directory`` (the layout and the
    commit protocol are :class:`PartSink`'s and :class:`EpochSink`'s).

    The open epoch is written to a hidden in-progress file; closing it renames that file to
    a hidden pending file, and publishing renames the pending file to its part name. Both are
    renames within one directory, so a part appears whole or not at all, and publishing a
    second time finds nothing left to rename.
    """

    spark_step = "write_parts"

    def spark_refusal(self) -> tuple[str, str] | None:
        return None          # the Spark runner writes the same part files (segflow.spark.sinks)

    def __init__(self, directory: str, fmt: str, formatter: Callable | None, delimiter: str = ","):
        super().__init__(fmt, formatter, delimiter)
        self.directory = directory
        self.file: Any = None

    def _path(self, name: str) -> str:
        return os.path.join(self.directory, name)

    def _names(self) -> list[str]:
        return os.listdir(self.directory)

    def _remove(self, names: list[str]) -> None:
        for name in names:
            os.remove(self._path(name))

    def _marker_names(self) -> list[str]:
        try:
            return [COMMITTED + name for name in os.listdir(self._path(COMMITTED))]
        except FileNotFoundError:
            return []

    def _put_marker(self, name: str, data: bytes) -> None:
        target = self._path(name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        # Hidden, beside the target, and per replica: replicas may race to write _SUCCESS.
        temporary = os.path.join(os.path.dirname(target), f".{os.path.basename(name)}.{self.ctx.index}.tmp")
        with open(temporary, "wb") as f:
            f.write(data)
        os.replace(temporary, target)

    def _get_marker(self, name: str) -> bytes | None:
        try:
            with open(self._path(name), "rb") as f:
                return f.read()
        except FileNotFoundError:
            return None

    def _remove_success(self) -> None:
        try:
            os.remove(self._path(SUCCESS))
        except FileNotFoundError:
            pass

    def _open_storage(self) -> None:
        os.makedirs(self.directory, exist_ok=True)
        index = self.ctx.index
        staged = set(self.pending.values())
        self._remove([name for name in self._names()
                      if (m := _PENDING.match(name)) and int(m.group(1)) == index and name not in staged])
        self.temporary = self._path(f".part-{index:05d}.inprogress")
        self.file = open(self.temporary, "w", encoding="utf-8", newline="")

    def _write(self, rendered: str) -> None:
        if self.file is None:
            self.file = open(self.temporary, "a", encoding="utf-8", newline="")
        self.file.write(rendered)

    def _close_file(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None

    def _stage(self, epoch: int) -> str | None:
        self._close_file()
        if not os.path.exists(self.temporary):
            return None
        if os.path.getsize(self.temporary) == 0:
            os.remove(self.temporary)
            return None
        name = f".part-{self.ctx.index:05d}.epoch-{epoch}.pending"
        os.replace(self.temporary, self._path(name))
        return name

    def _publish(self, epoch: int, staged: str) -> None:
        if os.path.exists(self._path(staged)):
            os.replace(self._path(staged), self._path(self._part_name(epoch)))

    def _finish(self) -> None:
        self._close_file()
        if os.path.exists(self.temporary):
            os.replace(self.temporary, self._path(self._part_name(None)))

    def close(self) -> None:
        self._close_file()
