"""The coordinator's part in segment backup (``--checkpoint-protocol segment``): the
restore plan of each attempt, computed from the state store alone, and the truncation of
connectors' pending windows as version acknowledgements arrive.

A restore trusts nothing but the store, so a standby that shares only the store with the
lost job restores the same way. Before the workers start, everything newer than the
versions restored is deleted: those versions will be taken again, and a leftover of the
lost run must never be mistaken for part of the new one.
"""
from __future__ import annotations

import logging
from typing import Mapping

from ..checkpoint.catalog import Catalog, Holdings
from ..checkpoint.regional import RegionalRecovery, regional_recovery
from ..checkpoint.connectors import auto_connectors, job_topology, segment_topology
from ..checkpoint.restore_plan import SegmentRestore
from ..checkpoint.segment_plan import SegmentLedger, WindowSize, plan_restore
from ..checkpoint.segments import AdjustedState, SegmentBackupError, segments
from ..observability.logs import event
from ..plan.graph import JobGraph
from .cleanup import StoreCleanup

log = logging.getLogger("segflow.coordinator")


def _complete(found: dict[tuple[int, int], set[int]], replicas: dict[int, int]) -> dict[int, set[int]]:
    """Per block, the versions every replica of it holds."""
    complete = {}
    for block, count in replicas.items():
        versions = [found.get((block, r), set()) for r in range(count)]
        complete[block] = set.intersection(*versions) if versions else set()
    return complete


def _held_by_any(found: dict[tuple[int, int], set[int]]) -> dict[int, set[int]]:
    """Per block, the versions some replica of it holds. The ledger truncates these, not
    only the complete ones: a disaster in the middle of a truncation leaves a version
    held by some replicas only, which no restore reads and nothing else would delete."""
    held: dict[int, set[int]] = {}
    for (block, _), versions in found.items():
        held.setdefault(block, set()).update(versions)
    return held


def _same_parallelism(held: Holdings, replicas: dict[int, int]) -> None:
    """Refuse a restore at another parallelism: windows and snapshots are per replica, and
    nothing moves a key's state or window to the replica that owns it now. A replica the
    store holds that this run lacks shows fewer replicas; a block at the newest complete
    version shows every replica it ran (one missing elsewhere may just never have stored a
    snapshot, as after a disaster before its first)."""
    ran: dict[int, int] = {}
    for block, replica in set(held.snapshots) | set(held.windows):
        ran[block] = max(ran.get(block, 0), replica + 1)
    newest = max(held.complete, default=0)
    complete = {block for (block, _), versions in held.snapshots.items() if newest in versions}
    for block, count in sorted(ran.items()):
        now = replicas.get(block, 0)
        if count > now or (count < now and block in complete):
            _other_parallelism(block, count, now)


def _same_parallelism_as(counts: dict[int, int], replicas: dict[int, int]) -> None:
    """Refuse to restore a checkpoint (``counts``: its replicas per block) at another
    parallelism: every replica restores its own snapshot of it, as a savepoint does."""
    for block, count in sorted(counts.items()):
        if count != replicas.get(block, 0):
            _other_parallelism(block, count, replicas.get(block, 0))


def _other_parallelism(block: int, count: int, now: int) -> None:
    raise SegmentBackupError(
        f"the stored job state has {count} replica(s) of block {block}, which now runs {now}: "
        "segment backup restores at the parallelism the job ran with (restore with that "
        "--parallelism, or run afresh without --restore)")


class SegmentBackup:
    def __init__(self, graph: JobGraph, connectors: str, catalog: Catalog, cleanup: StoreCleanup):
        if (connectors or "auto").strip() == "auto":
            chosen, self.connectors_chosen_by = auto_connectors(graph, catalog.segment_choice())
            self.topology = job_topology(graph, chosen)
        else:
            self.topology = segment_topology(graph, connectors)
            self.connectors_chosen_by = f"connectors {sorted(self.topology.connectors)}: given ({connectors})"
        self.connectors = self.topology.connectors
        self.catalog = catalog
        self.cleanup = cleanup
        self.ledger: SegmentLedger[int] | None = None
        self.plans: dict[int, SegmentRestore | None] = {}
        self.leftovers: dict[int, int] = {}      # a regional attempt's blocks -> versions, until it registers
        self.replayable: frozenset[int] = frozenset()     # blocks that could replay exactly (checkpoint.replayable)

    def has_state(self) -> bool:
        return bool(self.catalog.holdings().snapshots)

    def plan(self, attempt: int, replicas: dict[int, int], restore: str) -> SegmentRestore | None:
        """The restore plan of ``attempt`` (``None``: start afresh), made once per attempt:
        the workers of an attempt all start from the same one. ``restore``: "" (afresh),
        ``latest``/``auto`` (the adjusted state) or a complete checkpoint's id (a savepoint:
        every block at that version, nothing to replay)."""
        if attempt in self.plans:
            return self.plans[attempt]
        self.ledger = ledger = SegmentLedger(self.topology, replicas)
        self.leftovers = {}             # a restore from the store deletes beyond its own versions
        plan = self._restore(ledger, replicas, restore) if restore else None
        self.plans[attempt] = plan
        return plan

    def _restore(self, ledger: SegmentLedger[int], replicas: dict[int, int], restore: str) -> SegmentRestore | None:
        held = self.catalog.holdings()
        found, parts = held.snapshots, held.windows
        _same_parallelism(held, replicas)
        snapshots, windows = _complete(found, replicas), _complete(parts, replicas)
        if restore in ("latest", "auto"):
            state = plan_restore(self.topology, snapshots, windows)
        else:
            checkpoint = self.catalog.resolve(restore)
            _same_parallelism_as(self.catalog.replica_counts(checkpoint), replicas)
            state = AdjustedState({n: checkpoint for n in self.topology.nodes}, {}, {})
        versions = {block: state.versions.get(block, 0) for block in replicas}
        self.catalog.delete_after(versions, held)
        ledger.seed({b: {v for v in s if v <= versions[b]} for b, s in snapshots.items()},
                    {b: {v for v in s if v <= versions[b]} for b, s in _held_by_any(parts).items()})
        event(log, logging.WARNING, "segment restore", versions=versions,
              replays={f"{u}>{s}": r for (u, s), r in state.replays.items()})
        if not any(versions.values()):
            return None
        by_segment = segments(self.topology)
        replays: dict[tuple[int, int], tuple[int, int]] = {}
        for (connector, index), versions_range in state.replays.items():
            segment = by_segment[index]
            for successor in self.topology.successors(connector):
                if successor in segment.inner | segment.downstream:
                    replays[(connector, successor)] = versions_range
        return SegmentRestore(versions, replays)

    def regional(self, lost: str, owners: Mapping[tuple[int, int], str]) -> RegionalRecovery[int] | None:
        """The regional recovery of losing worker (slot) ``lost``, planned from what this
        run's ledger knows durable (``owners``: replica -> the worker running it). None when
        it restarts every block, or when a worker would run blocks both inside the region
        and outside it (placement by segment rules that out: ``checkpoint.segment_placement``):
        then the whole job restarts, as under the other protocols. A restarted block's
        consumers keep running when it replays exactly (``replayable``, set by each attempt's
        plan) and they have acknowledged its version."""
        ledger = self.ledger
        if ledger is None:
            return None
        placement: dict[int, set[str]] = {block: set() for block in self.topology.nodes}
        for (block, _), worker in owners.items():
            placement.setdefault(block, set()).add(worker)
        windows = {connector: set(parts) for connector, parts in ledger.parts.items()}
        recovery = regional_recovery(self.topology, placement, [lost], ledger.complete, windows, ledger.heads,
                                     self.replayable)
        inside = {worker for block in recovery.region for worker in placement[block]}
        if not recovery.kept or any(placement[block] & inside for block in recovery.kept):
            return None
        return recovery

    def restart_region(self, attempt: int, recovery: RegionalRecovery[int], through: int) -> SegmentRestore:
        """Attempt ``attempt`` restarts ``recovery``'s region only: what the store holds of
        its blocks beyond their versions goes once the attempt's workers have registered
        (:meth:`delete_region_leftovers`; they take those versions again, up to ``through``,
        the newest the job has begun); the ledger's record of it goes now."""
        assert self.ledger is not None, "a regional recovery follows an attempt that planned its restore"
        self.leftovers = dict(recovery.restart)
        self.ledger.rewind(recovery.restart)
        replays = {(r.connector, r.consumer): (r.first, r.through) for r in recovery.replays if not r.live}
        plan = self.plans[attempt] = SegmentRestore(dict(recovery.restart), replays, recovery.kept, through)
        event(log, logging.WARNING, "regional restore", versions=recovery.restart, kept=sorted(recovery.kept),
              replays={f"{r.connector}>{r.consumer}": [r.first, "live" if r.live else r.through]
                       for r in recovery.replays}, through=through)
        return plan

    def delete_region_leftovers(self) -> None:
        """The regional attempt's workers have all registered: delete what the store holds
        of the region's blocks beyond their restored versions. Not earlier: a restarted
        worker that was still running then could finish writing a snapshot of its old
        attempt after the deletion, and a later restore would take it for the region's
        (while the restarted sink had removed the output it stands for)."""
        if not self.leftovers:
            return
        held = self.catalog.holdings()
        versions, self.leftovers = self.leftovers, {}
        self.catalog.delete_after(versions, Holdings(
            {k: v for k, v in held.snapshots.items() if k[0] in versions},
            {k: v for k, v in held.windows.items() if k[0] in versions}, held.complete))

    def lose_part(self, connector: int, version: int) -> None:
        """The store lost ``connector``'s window part of ``version`` (a replay found it so)."""
        if self.ledger is not None:
            self.ledger.lose_part(connector, version)
        event(log, logging.WARNING, "window part lost", connector=connector, version=version)

    def acknowledged(self, block: int, replica: int, version: int, size: int, records: int) -> None:
        """A replica's snapshot of ``version`` is durable: truncate what no restore needs."""
        if self.ledger is None:
            return
        truncated = self.ledger.ack(block, replica, version, size, records)
        if truncated:
            parts = [(c, r, v) for c, versions in truncated.items()
                     for r in range(self.ledger.replicas.get(c, 1)) for v in versions]
            self.cleanup.window_parts(parts)

    def window_sizes(self) -> dict[int, WindowSize]:
        return self.ledger.window_sizes() if self.ledger is not None else {}
