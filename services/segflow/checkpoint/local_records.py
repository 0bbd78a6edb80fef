"""The coordinator's side of the ``uncoordinated`` and ``cic`` protocols: the local
checkpoints every replica has stored, the stable line that commits them, the recovery
line after a failure, and what may be deleted. Pure bookkeeping: the coordinator does the
messaging and the deleting."""
from __future__ import annotations

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
        self.collected: tuple[set, set] = (set(), set())   # local checkpoints, log segments handed out

    @property
    def floor(self) -> dict[Process, int]:
        """Per replica, the oldest kept stable-line checkpoint: nothing before it is kept."""
        return {process: kept[0] for process, kept in self.kept_lines.items()}

    def history(self, processes: list[Process]) -> list[CheckpointRecord]:
        """Every replica's initial state and its contiguous run of stored checkpoints."""
        history = []
        for process in processes:
            slot = self.records.get(process, {})
            history.append(CheckpointRecord(process, 0))
            index = 1
            while index in slot:
                history.append(slot[index])
                index += 1
        return history

    def add(self, record: CheckpointRecord, processes: list[Process]) -> dict[Process, int]:
        """A replica stored a local checkpoint: the processes whose committed checkpoint
        advanced (the stable line: no failure can roll back before it), with their index."""
        self.records.setdefault(record.process, {})[record.index] = record
        stable = recovery_line(self.history(processes), set()).line
        advanced = {p: i for p, i in stable.items() if i > self.committed.get(p, 0)}
        self.committed.update(advanced)
        for process, index in advanced.items():
            self.kept_lines[process] = (self.kept_lines.get(process, []) + [index])[-self.retain:]
        return advanced

    def recover(self, processes: list[Process], failed: set[Process]) -> RecoveryPlan:
        """The recovery line after losing ``failed`` (rollback propagation); checkpoints past
        it are forgotten, as they will be taken again."""
        result = recovery_line(self.history(processes), failed)
        floor = self.floor
        gone = {p: (i, floor[p]) for p, i in result.line.items() if i < floor.get(p, 0)}
        if gone:
            raise StateNoLongerKept(
                "the recovery line needs " + ", ".join(
                    f"local checkpoint {i} of {p} (the oldest kept is {floor})" for p, (i, floor) in sorted(gone.items()))
                + f", deleted already: the job keeps {self.retain} stable lines (--retain); restart it "
                "from a savepoint, or from scratch")
        for process, index in result.line.items():
            self.records[process] = {i: r for i, r in self.records.get(process, {}).items() if i <= index}
        return result

    def forget(self, process: Process, index: int) -> None:
        """Local checkpoint ``index`` of ``process`` (or its log segment) is unusable: so
        are the later ones, whose replays may need the messages it logged."""
        self.records[process] = {i: r for i, r in self.records.get(process, {}).items() if i < index}

    def newly_collectable(self) -> tuple[set, set]:
        """Local checkpoints and log segments behind the oldest kept stable line, not
        handed out before."""
        checkpoints, segments = collectable(self.records, self.floor)
        checkpoints -= self.collected[0]
        segments -= self.collected[1]
        self.collected[0].update(checkpoints)
        self.collected[1].update(segments)
        return checkpoints, segments
