"""The checkpoint protocols segflow implements, by name.

Coordinated protocols (``aligned``, ``unaligned``) take global snapshots started by the
coordinator's barriers (seed 001); ``segment`` adds segment backup to aligned barriers
(seed 004): connectors keep pending windows of their output, so a restore replays each
segment from its nearest upstream connector; uncoordinated ones (``uncoordinated``, ``cic``) let every
replica checkpoint on its own timer and compute a recovery line after a failure (seed 003).
Code asks a protocol what it *is* (``coordinated``, ``uncoordinated``), never
compares names.
"""
from __future__ import annotations

from enum import Enum

from ..errors import SegflowError


class CheckpointProtocol(str, Enum):
    ALIGNED = "aligned"
    UNALIGNED = "unaligned"
    UNCOORDINATED = "uncoordinated"
    CIC = "cic"
    SEGMENT = "segment"
    NONE = "none"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, name: "str | CheckpointProtocol") -> "CheckpointProtocol":
        try:
            return cls(name)
        except ValueError:
            raise SegflowError(f"unknown checkpoint protocol {name!r}: choose one of "
                               f"{', '.join(p.value for p in cls)}") from None

    @property
    def enabled(self) -> bool:
        return self is not CheckpointProtocol.NONE

    @property
    def coordinated(self) -> bool:
        """Barriers from the coordinator cut one global snapshot per checkpoint."""
        return self in (CheckpointProtocol.ALIGNED, CheckpointProtocol.UNALIGNED, CheckpointProtocol.SEGMENT)

    @property
    def segment_backup(self) -> bool:
        """Connectors keep pending windows; a restore starts from the adjusted state (seed 004)."""
        return self is CheckpointProtocol.SEGMENT

    @property
    def uncoordinated(self) -> bool:
        """Replicas checkpoint on their own; recovery lines are computed after a failure."""
        return self in (CheckpointProtocol.UNCOORDINATED, CheckpointProtocol.CIC)

    @property
    def takes_savepoints(self) -> bool:
        """A savepoint is a complete checkpoint: only coordinated protocols cut one."""
        return self.coordinated

    def no_savepoints(self) -> str:
        """Why this protocol refuses a savepoint, to begin an error message with."""
        return (f"the {self.value} protocol takes no savepoints (a savepoint is a complete checkpoint of every "
                "replica at once)")

    @property
    def communication_induced(self) -> bool:
        """Senders piggyback HMNR clocks and receivers take forced checkpoints (seed 003)."""
        return self is CheckpointProtocol.CIC
