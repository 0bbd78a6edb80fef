"""The coordinator's side of the ``uncoordinated`` and ``cic`` protocols: the local
checkpoints every replica has stored, the stable line that commits them, the recovery
line after a failure, and what may be deleted. Pure bookkeeping: the coordinator does the
messaging and the deleting."""
from __future__ import annotations

import json
from collections.abc import Iterable, Set
from typing import NamedTuple

from .recovery_line import CheckpointRecord, Process, RecoveryPlan, recovery_line
from .retention import collectable


class StateNoLongerKept(Exception):
    """A recovery line goes back past local checkpoints that were deleted: possible only
    when stored state failed its integrity check and falling back past it needs more than
    the stable lines kept."""


class LocalCheckpointRecords:
    """``retain``: how many of each replica's successive stable-line checkpoints are kept.
    Without failures one would do (no recovery line goes back past the stable line); the
    older ones are what a restore falls back to when stored state fails its integrity
    check, since the damaged checkpoint or log segment and everything after it must go."""

    def __init__(self, retain: int = 3) -> None:
        if retain < 1:
            raise ValueError(f"retain must be >= 1, got {retain}")
        self.retain = retain
        self.records: dict[Process, dict[int, CheckpointRecord]] = {}
        self.committed: dict[Process, int] = {}
        self.kept_lines: dict[Process, list[int]] = {}   # the last ``retain`` committed indices
        self.base: dict[Process, int] = {}       # where a replica's history starts (a restored line)
        self.earlier_segments: dict[Process, set[int]] = {}   # stored log segments before it
        self.line: dict[Process, int] = {}       # the stable line as last computed
        self.collected: tuple[set, set] = (set(), set())   # local checkpoints, log segments handed out

    @property
    def floor(self) -> dict[Process, int]:
        """Per replica, the oldest kept stable-line checkpoint: nothing before it is kept."""
        return {process: kept[0] for process, kept in self.kept_lines.items()}

    def history(self, processes: Iterable[Process]) -> list[CheckpointRecord]:
        """Every replica's initial state (or restored checkpoint) and its contiguous run of
        stored checkpoints."""
        history = []
        for process in processes:
            slot = self.records.get(process, {})
            index = self.base.get(process, 0)
            if index == 0:
                history.append(CheckpointRecord(process, 0))
                index = 1
            while index in slot:
                history.append(slot[index])
                index += 1
        return history

    def add(self, record: CheckpointRecord, processes: Iterable[Process]) -> dict[Process, int]:
        """A replica stored a local checkpoint: the processes whose committed checkpoint
        advanced (the stable line: no failure can roll back before it), with their index."""
        self.records.setdefault(record.process, {})[record.index] = record
        stable = self.line = recovery_line(self.history(processes), set()).line
        advanced = {p: i for p, i in stable.items() if i > self.committed.get(p, 0)}
        self.committed.update(advanced)
        for process, index in advanced.items():
            self.kept_lines[process] = (self.kept_lines.get(process, []) + [index])[-self.retain:]
        return advanced

    def recover(self, processes: Iterable[Process], failed: Set[Process]) -> RecoveryPlan:
        """The recovery line after losing ``failed`` (rollback propagation); checkpoints past
        it are forgotten, as they will be taken again."""
        result = recovery_line(self.history(processes), failed)
        floor = self.floor
        gone = {p: (i, floor[p]) for p, i in result.line.items() if i < floor.get(p, 0)}
        if gone:
            raise StateNoLongerKept(
                "the recovery line needs " + ", ".join(f"local checkpoint {i} of {p} (the oldest kept is {floor})"
                                                       for p, (i, floor) in sorted(gone.items()))
                + f", deleted already: the job keeps {self.retain} stable lines (--retain); restart it "
                "from a savepoint, or from scratch")
        for process, index in result.line.items():
            self.records[process] = {i: r for i, r in self.records.get(process, {}).items() if i <= index}
        return result

    def stable_line(self) -> list[CheckpointRecord]:
        """The stable line's checkpoints (none for a replica still at its initial state):
        what a restart of the whole job restores."""
        return [self.records[p][i] for p, i in sorted(self.line.items(), key=repr) if i > 0]

    def seed(self, line: list[CheckpointRecord], earlier_segments: dict[Process, set[int]]) -> None:
        """The whole job restarts from a stored stable line: each replica's history starts
        at its checkpoint there, which is also its committed one. ``earlier_segments``:
        the log segments stored before it (no record says what they hold; they go when
        the line checkpoint's own segment goes, as they hold earlier messages)."""
        self.earlier_segments = {p: set(s) for p, s in earlier_segments.items() if s}
        for record in line:
            self.records[record.process] = {record.index: record}
            self.base[record.process] = self.committed[record.process] = record.index
            self.kept_lines[record.process] = [record.index]

    def forget(self, process: Process, index: int) -> None:
        """Local checkpoint ``index`` of ``process`` (or its log segment) is unusable: so
        are the later ones, whose replays may need the messages it logged."""
        if 0 < index <= self.base.get(process, 0):
            raise StateNoLongerKept(
                f"local checkpoint {index} of {process}, on the stable line this run restored, failed its "
                "integrity check and nothing older is known to this run: restart the job from scratch")
        self.records[process] = {i: r for i, r in self.records.get(process, {}).items() if i < index}

    def newly_collectable(self) -> tuple[set, set]:
        """Local checkpoints and log segments behind the oldest kept stable line, not
        handed out before."""
        checkpoints, segments = collectable(self.records, self.floor)
        for process, earlier in self.earlier_segments.items():
            if (process, self.base.get(process, 0)) in segments:
                segments |= {(process, i) for i in earlier}
        checkpoints -= self.collected[0]
        segments -= self.collected[1]
        self.collected[0].update(checkpoints)
        self.collected[1].update(segments)
        return checkpoints, segments


class StoredLine(NamedTuple):
    """A stable line as the state store holds it, for a whole-job restore."""
    line: list[CheckpointRecord]
    processes: list[str]             # every replica of the job that stored it, by name
    written: float | None            # wall-clock seconds (None: stored before it was recorded)
    layout: dict | None              # the pipeline's (plan.signature.layout; None: not recorded)


def encode_line(line: list[CheckpointRecord], processes: Iterable[Process], written: float,
                layout: dict) -> bytes:
    """A stable line of a job whose replicas are ``processes``, stored at ``written``
    (wall-clock seconds) by a pipeline laid out as ``layout``, for the state store (JSON:
    channels as ``[sender, receiver, count]``)."""
    return json.dumps({"processes": sorted(processes), "written": written, "layout": layout,
                       "line": [{"process": r.process, "index": r.index,
                                 "sent": [[a, b, n] for (a, b), n in sorted(r.sent.items())],
                                 "processed": [[a, b, n] for (a, b), n in sorted(r.processed.items())]}
                                for r in line]}, sort_keys=True).encode()


def decode_line(data: bytes) -> StoredLine:
    """:func:`encode_line`'s output back; ``ValueError`` if it is not one."""
    try:
        stored = json.loads(data)
        written = stored.get("written")
        return StoredLine([CheckpointRecord(r["process"], int(r["index"]),
                                            {(a, b): int(n) for a, b, n in r["sent"]},
                                            {(a, b): int(n) for a, b, n in r["processed"]})
                           for r in stored["line"]], list(stored["processes"]),
                          None if written is None else float(written), stored.get("layout"))
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a stored stable line: {exc}") from exc
