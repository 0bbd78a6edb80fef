"""Which family each checkpoint protocol is: its replica side (what a worker gives each
replica) and its coordinator side (what the coordinator decides for it).

Adding a protocol: name it in ``checkpoint.protocols.CheckpointProtocol`` (and say there
what it is: coordinated or not), write its module here with both sides, add one line
below, and its tests (docs/architecture/adding-a-protocol.md). ``tests/protocols`` fails
while a protocol has no line here, a side misses a method, or the CRD's enum disagrees.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

from ..checkpoint.protocols import CheckpointProtocol
from ..errors import SegflowError
from .complete import AlignedReplicas, CompleteCheckpoints, UnalignedReplicas
from .coordinator_side import CoordinatorSide
from .local import LocalCheckpointLines, LocalReplicas
from .replica_side import ReplicaSide
from .segment import SegmentBackupSide, SegmentReplicas


@dataclass(frozen=True)
class ProtocolFamily:
    replica: type[ReplicaSide]
    coordinator: type[CoordinatorSide]


PROTOCOLS: dict[CheckpointProtocol, ProtocolFamily] = {
    CheckpointProtocol.ALIGNED: ProtocolFamily(AlignedReplicas, CompleteCheckpoints),
    CheckpointProtocol.UNALIGNED: ProtocolFamily(UnalignedReplicas, CompleteCheckpoints),
    CheckpointProtocol.SEGMENT: ProtocolFamily(SegmentReplicas, SegmentBackupSide),
    CheckpointProtocol.UNCOORDINATED: ProtocolFamily(LocalReplicas, LocalCheckpointLines),
    CheckpointProtocol.CIC: ProtocolFamily(LocalReplicas, LocalCheckpointLines),
}


class UnregisteredProtocol(SegflowError):
    """A protocol without a complete family here: the job cannot checkpoint with it."""


def registration_gaps(registry: dict[CheckpointProtocol, ProtocolFamily]) -> list[str]:
    """What ``registry`` lacks: a protocol that checkpoints with no family, or a side that
    does not implement every method its interface declares (empty: nothing)."""
    gaps = [f"{p.value}: no family registered" for p in CheckpointProtocol if p.enabled and p not in registry]
    for protocol, sides in sorted(registry.items(), key=lambda item: item[0].value):
        for side, interface in ((sides.replica, ReplicaSide), (sides.coordinator, CoordinatorSide)):
            if not issubclass(side, interface):
                gaps.append(f"{protocol.value}: {side.__name__} is not a {interface.__name__}")
            elif inspect.isabstract(side):
                missing = ", ".join(sorted(getattr(side, "__abstractmethods__", ())))
                gaps.append(f"{protocol.value}: {side.__name__} does not implement {missing}")
    return gaps


def check_registry(registry: dict[CheckpointProtocol, ProtocolFamily]) -> None:
    """Raise :class:`UnregisteredProtocol` naming every gap of ``registry``."""
    gaps = registration_gaps(registry)
    if gaps:
        raise UnregisteredProtocol("incomplete checkpoint protocol registry (segflow.protocols.registry): "
                                   + "; ".join(gaps))


check_registry(PROTOCOLS)      # a protocol added without both sides fails as segflow starts


def family(protocol: CheckpointProtocol) -> ProtocolFamily:
    """``protocol``'s two sides (``none`` has neither: nothing is checkpointed)."""
    try:
        return PROTOCOLS[protocol]
    except KeyError:
        raise UnregisteredProtocol(f"the {protocol.value} protocol has no implementation registered in "
                                   "segflow.protocols.registry: choose one of "
                                   f"{', '.join(p.value for p in PROTOCOLS)}") from None
