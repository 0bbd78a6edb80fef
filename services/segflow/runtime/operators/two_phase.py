"""Two-phase commit of a sink's output by epoch: the protocol shared by the file, S3 and
Redis Streams sinks.

The protocol (which epochs exist, when they close, when they become visible, what a restore
publishes again or withdraws) is the same whatever the external system; only how an epoch
is kept until its checkpoint completes (*staged*) and how it is made visible (*published*)
differ. :class:`EpochSink` holds the protocol and :class:`PartSink` the part-file layout of
the file and S3 sinks, so that each sink is a small storage adapter.
"""
from __future__ import annotations

import csv
import io
import json
import logging
import re
import time
from typing import Any, Callable, TypeVar

from ...errors import JobFailed
from ...observability.logs import event
from ..elements import FINAL_CHECKPOINT, Batch, checkpoint_label
from ..operator import ENGINE_ONLY, Operator, Output, UserCall, engine_only

log = logging.getLogger("segflow.sink")


C = TypeVar("C")

class ConnectorError(JobFailed):
    """An external system that a source or sink reads or writes (Redis, S3) failed or
    refused an operation."""


def opened(connection: C | None, what: str) -> C:
    """The connection a replica's connector makes as it opens; using it before then is a
    bug of the engine, not of the job."""
    if connection is None:
        raise RuntimeError(f"{what} was used before its replica opened it")
    return connection


class EpochSink(Operator):
    """The output of one sink replica, made visible exactly once with the job's checkpoints.

    Without checkpoints (``ctx.transactional`` false) the subclass writes records out as they
    come and :meth:`_finish` ends its output at the end of the stream.

    With checkpoints, the records between barriers n-1 and n form epoch n. When the snapshot
    of checkpoint n is taken, epoch n is closed and staged: :meth:`_stage` returns a handle
    (where the data lies, or the data itself) that the snapshot carries in ``pending``. Once
    checkpoint n is complete everywhere, every pending epoch up to n is published, in order;
    the records after the last barrier form the epoch ``FINAL_CHECKPOINT``, published when
    the whole job has finished. Publishing must be idempotent: a restore publishes again
    what its checkpoint had pending, which may have been published before the failure. A
    restore also withdraws what was published for epochs after its checkpoint, since they
    will be produced again, except epochs its checkpoint still holds pending (an
    uncoordinated protocol's last local checkpoint of a sink, taken at its end, holds the
    ``FINAL_CHECKPOINT`` epoch); a fresh run (not a restore) clears what earlier runs left.

    A commit that fails because the external system is unreachable fails neither the job nor
    the checkpoint: the epoch stays pending (in later snapshots too) and is retried when the
    next checkpoint completes. Only the job's final commit insists, for up to
    ``final_commit_timeout`` seconds, and then fails the job: reporting success with
    unpublished output would lose it.
    """

    spark_step = ENGINE_ONLY

    state_fields = ("pending",)
    final_commit_timeout = 60.0
    retry_every = 1.0

    def spark_refusal(self) -> tuple[str, str] | None:
        return engine_only(self)

    def __init__(self) -> None:
        self.pending: dict[int, Any] = {}    # closed epoch -> staged handle, until published
        self.restored = False
        self.call = UserCall(self)

    def restore(self, state: dict) -> None:
        super().restore(state)
        self.restored = True

    def rescale(self, states: list[dict], index: int, replicas: int) -> dict:
        """Outputs are named by replica, so replica ``i`` keeps old replica ``i``'s pending
        epochs and new replicas start empty. The planner keeps sink blocks at their count
        when a restore has fewer slots (plan.placement.pinned_blocks), so none is orphaned."""
        if len(states) > replicas:
            from ..rescale import RescaleError
            raise RescaleError(f"{self.name} cannot hand its pending output to fewer replicas")
        return {"pending": dict(states[index]["pending"]) if index < len(states) else {}}

    # ----------------------------------------------------- the storage interface
    def _open_storage(self) -> None:
        """Connect, and drop staged data that no pending epoch refers to (left by a failed
        attempt after the checkpoint being restored)."""
        raise NotImplementedError

    def _clear_earlier_runs(self) -> None:
        """A fresh run: forget or remove what earlier runs of this replica left."""
        raise NotImplementedError

    def _reopening(self) -> None:
        """A run starts writing (before it publishes what a restored state holds): what
        the output says of its completeness holds no longer."""

    def render(self, items: list) -> Any:
        """The records as the storage writes them (calls the user's formatter)."""
        raise NotImplementedError

    def _write(self, rendered: Any) -> None:
        """Add rendered records to the open epoch, or (without checkpoints) to the output."""
        raise NotImplementedError

    def _stage(self, epoch: int) -> Any:
        """Close the open epoch; its handle, or ``None`` if it holds no records."""
        raise NotImplementedError

    def _publish(self, epoch: int, staged: Any) -> None:
        """Make a staged epoch visible; doing it twice must change nothing."""
        raise NotImplementedError

    def _withdraw_after(self, checkpoint_id: int) -> None:
        """Remove what was published for the epochs that a restore of ``checkpoint_id``
        produces again (:meth:`_produced_again`)."""
        raise NotImplementedError

    def _finish(self) -> None:
        """Without checkpoints: the stream has ended, complete the output."""
        raise NotImplementedError

    # ---------------------------------------------------------------- protocol
    def open(self, ctx) -> None:
        super().open(ctx)
        self._open_storage()
        self._reopening()
        if not self.restored:
            self._clear_earlier_runs()
        elif ctx.transactional:
            self._publish_through(ctx.restored_from)
            self._withdraw_after(ctx.restored_from)

    def _produced_again(self, epoch: int, checkpoint_id: int) -> bool:
        """Whether a restore of ``checkpoint_id`` produces ``epoch`` again: an epoch after
        it, unless the restored state still holds it pending (then it is published again,
        idempotently, not produced)."""
        return epoch > checkpoint_id and epoch not in self.pending

    def process(self, batch: Batch) -> Output:
        items = batch.items
        try:
            rendered = self.render(items)
        except Exception as exc:
            self.call.fail(exc, items, lambda x: self.render([x]))
        self._write(rendered)
        self.call.seen += len(items)
        return None

    def _close_epoch(self, epoch: int) -> None:
        staged = self._stage(epoch)
        if staged is not None:
            self.pending[epoch] = staged

    def prepare_snapshot(self, checkpoint_id: int) -> None:
        if self.ctx.transactional:
            self._close_epoch(checkpoint_id)

    def on_checkpoint_complete(self, checkpoint_id: int) -> None:
        self._publish_through(checkpoint_id)

    def on_end(self) -> Output:
        if self.ctx.transactional:
            self._close_epoch(FINAL_CHECKPOINT)
        else:
            self._finish()
        return None

    def _committed(self, checkpoint_id: int) -> None:
        """Every epoch up to ``checkpoint_id`` is published: a sink whose readers need to
        know it (the batch stage) records it here. Must be idempotent, like publishing."""

    def _publish_through(self, checkpoint_id: int) -> None:
        """Publish the pending epochs up to ``checkpoint_id``, oldest first, then record that
        they are all published."""
        final = checkpoint_id == FINAL_CHECKPOINT
        deadline = time.monotonic() + self.final_commit_timeout
        for epoch in sorted(e for e in self.pending if e <= checkpoint_id):
            if not self._insisting(lambda: self._publish(epoch, self.pending[epoch]), epoch, final, deadline):
                return          # the next completed checkpoint publishes it
            del self.pending[epoch]
        self._insisting(lambda: self._committed(checkpoint_id), checkpoint_id, final, deadline)

    def _insisting(self, commit: Callable[[], None], epoch: int, final: bool, deadline: float) -> bool:
        """Run one commit step; whether it succeeded. A failure of the external system
        defers it, except for the job's final commit, which retries until ``deadline``."""
        while True:
            try:
                commit()
                return True
            except ConnectorError as exc:   # the system failed, not the records
                event(log, logging.WARNING, "sink commit deferred", sink=self.name, replica=self.ctx.name,
                      epoch=checkpoint_label(epoch), error=str(exc))
                if not final:
                    return False
                if time.monotonic() + self.retry_every > deadline:
                    raise ConnectorError(
                        f"{self.name} (replica {self.ctx.name}) could not publish the job's final output "
                        f"within {self.final_commit_timeout:g} s: {exc}. The output of the checkpoints "
                        "before was published; restart the job with --restore latest once the "
                        "system is reachable to publish the rest") from exc
                time.sleep(self.retry_every)


_SUFFIXES = {"text": ".txt", "csv": ".csv", "jsonl": ".jsonl"}
_PART = re.compile(r"^part-(\d{5})[.-]")
_PUBLISHED = re.compile(r"^part-(\d{5})-(?:e(\d+)|end)\.")
COMMITTED = "_committed/"
SUCCESS = "_SUCCESS"
_MARKER = re.compile(r"^_committed/part-(\d{5})$")


class MarkerError(ValueError):
    """A commit marker that cannot be read: the output is not a segflow sink's."""


def commit_marker(replica: int) -> str:
    """The name, relative to the output, of replica ``replica``'s commit marker."""
    return f"{COMMITTED}part-{replica:05d}"


def marker_replica(name: str) -> int | None:
    """The replica of a commit marker's name, None for other names."""
    match = _MARKER.match(name)
    return int(match.group(1)) if match else None


def success_marker(replicas: int, checkpointed: bool) -> bytes:
    """The contents of ``_SUCCESS`` (the Spark engine writes the same for its parts)."""
    return json.dumps({"checkpointed": checkpointed, "replicas": replicas}, sort_keys=True).encode()


def parse_markers(markers: dict[str, bytes]) -> dict[int, tuple[int, int]]:
    """``{name: contents}`` of the ``_committed/`` entries -> ``{replica: (epoch, replicas)}``."""
    parsed = {}
    for name, data in markers.items():
        replica = marker_replica(name)
        if replica is None:
            continue
        try:
            marker = json.loads(data)
            parsed[replica] = (int(marker["epoch"]), int(marker["replicas"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise MarkerError(f"commit marker {name} is not JSON {{\"epoch\": K, \"replicas\": n}}: {exc}") from exc
    return parsed


def committed_through(markers: dict[int, tuple[int, int]]) -> int:
    """The newest epoch every replica has published (0: none yet)."""
    if not markers:
        return 0
    replicas = max(n for _, n in markers.values())
    if any(r not in markers for r in range(replicas)):
        return 0
    return min(markers[r][0] for r in range(replicas))


def published_part(name: str) -> tuple[int, int] | None:
    """(replica, epoch) of a published part's name (epoch FINAL_CHECKPOINT for ``-end``),
    None for other names."""
    match = _PUBLISHED.match(name)
    if not match:
        return None
    return int(match.group(1)), FINAL_CHECKPOINT if match.group(2) is None else int(match.group(2))


def left_by_earlier_run(ctx, replica: int) -> bool:
    """Whether a fresh run's replica ``ctx.index`` clears output of replica ``replica``: its
    own, and at replica 0 that of replicas the job no longer has."""
    return replica == ctx.index or ctx.index == 0 and replica >= ctx.replicas


def part_suffix(fmt: str) -> str:
    """The file name suffix of a part format; raises ``KeyError`` for an unknown one."""
    return _SUFFIXES[fmt]


class PartSink(EpochSink):
    """Text, CSV or JSON-lines parts named by replica and epoch: the layout of the file and
    S3 sinks. Without checkpoints a replica writes ``part-NNNNN.<ext>``; with them, epoch K
    becomes ``part-NNNNN-eK.<ext>`` and the records after the last checkpoint
    ``part-NNNNN-end.<ext>``. Subclasses list and remove names in their storage.

    With checkpoints, each replica also keeps a *commit marker* ``_committed/part-NNNNN``,
    JSON ``{"epoch": K, "replicas": n}``: every epoch up to K of this replica is published.
    A part of epoch K existing says nothing about the other replicas (they publish
    independently, and an unreachable store defers a publish); the markers let a reader
    (the batch stage, :mod:`segflow.batch.plan`) know which epochs are complete in every
    replica. A marker is replaced whole (rename, or one PutObject).

    The whole output is final once ``_SUCCESS`` exists (as in Hadoop and Spark): written by
    the replica that finds every replica done (with checkpoints: every marker at the job's
    final epoch; without: every replica's part written), and removed whenever a replica
    opens, so a failed or running job's output never has one. Without it, what is there is
    not the job's whole output: with checkpoints, the parts of committed epochs are final
    (the markers say which), and hidden ``.part-*`` files are uncommitted leftovers."""

    def __init__(self, fmt: str, formatter: Callable | None, delimiter: str = ","):
        super().__init__()
        self.fmt = fmt
        self.formatter = formatter
        self.delimiter = delimiter
        self.suffix = part_suffix(fmt)
        self.marked: int | None = None      # the epoch of the marker this replica last wrote

    def _names(self) -> list[str]:
        """The names in the output's root (parts, and whatever else lies there)."""
        raise NotImplementedError

    def _remove(self, names: list[str]) -> None:
        raise NotImplementedError

    def _marker_names(self) -> list[str]:
        """The commit markers in the output (``_committed/part-NNNNN``)."""
        raise NotImplementedError

    def _put_marker(self, name: str, data: bytes) -> None:
        """Replace the marker ``name`` (a commit marker, or ``_SUCCESS``) whole with ``data``."""
        raise NotImplementedError

    def _get_marker(self, name: str) -> bytes | None:
        """The contents of the marker ``name``, None if there is none."""
        raise NotImplementedError

    def _remove_success(self) -> None:
        """Remove ``_SUCCESS`` if it is there."""
        raise NotImplementedError

    def _reopening(self) -> None:
        self._remove_success()

    def on_end(self) -> Output:
        super().on_end()
        if not self.ctx.transactional:
            names = set(self._names())
            mine = self._part_name(None)[len(f"part-{self.ctx.index:05d}"):]
            if all(f"part-{r:05d}{mine}" in names for r in range(self.ctx.replicas)):
                self._succeeded(None)
        return None

    def _committed(self, checkpoint_id: int) -> None:
        if self.marked == checkpoint_id:
            return
        marker = json.dumps({"epoch": checkpoint_id, "replicas": self.ctx.replicas}).encode()
        self._put_marker(commit_marker(self.ctx.index), marker)
        self.marked = checkpoint_id
        if checkpoint_id == FINAL_CHECKPOINT:
            markers = {name: self._get_marker(name) or b"" for name in self._marker_names()}
            if committed_through(parse_markers(markers)) == FINAL_CHECKPOINT:
                self._succeeded(FINAL_CHECKPOINT)

    def _succeeded(self, epoch: int | None) -> None:
        """Every replica's output is complete: say so. Replicas that find it at once each
        write the same contents."""
        self._put_marker(SUCCESS, success_marker(self.ctx.replicas, epoch is not None))

    def _part_name(self, epoch: int | None) -> str:
        """The part of ``epoch`` (``None``: the single part of a run without checkpoints)."""
        mine = f"part-{self.ctx.index:05d}"
        if epoch is None:
            return mine + self.suffix
        return f"{mine}-{'end' if epoch == FINAL_CHECKPOINT else f'e{epoch}'}{self.suffix}"

    def _clear_earlier_runs(self) -> None:
        self._remove([name for name in self._names()
                      if (m := _PART.match(name)) and left_by_earlier_run(self.ctx, int(m.group(1)))])
        self._remove([name for name in self._marker_names()
                      if (r := marker_replica(name)) is not None and left_by_earlier_run(self.ctx, r)])

    def _withdraw_after(self, checkpoint_id: int) -> None:
        def later(name: str) -> bool:
            part = published_part(name)
            return part is not None and part[0] == self.ctx.index and self._produced_again(part[1], checkpoint_id)
        self._remove([name for name in self._names() if later(name)])

    def render(self, items: list) -> str:
        f = self.formatter
        if self.fmt == "text":
            lines = [str(x) for x in items] if f is None else [f(x) for x in items]
            return "\n".join(lines) + "\n" if lines else ""
        rows = items if f is None else [f(x) for x in items]
        if self.fmt == "jsonl":
            return "".join(json.dumps(r) + "\n" for r in rows)
        buffer = io.StringIO()
        csv.writer(buffer, delimiter=self.delimiter).writerows(rows)
        return buffer.getvalue()
