"""Which local checkpoints and log segments of the uncoordinated protocols can be deleted.

Pure. Every future recovery line is at or after the *stable line* (the maximum consistent
line of the checkpoints stored so far: a failure can only add checkpoints, never remove
them), unless stored state fails its integrity check; the caller passes an older line per
replica (:class:`LocalCheckpointRecords` keeps a few) to leave room for falling back. So:

* a replica's local checkpoints before its stable-line checkpoint are never restored again;
* a sender's log segment ``i`` holds the messages it sent between its checkpoints ``i - 1``
  and ``i``; once every receiver's stable-line checkpoint has processed all of them
  (``sent(C[s,i])[c] <= processed(C[r,stable_r])[c]`` on each of its channels ``c``), no
  recovery replays them again.
"""
from __future__ import annotations

from dataclasses import dataclass

from .recovery_line import CheckpointRecord, Process


def collectable(records: dict[Process, dict[int, CheckpointRecord]], stable: dict[Process, int]
                ) -> tuple[set[tuple[Process, int]], set[tuple[Process, int]]]:
    """``(checkpoints, log segments)`` that may be deleted, as ``(process, index)`` pairs."""
    processed_at_line: dict = {}
    for process, index in stable.items():
        record = records.get(process, {}).get(index)
        if record is not None:
            processed_at_line.update(record.processed)
    checkpoints, segments = set(), set()
    for process, index in stable.items():
        checkpoints |= {(process, i) for i in records.get(process, {}) if 0 < i < index}
        for i, record in records.get(process, {}).items():
            if 0 < i <= index and all(sent <= processed_at_line.get(channel, 0)
                                      for channel, sent in record.sent.items()):
                segments.add((process, i))
    return checkpoints, segments


@dataclass(frozen=True)
class SavepointRetention:
    """Which savepoints a job keeps: the newest ``keep`` (0: every one), and none older
    than ``max_age`` seconds (0: no expiry). Savepoints are otherwise never collected."""

    keep: int = 0
    max_age: float = 0.0

    def expired(self, taken: dict[int, float], now: float) -> set[int]:
        """Of savepoints ``id -> time taken`` (wall-clock seconds), those to delete."""
        beyond = set(sorted(taken, reverse=True)[self.keep:]) if self.keep else set()
        old = {i for i, at in taken.items() if self.max_age and now - at > self.max_age}
        return beyond | old
