"""Checkpoint rounds of the coordinated protocols, as pure bookkeeping.

One checkpoint is in flight at a time: the next is triggered ``interval`` seconds after
the previous one ended (completed or failed), so a slow store never piles rounds up. A
checkpoint is complete when every replica of the plan has acknowledged it: with a
snapshot, or as already finished. One failed acknowledgement (e.g. the store was down)
or a timeout fails that checkpoint only; the job goes on.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..plan.placement import replica_name

SHOWN_MISSING = 8       # replicas named when a round times out (the count says how many in all)


@dataclass
class Round:
    checkpoint_id: int
    started: float
    asked_at: float = 0.0       # Unix seconds: the ask, against which replicas' barrier times are set
    acked: set = field(default_factory=set)
    bytes: int = 0
    alignment: float = 0.0
    start_delays: dict = field(default_factory=dict)
    ack_delays: dict = field(default_factory=dict)
    error: str = ""


@dataclass
class Outcome:
    checkpoint_id: int
    complete: bool
    seconds: float
    bytes: int
    alignment: float
    error: str = ""
    start_delays: dict = field(default_factory=dict)     # replica -> seconds from the ask to its first barrier
    ack_delays: dict = field(default_factory=dict)       # replica -> seconds from the ask to its acknowledgement


class CheckpointTracker:
    def __init__(self, interval: float, replicas: set, timeout: float = 60.0, first_id: int = 1):
        self.interval = interval
        self.replicas = set(replicas)
        self.timeout = timeout
        self.next_id = first_id
        self.current: Round | None = None
        self.last_end = 0.0
        self.last_complete: Outcome | None = None
        self.history: list[Outcome] = []

    def reset(self, replicas: set, now: float) -> None:
        """A new attempt (after a recovery): forget the round in flight."""
        self.replicas = set(replicas)
        self.current = None
        self.last_end = now

    def due(self, now: float) -> bool:
        return self.current is None and self.interval > 0 and now - self.last_end >= self.interval

    def trigger(self, now: float, checkpoint_id: int | None = None, asked_at: float = 0.0) -> int:
        """Start the next round (or the one with ``checkpoint_id``, e.g. the job's end);
        ``asked_at``: the wall-clock time of the ask, for the replicas' start delays."""
        if checkpoint_id is None:
            checkpoint_id = self.next_id
            self.next_id += 1
        self.current = Round(checkpoint_id, now, asked_at)
        return checkpoint_id

    def retract(self, checkpoint_id: int) -> None:
        """The round completed but could not be recorded: it does not count."""
        for outcome in self.history:
            if outcome.checkpoint_id == checkpoint_id:
                outcome.complete = False
        completes = [o for o in self.history if o.complete]
        self.last_complete = completes[-1] if completes else None

    def ack(self, checkpoint_id: int, replica, ok: bool, size: int, alignment: float, error: str,
            now: float, barrier_at: float = 0.0) -> Outcome | None:
        """A replica's acknowledgement; ``barrier_at``: when the round's barrier reached it
        (Unix seconds, 0: it had finished). Hosts' clocks may differ a little: a barrier
        seemingly older than the ask counts as no delay."""
        current = self.current
        if current is None or current.checkpoint_id != checkpoint_id or replica not in self.replicas \
                or replica in current.acked:              # a repeated acknowledgement counts once
            return None
        if not ok:
            return self._end(now, error or f"replica {replica} could not take its snapshot")
        current.acked.add(replica)
        current.bytes += size
        current.alignment = max(current.alignment, alignment)
        current.ack_delays[replica] = now - current.started
        if barrier_at and current.asked_at:
            current.start_delays[replica] = max(0.0, barrier_at - current.asked_at)
        if current.acked >= self.replicas:
            return self._end(now, "")
        return None

    def expire(self, now: float) -> Outcome | None:
        if self.current is not None and now - self.current.started > self.timeout:
            missing = sorted(self.replicas - self.current.acked)
            named = ", ".join(replica_name(block, index) for block, index in missing[:SHOWN_MISSING])
            more = ", ..." if len(missing) > SHOWN_MISSING else ""
            return self._end(now, f"timed out after {self.timeout:.0f} s waiting for {len(missing)} of "
                                  f"{len(self.replicas)} replicas: {named}{more}")
        return None

    def _end(self, now: float, error: str) -> Outcome:
        current = self.current
        assert current is not None
        outcome = Outcome(current.checkpoint_id, not error, now - current.started, current.bytes,
                          current.alignment, error, current.start_delays, current.ack_delays)
        self.current = None
        self.last_end = now
        self.history.append(outcome)
        if outcome.complete:
            self.last_complete = outcome
        return outcome


def slowest_per_block(delays: dict) -> dict[int, float]:
    """``(block, replica) -> seconds`` to each block's slowest replica."""
    blocks: dict[int, float] = {}
    for (block, _replica), seconds in delays.items():
        blocks[block] = max(blocks.get(block, 0.0), seconds)
    return blocks


@dataclass(frozen=True)
class BlockDelays:
    """Per block, the slowest replica of a complete checkpoint: seconds from the ask to its
    first barrier (``start``, Flink's "start delay": a barrier queued behind records shows
    here) and to its acknowledgement at the coordinator (``ack``, Flink's "end to end
    duration": the start delay, the alignment and the snapshot's write)."""

    start: dict = field(default_factory=dict)
    ack: dict = field(default_factory=dict)

    @staticmethod
    def of(outcome: Outcome | None) -> "BlockDelays":
        if outcome is None:
            return BlockDelays()
        return BlockDelays(slowest_per_block(outcome.start_delays), slowest_per_block(outcome.ack_delays))


REVISION_IDS = 2 ** 32


def first_checkpoint_id(highest: int, restored: int, revision: int) -> int:
    """Each deployment revision numbers its checkpoints from ``revision * 2**32`` up (and
    past everything in the store): a coordinator of an earlier revision still lingering
    during a redeploy never writes the ids, or the part files, of the new one, and the
    newest revision's checkpoints are always the latest."""
    return max(highest, restored, revision * REVISION_IDS) + 1
