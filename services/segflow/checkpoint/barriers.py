"""Per-replica bookkeeping of checkpoints in progress (barrier alignment and channel
recording) for the coordinated protocols.

For checkpoint *n* a replica's input channels are of two kinds:

* **aligned** channels are blocked from the moment their barrier *n* arrives until the
  replica has taken its snapshot (ABS: Carbone et al., Lightweight Asynchronous
  Snapshots, Algorithm 1);
* **recorded** channels keep flowing; whatever they deliver after the snapshot and before
  their own barrier *n* is kept as channel state and replayed on restore (Chandy-Lamport;
  the non-blocking algorithm of Lattuada, State Persistence in Noir; ABS Algorithm 2's
  back-edge log).

``aligned`` makes regular channels aligned and loop back-edges recorded; ``unaligned``
records every channel, so the snapshot is taken as soon as the first barrier arrives and
the barrier goes on at once. A channel that terminates no longer owes a barrier.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

Channel = tuple[int, int]          # (input index, sender replica)


@dataclass(frozen=True)
class BarrierTiming:
    """When a round's first barrier reached a replica, on the wall clock so the coordinator
    can set it against its own ask (the round's *start delay*: how long a barrier took to
    come through the job to this block), and how long the replica then waited for the
    barriers of its other inputs."""

    arrived: float = 0.0        # Unix seconds; 0: no barrier (the replica had finished)
    alignment: float = 0.0


@dataclass
class InProgress:
    checkpoint_id: int
    started: float
    waiting_aligned: set[Channel]
    waiting_recorded: set[Channel]
    recordings: dict[Channel, list] = field(default_factory=dict)
    state: bytes | None = None
    alignment: float = 0.0
    arrived: float = field(default_factory=time.time)

    @property
    def snapshotted(self) -> bool:
        return self.state is not None


class CheckpointBook:
    """The checkpoints in progress at one replica."""

    def __init__(self, channels: list[Channel], regular: set[Channel], aligned: set[Channel]):
        self.channels = set(channels)
        self.regular = regular
        self.aligned = aligned
        self.recorded = self.channels - self.aligned
        self.terminated: set[Channel] = set()
        self.active: dict[int, InProgress] = {}
        self.blocked: set[Channel] = set()
        self.completed = 0     # highest checkpoint id this replica has finished
        self.deferred: set[int] = set()   # triggers that came before the regular inputs closed

    def start(self, checkpoint_id: int) -> InProgress:
        cp = self.active.get(checkpoint_id)
        if cp is None:
            live = self.channels - self.terminated
            cp = self.active[checkpoint_id] = InProgress(
                checkpoint_id, time.monotonic(), self.aligned & live, self.recorded & live)
        return cp

    def regular_inputs_closed(self) -> bool:
        """No barrier can reach this replica through a regular channel any more (a loop
        back-edge only carries back the barriers this replica sent into the loop)."""
        return bool(self.regular) and self.regular <= self.terminated or not self.channels

    def recording(self, channel: Channel) -> list[InProgress]:
        return [cp for cp in self.active.values() if cp.snapshotted and channel in cp.waiting_recorded]
