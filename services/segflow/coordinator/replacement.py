"""When the new process of a worker whose slot a standby took over is started.

A standby that takes over a lost worker's slot leaves the pool one short, and the lost
worker's name is started again as the next standby. Starting it is a new ``segflow
worker`` process: an interpreter and segflow's imports, about a third of a second of CPU.
Started at the loss (as before), it ran beside the recovery it is meant to back up: on
two cores it took CPU from the restored replicas' replay, and its ``Popen`` (2-6 ms)
held the coordinator's lock before the standby's assignment could go out. So it waits
until the recovered attempt has completed a checkpoint (every restored replica took its
replay up to a barrier), or, where none completes (no checkpointing, failing rounds, a
recovery that waits for a restarted worker), ``REPLACEMENT_GRACE`` seconds after the loss.
"""
from __future__ import annotations

from dataclasses import dataclass

REPLACEMENT_GRACE = 2.0     # seconds after the loss at most


@dataclass(frozen=True)
class DeferredReplacement:
    """Replacement standbys owed since a loss at monotonic ``lost_at``, when the newest
    complete checkpoint was ``complete_at_loss`` (None: none yet, or no checkpointing)."""

    lost_at: float
    complete_at_loss: int | None

    def due(self, now: float, running: bool, complete: int | None) -> bool:
        """Start them now: the recovered attempt runs and has completed a checkpoint
        (``complete``: the newest complete checkpoint's id), or the grace has passed."""
        caught_up = running and complete is not None and complete != self.complete_at_loss
        return caught_up or now - self.lost_at >= REPLACEMENT_GRACE
