"""Segment backup over what a state store really holds: which versions are restorable,
the restore plan built from them, and the bookkeeping that truncates pending windows
while a job runs. Pure: the coordinator feeds it listings and acknowledgements.

:mod:`.segments` assumes every version up to a node's latest durable one exists. A store
has gaps (a write that failed, versions a block skipped, retention), so a connector's
*restorable* version ``K`` is one where the store holds its snapshot, the snapshots of
the plain nodes of every segment it ends (they restart at ``K`` if it is the least of
their downstream connectors), and no upstream connector of those segments is behind
``K`` (barriers flow downstream, but snapshots become durable in any order).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Mapping

from .segments import AdjustedState, N, Topology, adjusted_state, segments, truncation_heads

Versions = Mapping[N, "set[int] | frozenset[int]"]     # node -> the versions the store holds of it


def restorable_versions(topology: Topology[N], snapshots: Versions[N]) -> dict[N, int]:
    """Each connector's freshest restorable version (0: start it afresh); ``snapshots``:
    the versions of which the store holds every replica's snapshot, per node.

    Start from each connector's newest version that the plain nodes of the segments it
    ends also hold; then, until nothing changes, lower every connector that is ahead of
    an upstream connector of a segment it ends (other than itself: a connector can be
    on both sides of one segment)."""
    feeding = {c: [s for s in segments(topology) if c in s.downstream] for c in topology.connectors}

    def newest(connector: N, cap: int | None) -> int:
        return max((v for v in snapshots.get(connector, ()) if (cap is None or v <= cap)
                    and all(v in snapshots.get(n, ()) for s in feeding[connector] for n in s.inner)), default=0)
    durable = {c: newest(c, None) for c in topology.connectors}
    changed = True
    while changed:
        changed = False
        for connector in topology.connectors:
            cap = min((durable[u] for s in feeding[connector] for u in s.upstream if u != connector), default=None)
            if cap is not None and durable[connector] > cap:
                durable[connector] = newest(connector, cap)
                changed = True
    return durable


def plan_restore(topology: Topology[N], snapshots: Versions[N], windows: Versions[N]) -> AdjustedState:
    """The adjusted state the store can serve: like :func:`segments.adjusted_state` of the
    restorable versions, lowered where a replay would need a window part the store lacks
    (``windows``: the versions of which every replica's part is stored, per connector)."""
    usable = {n: set(v) for n, v in snapshots.items()}
    while True:
        state = adjusted_state(topology, restorable_versions(topology, usable))
        gaps = {(u, k) for (u, _), (first, last) in state.replays.items()
                for k in range(first, last + 1) if k not in windows.get(u, ())}
        if not gaps:
            return state
        for u, k in gaps:
            usable[u] = {v for v in usable.get(u, ()) if v < k}


@dataclass(frozen=True)
class WindowSize:
    """A connector's pending window as the ledger knows it (sizes of the parts written
    since the coordinator started; parts found in the store at a restore count 0)."""

    versions: int = 0
    bytes: int = 0
    records: int = 0
    truncation_lag: int = 0    # versions between the newest part and the truncation head


class SegmentLedger(Generic[N]):
    """The coordinator's view of a running job's acknowledged versions: tells which
    pending-window parts a connector may truncate (the version pointers of Shen, Segment Backup, §3.4, kept in
    one place: every replica's acknowledgement reaches the coordinator anyway)."""

    def __init__(self, topology: Topology[N], replicas: Mapping[N, int]):
        self.topology = topology
        self.replicas = dict(replicas)
        self.acked: dict[tuple[N, int], set[int]] = {}
        self.complete: dict[N, set[int]] = {n: set() for n in topology.nodes}
        self.parts: dict[N, dict[int, list[int]]] = {c: {} for c in topology.connectors if topology.successors(c)}
        self.heads: dict[N, int] = {c: 0 for c in topology.connectors}
        self.floor = 0                # no restorable version is older (see _forget_below)

    def seed(self, snapshots: Versions[N], windows: Versions[N]) -> None:
        """What the store holds after a restore (nothing of the versions above it)."""
        for node, versions in snapshots.items():
            self.complete[node] = set(versions)
        for node, versions in windows.items():
            if node in self.parts:
                self.parts[node] = {v: [0, 0] for v in versions}
        self.heads = truncation_heads(self.topology, restorable_versions(self.topology, self.complete))

    def ack(self, node: N, replica: int, version: int, size: int = 0, records: int = 0) -> dict[N, list[int]]:
        """A replica's snapshot (and window part of ``size`` bytes) of ``version`` is
        durable: the window parts that may go now, per connector."""
        if node in self.parts and version <= self.heads[node]:
            return {node: [version]}     # written again after its truncation (a retried round): no restore reads it
        if version in self.complete[node] or replica in self.acked.get((node, version), ()):
            return {}                                     # a repeated acknowledgement counts once
        replicas = self.acked.setdefault((node, version), set())
        replicas.add(replica)
        if node in self.parts:
            total = self.parts[node].setdefault(version, [0, 0])
            total[0] += size
            total[1] += records
        if len(replicas) < self.replicas.get(node, 1):
            return {}
        del self.acked[(node, version)]
        self.complete[node].add(version)
        durable = restorable_versions(self.topology, self.complete)
        self._forget_below(min(durable.values(), default=0))
        heads = truncation_heads(self.topology, durable)
        truncated: dict[N, list[int]] = {}
        for connector, head in heads.items():
            if head <= self.heads[connector]:
                continue
            self.heads[connector] = head
            gone = sorted(v for v in self.parts.get(connector, {}) if v <= head)
            for v in gone:
                del self.parts[connector][v]
            if gone:
                truncated[connector] = gone
        return truncated

    def rewind(self, versions: Mapping[N, int]) -> None:
        """A regional recovery put these blocks back at these versions: what they had
        acknowledged beyond is void (they take those versions again, and each replica's
        acknowledgement then counts anew)."""
        for node, version in versions.items():
            self.complete[node] = {v for v in self.complete[node] if v <= version}
            for key in [k for k in self.acked if k[0] == node and k[1] > version]:
                del self.acked[key]
            if node in self.parts:
                self.parts[node] = {v: size for v, size in self.parts[node].items() if v <= version}

    def lose_part(self, connector: N, version: int) -> None:
        """A replay found ``connector``'s part of ``version`` missing or damaged in the
        store: no plan may count on it (a regional recovery grows around it instead)."""
        self.parts.get(connector, {}).pop(version, None)

    def _forget_below(self, floor: int) -> None:
        """Restorable versions only rise as acks arrive, and no restore goes below the
        least of them: older versions can never be chosen again, so they are dropped and
        each ack costs the versions still in reach, not every version the job has taken."""
        if floor <= self.floor:
            return
        self.floor = floor
        for node, versions in self.complete.items():
            self.complete[node] = {v for v in versions if v >= floor}

    def window_sizes(self) -> dict[N, WindowSize]:
        """Each connector's pending window (acknowledged parts, not truncated)."""
        return {c: WindowSize(len(parts), sum(b for b, _ in parts.values()), sum(r for _, r in parts.values()),
                              max(parts, default=self.heads[c]) - self.heads[c])
                for c, parts in self.parts.items()}
