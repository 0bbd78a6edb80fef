"""What the web view shows of a job's past: its newest checkpoints and recoveries.

Pure and bounded: the coordinator records an entry as each round ends or each recovery
starts; the view reads the newest first. Times are wall-clock seconds (for people).
"""
from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass

KEEP = 100


@dataclass(frozen=True)
class CheckpointEntry:
    id: int
    complete: bool
    seconds: float
    bytes: int
    alignment_seconds: float
    at: float
    savepoint: bool = False
    error: str = ""


@dataclass(frozen=True)
class RestartedBlock:
    """A block a recovery restarted, and the version its state came back from (None: the
    recovery's restore line, decided when the next attempt starts)."""
    block: int
    name: str
    version: int | None = None


@dataclass(frozen=True)
class RecoveryEntry:
    """One recovery: ``scope`` "regional" when only ``restarted`` went back and ``kept``
    ran on (segment backup's regional recovery), "global" when every block restarted;
    ``damaged``: the stored key found missing or damaged that made it ("": a lost worker)."""
    at: float
    lost: str
    reason: str
    restored: str
    scope: str = "global"
    restarted: tuple[RestartedBlock, ...] = ()
    kept: tuple[int, ...] = ()
    damaged: str = ""


class JobHistory:
    def __init__(self, keep: int = KEEP):
        self._checkpoints: deque[CheckpointEntry] = deque(maxlen=keep)
        self._recoveries: deque[RecoveryEntry] = deque(maxlen=keep)

    def checkpoint(self, entry: CheckpointEntry) -> None:
        self._checkpoints.append(entry)

    def recovery(self, entry: RecoveryEntry) -> None:
        self._recoveries.append(entry)

    def checkpoints(self) -> list[dict]:
        return [asdict(entry) for entry in reversed(self._checkpoints)]

    def recoveries(self) -> list[dict]:
        """As JSON has them: the restarted and kept blocks in lists."""
        return [{**asdict(entry), "restarted": [asdict(block) for block in entry.restarted], "kept": list(entry.kept)}
                for entry in reversed(self._recoveries)]
