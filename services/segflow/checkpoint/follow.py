"""What a hot standby's follower holds of the primary's store, decided from one listing
(key -> ETag) alone: pure, so the rules are tested without a store.

A follower holds, for every replica, its snapshot of the newest version it can be
restored from (a complete checkpoint; under segment backup, where each block restores at
its own version, the replica's newest snapshot), and every pending window part. A key
that is still listed with the ETag it was read with needs no GET again; a key whose ETag
changed (segment backup takes a version again after a restore) is read again, and a key
no longer listed is dropped.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..runtime.elements import FINAL_CHECKPOINT
from . import layout


@dataclass(frozen=True)
class FollowPlan:
    """One follow step: the keys to GET, the held keys to drop, and the version to follow
    (the newest version a restore could start from)."""

    fetch: list[str]
    drop: list[str]
    version: int


def wanted(listing: dict[str, str], job: str, segment: bool) -> set[str]:
    """The keys of ``listing`` a follower holds (see the module's docstring)."""
    complete = {layout.checkpoint_of(k) for k in listing if layout.is_complete_marker(k)} - {FINAL_CHECKPOINT}
    newest: dict[tuple[int, int], int] = {}
    windows = set()
    for key in listing:
        version = layout.checkpoint_of(key)
        if version is not None:
            replica = layout.snapshot_of(key)
            if replica and version != FINAL_CHECKPOINT and (segment or version in complete):
                newest[replica] = max(newest.get(replica, 0), version)
        elif key.startswith(layout.window_prefix(job)):
            window = layout.window_of(key)
            if window and window[2] != FINAL_CHECKPOINT:
                windows.add(key)
    return {layout.snapshot_key(job, v, b, r) for (b, r), v in newest.items()} | windows


def version_of(keys: set[str]) -> int:
    """The newest checkpoint version among ``keys`` (0: none)."""
    return max((v for v in map(layout.checkpoint_of, keys) if v is not None and v != FINAL_CHECKPOINT), default=0)


def plan_follow(listing: dict[str, str], held: dict[str, str], job: str, segment: bool) -> FollowPlan:
    """The step from ``held`` (key -> ETag it was read with) to what ``listing`` asks for."""
    keep = wanted(listing, job, segment)
    fetch = sorted(k for k in keep if held.get(k) != listing[k])
    drop = sorted(k for k in held if k not in keep or held[k] != listing[k])
    return FollowPlan(fetch, drop, version_of(keep))
