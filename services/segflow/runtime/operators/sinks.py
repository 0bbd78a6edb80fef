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
from ..snapshots import FINAL_CHECKPOINT


class CollectSink(Operator):
    """Gathers records for the caller. Without checkpoints it delivers at each end of
    stream; with them, only when the job's end is committed (so a recovery can neither
    lose nor repeat records)."""

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


_PART = re.compile(r"^part-(\d{5})[.-]")
_COMMITTED = re.compile(r"^part-(\d{5})-(?:e(\d+)|end)\.")
_PENDING = re.compile(r"^\.part-(\d{5})\.epoch-(\d+)\.pending$")


class FileSink(Operator):
    """Writes this replica's records to part files in ``directory``.

    Without checkpoints: ``part-NNNNN.<ext>``, appearing under its final name when the
    stream ends. With checkpoints (two-phase commit): the records between barriers n-1
    and n form epoch n, closed into a hidden pending file when the snapshot of n is
    taken and renamed to ``part-NNNNN-eN.<ext>`` once checkpoint n is complete
    everywhere; the records after the last barrier are committed when the whole job has
    finished (``part-NNNNN-end.<ext>``). A restore commits what its checkpoint covers and
    deletes whatever was written after it, so the visible output is exactly once.
    A fresh run (not a restore) first removes the parts of earlier runs.
    """

    def __init__(self, directory: str, fmt: str, formatter: Callable | None, delimiter: str = ","):
        self.directory = directory
        self.fmt = fmt
        self.formatter = formatter
        self.delimiter = delimiter
        self.suffix = {"text": ".txt", "csv": ".csv", "jsonl": ".jsonl"}[fmt]
        self.call = UserCall(self)
        self.file: Any = None
        self.pending: list[int] = []       # closed epochs awaiting their checkpoint's completion
        self.restored = False

    state_fields = ("pending",)

    def restore(self, state: dict) -> None:
        super().restore(state)
        self.restored = True

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        """Part files are named by replica index: replica ``i`` keeps old replica ``i``'s
        pending epochs and new replicas start empty. The planner keeps sink blocks at their
        count when a restore has fewer slots (plan.placement.pinned_blocks), so none is
        orphaned."""
        if len(states) > replicas:
            from ..rescale import RescaleError
            raise RescaleError(f"{self.name} cannot hand its pending output to fewer replicas")
        return {"pending": list(states[index]["pending"]) if index < len(states) else []}

    # ---------------------------------------------------------------- names
    def _path(self, name: str) -> str:
        return os.path.join(self.directory, name)

    def _committed_name(self, epoch: int) -> str:
        tail = "end" if epoch == FINAL_CHECKPOINT else f"e{epoch}"
        return f"part-{self.ctx.index:05d}-{tail}{self.suffix}"

    def _pending_name(self, epoch: int) -> str:
        return f".part-{self.ctx.index:05d}.epoch-{epoch}.pending"

    def open(self, ctx) -> None:
        super().open(ctx)
        os.makedirs(self.directory, exist_ok=True)
        mine = f"part-{ctx.index:05d}"
        self.temporary = self._path(f".{mine}.inprogress")
        for name in os.listdir(self.directory):
            match = _PART.match(name)
            if match and not self.restored and (name.startswith(mine) or
                                                (ctx.index == 0 and int(match.group(1)) >= ctx.replicas)):
                os.remove(self._path(name))
            pending = _PENDING.match(name)
            if pending and int(pending.group(1)) == ctx.index and int(pending.group(2)) not in self.pending:
                os.remove(self._path(name))
        if ctx.transactional:
            self.final = None
            if self.restored:
                for epoch in [e for e in self.pending if e <= ctx.restored_from]:
                    self._commit(epoch)
                self._drop_committed_after(ctx.restored_from)
        else:
            self.final = self._path(f"{mine}{self.suffix}")
        self.file = open(self.temporary, "w", encoding="utf-8", newline="")

    def _drop_committed_after(self, checkpoint_id: int) -> None:
        """Restoring an older checkpoint: output committed after it will be produced again."""
        for name in os.listdir(self.directory):
            match = _COMMITTED.match(name)
            if match and int(match.group(1)) == self.ctx.index:
                epoch = FINAL_CHECKPOINT if match.group(2) is None else int(match.group(2))
                if epoch > checkpoint_id:
                    os.remove(self._path(name))

    # ------------------------------------------------------------- writing
    def process(self, batch: Batch) -> Output:
        items = batch.items
        if self.file is None:
            self.file = open(self.temporary if self.final is None else self.final, "a",
                             encoding="utf-8", newline="")
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

    # ----------------------------------------------------------- committing
    def _close_epoch(self, epoch: int) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
        if os.path.exists(self.temporary):
            if os.path.getsize(self.temporary) == 0:
                os.remove(self.temporary)
                return
            os.replace(self.temporary, self._path(self._pending_name(epoch)))
            self.pending.append(epoch)

    def _commit(self, epoch: int) -> None:
        pending = self._path(self._pending_name(epoch))
        if os.path.exists(pending):
            os.replace(pending, self._path(self._committed_name(epoch)))
        if epoch in self.pending:
            self.pending.remove(epoch)

    def prepare_snapshot(self, checkpoint_id: int) -> None:
        if self.ctx.transactional:
            self._close_epoch(checkpoint_id)

    def on_checkpoint_complete(self, checkpoint_id: int) -> None:
        for epoch in sorted(e for e in self.pending if e <= checkpoint_id):
            self._commit(epoch)

    def on_end(self) -> Output:
        if self.ctx.transactional:
            self._close_epoch(FINAL_CHECKPOINT)
        elif self.file is not None:
            self.file.close()
            self.file = None
            if os.path.exists(self.temporary):
                os.replace(self.temporary, self.final)
        return None

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
