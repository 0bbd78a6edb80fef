"""Segment backup's pure core (Shen, Segment Backup, §3.3-3.6): the segments that
connectors cut a topology into, how far each connector may truncate its pending window,
and the *adjusted state* a job restarts from.

Vocabulary. Blocks are nodes of a DAG. *Connectors* keep a pending window (their output,
delimited by barrier versions, in the state store); every source and every sink is one
(a sink that does not persist its output still acknowledges, with a no-op window). A
*segment* is a maximal group of plain nodes connected through plain-to-plain edges (in
either direction), with the connectors that feed it (``upstream``) and the connectors it
feeds (``downstream``); a direct connector-to-connector edge is a segment without plain
nodes. Plain nodes of one segment always share one version (Theorem 2), because they do
not drop replayed input and must therefore all restart from the same barrier.

Backup. A connector that has made version ``K`` of its state and window durable sends a
*version ack* ``K`` to the upstream connectors of the segments it ends. A connector keeps
one *version pointer* per downstream segment: the least ack of that segment's downstream
connectors. It truncates its window to the least of its pointers.

Recovery. With ``v[n]`` every node's latest durable version (a connector's best safe
version): every connector restarts at ``v[c]`` with its window rewound to ``v[c]``; the
plain nodes of segment ``s`` restart at ``V(s) = min(v[d] for d in downstream(s))``; each
upstream connector of ``s`` replays its window ``(V(s), v[u]]`` into ``s`` and then goes
on with new output; each downstream connector ``d`` drops replayed input up to ``v[d]``.
The pointers guarantee the windows still hold what is replayed (a pointer never passes
``V(s)``: acks never pass durable versions), which is why the windows concatenate along
every path (Theorem 1).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Hashable, Iterable, Mapping, TypeVar

from ..errors import SegflowError
from ..plan.cycles import find_cycle

N = TypeVar("N", bound=Hashable)      # a node: a block id in the engine, any hashable in the tests


class SegmentBackupError(SegflowError):
    """The topology or the connectors chosen cannot be backed up by segments."""


@dataclass(frozen=True)
class Topology(Generic[N]):
    """A job's blocks as a DAG, and which of them are connectors."""

    nodes: tuple[N, ...]
    edges: tuple[tuple[N, N], ...]
    connectors: frozenset[N]

    @classmethod
    def of(cls, nodes: Iterable[N], edges: Iterable[tuple[N, N]], connectors: Iterable[N],
           names: Mapping[N, str] | None = None) -> Topology[N]:
        """Checked: every source and sink must be a connector, and there must be no cycle
        (``names`` name the nodes in errors)."""
        topology = cls(tuple(nodes), tuple(edges), frozenset(connectors))
        topology.check(names or {})
        return topology

    def predecessors(self, node: N) -> list[N]:
        return [a for a, b in self.edges if b == node]

    def successors(self, node: N) -> list[N]:
        return [b for a, b in self.edges if a == node]

    def is_connector(self, node: N) -> bool:
        return node in self.connectors

    def check(self, names: Mapping[N, str]) -> None:
        def name(n: N) -> str:
            return names.get(n, str(n))
        known = set(self.nodes)
        unknown = {n for edge in self.edges for n in edge} - known | (set(self.connectors) - known)
        if unknown:
            raise SegmentBackupError(f"the topology names unknown nodes: {sorted(map(str, unknown))}")
        for node in self.nodes:
            if node in self.connectors:
                continue
            if not self.predecessors(node):
                raise SegmentBackupError(f"{name(node)} is a source, so it must be a connector")
            if not self.successors(node):
                raise SegmentBackupError(f"{name(node)} is a sink, so it must be a connector "
                                         "(a sink that does not persist its output still acknowledges)")
        cycle = find_cycle({n: self.successors(n) for n in self.nodes})
        if cycle:
            raise SegmentBackupError("segment backup needs an acyclic job, but these blocks form a loop: "
                                     f"{' -> '.join(name(n) for n in cycle)}; run iterations with the aligned "
                                     "protocol")


@dataclass(frozen=True)
class Segment(Generic[N]):
    upstream: frozenset[N]      # connectors feeding the segment
    inner: frozenset[N]         # its plain nodes (empty for a connector-to-connector edge)
    downstream: frozenset[N]    # connectors it feeds


def segments(topology: Topology[N]) -> list[Segment[N]]:
    """The segments of a topology, in a deterministic order."""
    order = {n: i for i, n in enumerate(topology.nodes)}
    plain = [n for n in topology.nodes if not topology.is_connector(n)]
    group = {n: n for n in plain}

    def find(n: N) -> N:
        while group[n] != n:
            group[n] = group[group[n]]
            n = group[n]
        return n
    for a, b in topology.edges:
        if a in group and b in group:
            group[find(a)] = find(b)
    inner: dict[N, set[N]] = {}
    for n in plain:
        inner.setdefault(find(n), set()).add(n)
    found: list[Segment[N]] = []
    for members in inner.values():
        upstream = {a for a, b in topology.edges if b in members and a not in members}
        downstream = {b for a, b in topology.edges if a in members and b not in members}
        found.append(Segment(frozenset(upstream), frozenset(members), frozenset(downstream)))
    for a, b in topology.edges:
        if topology.is_connector(a) and topology.is_connector(b):
            found.append(Segment(frozenset({a}), frozenset(), frozenset({b})))
    return sorted(found, key=lambda s: sorted(order[n] for n in s.upstream | s.inner | s.downstream))


def segment_numbers(topology: Topology[N]) -> dict[N, int]:
    """Each plain node's segment, numbered from 1 upstream first (connectors have none):
    how ``segflow plan`` and the web view name segments."""
    numbers: dict[N, int] = {}
    for number, segment in enumerate((s for s in segments(topology) if s.inner), start=1):
        for node in segment.inner:
            numbers[node] = number
    return numbers


def version_pointers(topology: Topology[N], acked: Mapping[N, int]) -> dict[tuple[N, int], int]:
    """``(connector, segment index) -> version``: how far each downstream segment of a
    connector has acknowledged its output (``acked``: each connector's latest ack sent)."""
    pointers: dict[tuple[N, int], int] = {}
    for index, segment in enumerate(segments(topology)):
        pointer = min(acked.get(d, 0) for d in segment.downstream)
        for u in segment.upstream:
            pointers[(u, index)] = pointer
    return pointers


def truncation_heads(topology: Topology[N], acked: Mapping[N, int]) -> dict[N, int]:
    """Each connector's pending-window head: its window holds versions after it. A
    connector with no downstream segment (a sink) never truncates."""
    heads: dict[N, int] = {c: 0 for c in topology.connectors}
    pointers = version_pointers(topology, acked)
    by_connector: dict[N, list[int]] = {}
    for (u, _), pointer in pointers.items():
        by_connector.setdefault(u, []).append(pointer)
    for u, values in by_connector.items():
        heads[u] = min(values)
    return heads


@dataclass(frozen=True)
class AdjustedState:
    """What a restored job starts from."""

    versions: dict            # node -> the version of its state to restore
    replays: dict             # (connector, segment index) -> (first, last) versions to replay, inclusive
    drop_through: dict        # connector -> replayed input up to this version is dropped


def adjusted_state(topology: Topology[N], durable: Mapping[N, int]) -> AdjustedState:
    """The freshest consistent restart (see the module's doc); ``durable`` maps every
    connector to its latest durable version (0: nothing yet)."""
    missing = [n for n in topology.connectors if n not in durable]
    if missing:
        raise SegmentBackupError(f"no durable version given for {missing}")
    versions = {c: durable[c] for c in topology.connectors}
    replays = {}
    for index, segment in enumerate(segments(topology)):
        start = min(durable[d] for d in segment.downstream)
        for n in segment.inner:
            versions[n] = start
        for u in segment.upstream:
            if durable[u] > start:
                replays[(u, index)] = (start + 1, durable[u])
    return AdjustedState(versions, replays, {c: durable[c] for c in topology.connectors})
