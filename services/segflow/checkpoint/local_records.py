"""The coordinator's side of the ``uncoordinated`` and ``cic`` protocols: the local
checkpoints every replica has stored, the stable line that commits them, the recovery
line after a failure, and what may be deleted. Pure bookkeeping: the coordinator does the
messaging and the deleting."""
from __future__ import annotations

from .recovery_line import CheckpointRecord, Process, RecoveryPlan, recovery_line
from .retention import collectable


class LocalCheckpointRecords:
    def __init__(self) -> None:
        self.records: dict[Process, dict[int, CheckpointRecord]] = {}
        self.committed: dict[Process, int] = {}
        self.collected: tuple[set, set] = (set(), set())   # local checkpoints, log segments handed out

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
        return advanced

    def recover(self, processes: list[Process], failed: set[Process]) -> RecoveryPlan:
        """The recovery line after losing ``failed`` (rollback propagation); checkpoints past
        it are forgotten, as they will be taken again."""
        result = recovery_line(self.history(processes), failed)
        for process, index in result.line.items():
            self.records[process] = {i: r for i, r in self.records.get(process, {}).items() if i <= index}
        return result

    def forget(self, process: Process, index: int) -> None:
        """Local checkpoint ``index`` of ``process`` (or its log segment) is unusable: so
        are the later ones, whose replays may need the messages it logged."""
        self.records[process] = {i: r for i, r in self.records.get(process, {}).items() if i < index}

    def newly_collectable(self) -> tuple[set, set]:
        """Local checkpoints and log segments behind the stable line not handed out before."""
        checkpoints, segments = collectable(self.records, self.committed)
        checkpoints -= self.collected[0]
        segments -= self.collected[1]
        self.collected[0].update(checkpoints)
        self.collected[1].update(segments)
        return checkpoints, segments
