"""The ``unaligned`` protocol at a replica: the snapshot is taken at the first barrier *n*
and the barrier goes on at once; nothing is blocked, and what every channel delivers
until its own barrier *n* is recorded as channel state and replayed on restore
(Chandy-Lamport; the non-blocking algorithm of Lattuada, State Persistence in Noir)."""
from __future__ import annotations

from .aligned import AlignedSnapshots
from .barriers import Channel


class UnalignedSnapshots(AlignedSnapshots):
    def aligned_channels(self, regular: set[Channel]) -> set[Channel]:
        return set()
