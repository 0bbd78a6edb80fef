"""The checkpoints of one job in a state store: which exist, which are complete,
which to restore, and which to delete.

Keys are those of :mod:`segflow.checkpoint.layout`: one object per replica snapshot, and a
``_COMPLETE`` marker (JSON metadata) written by the coordinator once every replica has
persisted its part. Only checkpoints with the marker count.

Everything is sealed (see :mod:`segflow.state.sealing`) on the way in and checked on the
way out. A key that failed its check is *excluded*: its checkpoint no longer counts as
complete, and segment backup plans without it, so a restore falls back to what is intact.
"""
from __future__ import annotations

import json
import pickle
from dataclasses import dataclass

from ..errors import SegflowError
from ..runtime.elements import FINAL_CHECKPOINT, FINAL_NAME
from ..state.backend import StateBackend
from ..state.sealing import Sealer, TamperedState
from . import layout
from .retention import SavepointRetention


class Catalog:
    def __init__(self, backend: StateBackend, job_name: str, sealer: Sealer | None = None):
        self.backend = backend
        self.job = job_name
        self.sealer = sealer or Sealer(job_name)
        self.excluded: set[str] = set()

    def _put(self, key: str, data: bytes) -> None:
        self.backend.put(key, self.sealer.seal(key, data))

    def _get(self, key: str) -> bytes | None:
        """The bytes under ``key`` once checked (:class:`TamperedState` if they fail)."""
        data = self.backend.get(key)
        return None if data is None else self.sealer.open(key, data)

    def exclude(self, key: str) -> None:
        """``key`` failed its integrity check: restore nothing that needs it."""
        self.excluded.add(key)

    def _excluded_checkpoints(self) -> set[int]:
        return {checkpoint for checkpoint in map(layout.checkpoint_of, self.excluded) if checkpoint is not None}

    def _listing(self) -> tuple[dict[int, list[str]], set[int]]:
        """Every checkpoint's keys (the final one too), and the ids that are complete."""
        parts: dict[int, list[str]] = {}
        complete = set()
        for key in self.backend.list(layout.checkpoint_prefix(self.job)):
            checkpoint_id = layout.checkpoint_of(key)
            if checkpoint_id is not None:
                parts.setdefault(checkpoint_id, []).append(key)
                if layout.is_complete_marker(key):
                    complete.add(checkpoint_id)
        return parts, complete

    def _ids(self) -> tuple[set[int], set[int]]:
        """Numbered checkpoints only: the job's final snapshot (taken when it finished) is
        never restored, and counting it would number the next run's checkpoints past it,
        where the sinks' final commit could not reach their epochs."""
        parts, complete = self._listing()
        return set(parts) - {FINAL_CHECKPOINT}, complete - {FINAL_CHECKPOINT} - self._excluded_checkpoints()

    def highest_id(self) -> int:
        every, _ = self._ids()
        return max(every, default=0)

    def complete_ids(self) -> list[int]:
        return sorted(self._ids()[1])

    def metadata(self, checkpoint_id: int) -> dict | None:
        data = self._get(layout.complete_key(self.job, checkpoint_id))
        return None if data is None else json.loads(data)

    def resolve(self, wanted: str) -> int:
        """``latest`` or an id -> a complete checkpoint id, or a clear error; ``auto`` ->
        the latest if there is one, else 0 (start afresh: a redeploy after a failure)."""
        complete = self.complete_ids()
        where = f"job {self.job!r} in {self.backend.url}"
        if wanted == FINAL_NAME:
            if not self.finished():
                raise SegflowError(f"job {self.job!r} in {self.backend.url} has no final checkpoint: its last run "
                                   "did not finish, or it never ran. Restore its latest checkpoint (--restore "
                                   "latest) instead")
            return FINAL_CHECKPOINT
        if wanted in ("auto", "latest"):
            newest = self._newest_intact(complete)
            if newest == 0 and wanted == "latest":
                failed = f" ({len(self.excluded)} stored part(s) failed their integrity check)" if self.excluded else ""
                raise SegflowError(f"no complete checkpoint of {where} to restore{failed}")
            return newest
        try:
            checkpoint_id = int(wanted)
        except ValueError:
            raise SegflowError(f"--restore takes a checkpoint id, 'latest', 'auto' or a checkpoint's location "
                               f"(STORE/jobs/JOB/chk-N/, as segflow savepoint prints it), not {wanted!r}") from None
        if checkpoint_id not in complete:
            known = ", ".join(map(str, complete[-10:])) or "none"
            raise SegflowError(f"checkpoint {checkpoint_id} of {where} is not complete; complete ones: {known}")
        return checkpoint_id

    def finished(self) -> bool:
        """Whether the job's last run ended: its final checkpoint (the job's end, taken
        once every replica had finished) is complete and intact (no part of it failed its
        check in a restore), and no checkpoint of a later run is newer (a run that does
        not resume from the end removes it: :meth:`forget_end`; the comparison covers
        stores from before that)."""
        _, complete = self._listing()
        if FINAL_CHECKPOINT not in complete - self._excluded_checkpoints() or \
                not self._newest_intact([FINAL_CHECKPOINT]):
            return False
        numbered = self._newest_intact(sorted(complete - {FINAL_CHECKPOINT} - self._excluded_checkpoints()))
        if not numbered:
            return True
        return float((self.metadata(FINAL_CHECKPOINT) or {}).get("time", 0)) >= \
            float((self.metadata(numbered) or {}).get("time", 0))

    def forget_end(self) -> None:
        """A run starts that does not resume from the job's end: the final checkpoint no
        longer says where the job is."""
        self.remove(FINAL_CHECKPOINT)

    def _newest_intact(self, complete: list[int]) -> int:
        """The newest of ``complete`` whose marker passes its check (0: none)."""
        for checkpoint_id in reversed(complete):
            try:
                self.metadata(checkpoint_id)
            except TamperedState as exc:
                self.exclude(exc.key)
                continue
            return checkpoint_id
        return 0

    def stored(self) -> dict[int, tuple[list[str], bool]]:
        """Every checkpoint in the store, the job's final one too: id -> (its keys, complete)."""
        parts, complete = self._listing()
        return {checkpoint: (sorted(keys), checkpoint in complete) for checkpoint, keys in sorted(parts.items())}

    def remove(self, checkpoint_id: int) -> int:
        """Delete checkpoint ``checkpoint_id`` (its marker first: a reader never sees a
        complete checkpoint with parts missing); how many objects went."""
        keys = self.backend.list(layout.checkpoint_prefix(self.job, checkpoint_id))
        marker = layout.complete_key(self.job, checkpoint_id)
        self.backend.delete([k for k in keys if k == marker])
        self.backend.delete([k for k in keys if k != marker])
        return len(keys)

    def replica_counts(self, checkpoint_id: int) -> dict[int, int]:
        """Block -> number of replica snapshots in the checkpoint (its parallelism)."""
        counts: dict[int, int] = {}
        for key in self.backend.list(layout.checkpoint_prefix(self.job, checkpoint_id)):
            snapshot = layout.snapshot_of(key)
            if snapshot:
                block, replica = snapshot
                counts[block] = max(counts.get(block, 0), replica + 1)
        return counts

    def mark_complete(self, checkpoint_id: int, meta: dict) -> None:
        self._put(layout.complete_key(self.job, checkpoint_id), json.dumps(meta, sort_keys=True).encode())

    def adopt(self, source: "Catalog", checkpoint_id: int) -> None:
        """Copy ``source``'s complete checkpoint ``checkpoint_id`` (another job's savepoint)
        into this job under the same id: each blob is checked with the other job's seal and
        sealed again with this job's, and the marker is written last, so a copy cut short
        is no checkpoint."""
        meta = source.metadata(checkpoint_id)
        if meta is None:
            raise SegflowError(f"checkpoint {checkpoint_id} of job {source.job!r} in {source.backend.url} is not "
                               "complete: restore a complete one (segflow checkpoints ls lists them)")
        origin = layout.checkpoint_prefix(source.job, checkpoint_id)
        target = layout.checkpoint_prefix(self.job, checkpoint_id)
        for key in source.backend.list(origin):
            if not layout.is_complete_marker(key):
                blob = source._get(key)
                if blob is None:
                    raise SegflowError(f"checkpoint {checkpoint_id} of job {source.job!r} lost {key!r} while it was "
                                       "copied (deleted by its retention?): restore a newer checkpoint")
                self._put(target + key[len(origin):], blob)
        self.mark_complete(checkpoint_id, {**meta, "adopted_from": {"job": source.job, "id": checkpoint_id}})

    def read(self, checkpoint_id: int, block: int, replica: int) -> bytes | None:
        return self._get(layout.snapshot_key(self.job, checkpoint_id, block, replica))

    def read_state(self, checkpoint_id: int, block: int, replica: int) -> dict | None:
        """A replica's snapshot decoded (None: the store has none)."""
        blob = self.read(checkpoint_id, block, replica)
        return None if blob is None else pickle.loads(blob)

    def write(self, checkpoint_id: int, block: int, replica: int, blob: bytes) -> None:
        self._put(layout.snapshot_key(self.job, checkpoint_id, block, replica), blob)

    # -- segment backup: every replica's snapshots and connectors' window parts by version
    def holdings(self) -> "Holdings":
        """What the store holds for segment backup (the job's final snapshot aside), from
        one listing of the checkpoints and one of the windows."""
        held = Holdings({}, {}, set())
        for key in self.backend.list(layout.checkpoint_prefix(self.job)):
            version = layout.checkpoint_of(key)
            if version is None or version == FINAL_CHECKPOINT or key in self.excluded:
                continue
            snapshot = layout.snapshot_of(key)
            if snapshot:
                held.snapshots.setdefault(snapshot, set()).add(version)
            elif layout.is_complete_marker(key):
                held.complete.add(version)
        for key in self.backend.list(layout.window_prefix(self.job)):
            window = layout.window_of(key)
            if window and window[2] != FINAL_CHECKPOINT and key not in self.excluded:
                block, replica, version = window
                held.windows.setdefault((block, replica), set()).add(version)
        return held

    def write_window(self, block: int, replica: int, version: int, part: bytes) -> None:
        self._put(layout.window_key(self.job, block, replica, version), part)

    def read_window(self, block: int, replica: int, version: int) -> bytes | None:
        return self._get(layout.window_key(self.job, block, replica, version))

    def delete_windows(self, parts: list[tuple[int, int, int]]) -> None:
        """``(block, replica, version)`` window parts that no restore can replay any more."""
        self.backend.delete([layout.window_key(self.job, b, r, v) for b, r, v in parts])

    def delete_after(self, versions: dict[int, int], held: "Holdings") -> None:
        """Of what ``held`` lists, every snapshot and window part of block ``b`` newer than
        ``versions[b]``: what a restore does not start from is history that will be taken
        again differently. A checkpoint newer than the oldest version restored is no
        longer complete either."""
        oldest = min(versions.values(), default=0)
        self.backend.delete(
            [layout.snapshot_key(self.job, v, b, r) for (b, r), held_versions in sorted(held.snapshots.items())
             for v in sorted(held_versions) if v > versions.get(b, 0)]
            + [layout.window_key(self.job, b, r, v) for (b, r), held_versions in sorted(held.windows.items())
               for v in sorted(held_versions) if v > versions.get(b, 0)]
            + [layout.complete_key(self.job, v) for v in sorted(held.complete) if v > oldest])

    # -- uncoordinated protocols: per-replica local checkpoints and their log segments
    def local_key(self, process: str, index: int) -> str:
        return layout.local_key(self.job, process, index)

    def write_local(self, process: str, index: int, blob: bytes, log: bytes) -> None:
        self._put(layout.log_key(self.job, process, index), log)
        self._put(self.local_key(process, index), blob)

    def read_local(self, process: str, index: int) -> bytes | None:
        return self._get(self.local_key(process, index))

    def read_log(self, process: str, index: int) -> bytes | None:
        return self._get(layout.log_key(self.job, process, index))

    def local_of(self, key: str) -> tuple[str, int] | None:
        """``(process, index)`` of a local checkpoint or log segment key (None: not one)."""
        return layout.local_of(self.job, key)

    def stable_line_key(self) -> str:
        return layout.stable_line_key(self.job)

    def write_stable_line(self, data: bytes) -> None:
        """The newest stable line (checkpoint.local_records.encode_line), overwritten."""
        self._put(self.stable_line_key(), data)

    def read_stable_line(self) -> bytes | None:
        return self._get(self.stable_line_key())

    def write_segment_choice(self, record: dict) -> None:
        """The cost model's inputs and choice for this job (see :mod:`.connectors`)."""
        self._put(layout.segment_choice_key(self.job), json.dumps(record, sort_keys=True).encode())

    def segment_choice(self) -> dict | None:
        data = self._get(layout.segment_choice_key(self.job))
        return json.loads(data) if data is not None else None

    def write_protocol(self, protocol: str) -> None:
        """The protocol whose history the job's state continues: the run starting now's."""
        self._put(layout.protocol_key(self.job), protocol.encode())

    def last_protocol(self) -> str:
        """The protocol of the job's last run with checkpoints ('' before it was recorded,
        or when the record fails its check: then the checkpoints' own checks decide, and
        they say why, e.g. another SEGFLOW_STATE_KEY)."""
        try:
            data = self._get(layout.protocol_key(self.job))
        except TamperedState as exc:
            self.exclude(exc.key)
            return ""
        return data.decode() if data is not None else ""

    def local_indices(self) -> dict[str, tuple[set[int], set[int]]]:
        """Per replica, the indices of its stored local checkpoints and of its log segments."""
        held: dict[str, tuple[set[int], set[int]]] = {}
        for key in self.backend.list(layout.local_prefix(self.job)):
            local = self.local_of(key)
            if local is not None:
                held.setdefault(local[0], (set(), set()))[layout.is_log(key)].add(local[1])
        return held

    def clear_local(self) -> None:
        """A fresh run: the local checkpoints, logs and stable line of earlier runs go (its
        own checkpoints reuse their numbers)."""
        self.backend.delete(self.backend.list(layout.local_prefix(self.job)))

    def delete_local(self, checkpoints: set, segments: set) -> None:
        """Local checkpoints and log segments no recovery can need any more."""
        self.backend.delete([self.local_key(p, i) for p, i in sorted(checkpoints)] +
                            [layout.log_key(self.job, p, i) for p, i in sorted(segments)])

    def remove_unfinished(self) -> list[int]:
        """Delete the checkpoints without a ``_COMPLETE`` marker (the job's final one too):
        called when the job has ended, so a checkpoint still in progress then can never
        complete, and its parts would only mislead a reader of the store."""
        parts, complete = self._listing()
        unfinished = sorted(set(parts) - complete)
        self.backend.delete([key for checkpoint_id in unfinished for key in parts[checkpoint_id]])
        return unfinished

    def collect_garbage(self, retain: int, savepoints: SavepointRetention = SavepointRetention(),
                        now: float = 0.0) -> list[int]:
        """Keep the ``retain`` newest complete checkpoints and the savepoints ``savepoints``
        keeps (at ``now``, wall-clock seconds); delete other complete ones and incomplete
        ones older than the newest complete."""
        every, complete = self._ids()
        if not complete:
            return []
        keep = set(sorted(complete)[-max(1, retain):])
        newest = max(complete)
        taken = {}
        ruled = savepoints.keep or savepoints.max_age      # the kept ones count towards savepoints.keep
        for checkpoint_id in sorted(complete if ruled else complete - keep):
            meta = self.metadata(checkpoint_id) or {}
            if meta.get("savepoint"):
                taken[checkpoint_id] = float(meta.get("time", 0))
        saved = set(taken) - savepoints.expired(taken, now)
        removed = []
        for checkpoint_id in sorted(every):
            unfinished_newer = checkpoint_id not in complete and checkpoint_id > newest
            if checkpoint_id in keep or checkpoint_id in saved or unfinished_newer:
                continue
            self.remove(checkpoint_id)
            removed.append(checkpoint_id)
        return removed


def jobs_in(backend: StateBackend) -> list[str]:
    """The names of the jobs that keep anything in a state store."""
    return sorted({job for job in map(layout.job_of, backend.list(layout.JOBS)) if job is not None})


@dataclass
class Holdings:
    """A job's state in the store as segment backup sees it: ``(block, replica) ->
    versions`` of snapshots and of window parts, and the complete checkpoints."""

    snapshots: dict[tuple[int, int], set[int]]
    windows: dict[tuple[int, int], set[int]]
    complete: set[int]
