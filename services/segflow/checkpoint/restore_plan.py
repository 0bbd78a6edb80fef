"""What a recovery restores beyond one complete checkpoint, as the coordinator hands it to
every worker of an attempt (``net.control_codec`` carries it in the assignment's typed oneof).

Two kinds: segment backup's adjusted state (each block at its own version, connectors
replaying their pending windows to the segments behind them; Segment Backup, chapter 3)
and an uncoordinated recovery line (each replica from its local checkpoint on the line,
in-transit messages replayed from the senders' logs; Checkpointing Protocols Compared).
A restore of one complete checkpoint needs no plan: the assignment names the checkpoint.
(``recovery_line.RecoveryPlan`` is what the recovery-line algorithm computes; a
:class:`LineRestore` is the part of it the workers need.)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from ..runtime.elements import checkpoint_label

Channel = tuple[str, str]          # (sender process, receiver process)


@dataclass(frozen=True)
class SegmentRestore:
    """``versions``: block -> the version it restores (0: from the start); ``replays``:
    (connector, successor block) -> the versions of the connector's window it replays.
    A regional recovery's (``checkpoint.regional``) also names the blocks that keep
    running (``kept``: not restored here, their connectors replay live) and the newest
    version the job has begun (``through``), which the restarted replicas take again."""
    versions: dict[int, int]
    replays: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)
    kept: frozenset[int] = frozenset()
    through: int = 0

    def describe(self) -> str:
        restored = " ".join(f"b{b}:v{checkpoint_label(v)}" for b, v in sorted(self.versions.items()))
        if not self.kept:
            return restored
        return f"{restored} (regional: {' '.join(f'b{b}' for b in sorted(self.kept))} kept running)"


@dataclass(frozen=True)
class LineRestore:
    """``line``: process -> the index of its local checkpoint on the recovery line (0: from
    the start); ``replay``: channel -> the first and last in-transit message to replay."""
    line: dict[str, int]
    replay: dict[Channel, tuple[int, int]] = field(default_factory=dict)

    def describe(self) -> str:
        return "recovery line " + " ".join(f"{p}:{i}" for p, i in sorted(self.line.items()))


RestorePlan = Union[SegmentRestore, LineRestore]
