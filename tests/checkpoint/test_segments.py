"""Segment backup's adjusted state against a brute-force oracle on random DAGs.

The oracle knows nothing of segments. It replays the job block by block: every edge
carries barrier-delimited blocks 1..K, a plain node restarted at version r must receive
exactly blocks r+1..K on every input, a connector may receive older blocks first (it
drops up to its version), and a connector can replay only what its pending window still
holds after truncation. The adjusted state must pass that check (Theorems 1 and 2 in
executable form) and be the freshest assignment that does: no feasible assignment, found
by enumeration, restarts any plain node later.
"""
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segflow.checkpoint.segments import (SegmentBackupError, Topology, adjusted_state, segments,
                                         truncation_heads, version_pointers)


@st.composite
def jobs(draw):
    n = draw(st.integers(2, 7))
    edges = sorted({(a, b) for a in range(n) for b in range(a + 1, n) if draw(st.booleans())})
    nodes = [i for i in range(n) if any(i in e for e in edges)] or [0, 1]
    if not edges:
        edges = [(0, 1)]
    preds = {i: [a for a, b in edges if b == i] for i in nodes}
    succs = {i: [b for a, b in edges if a == i] for i in nodes}
    must = {i for i in nodes if not preds[i] or not succs[i]}
    connectors = must | {i for i in nodes if draw(st.booleans())}
    durable = {}
    for i in nodes:                      # barriers flow downstream: no node is ahead of its inputs
        cap = min((durable[p] for p in preds[i]), default=4)
        durable[i] = draw(st.integers(0, cap))
    acked = {c: draw(st.integers(0, durable[c])) for c in connectors}   # acks may be in flight
    return Topology.of(nodes, edges, connectors), durable, acked


def _emitted(topology, state, heads, edge, last):
    """The blocks a node sends on ``edge`` after the restart, in order; None when a replay
    needs blocks its window no longer holds."""
    p, _ = edge
    live = list(range(state.versions[p] + 1, last + 1))
    if not topology.is_connector(p):
        return live
    index = next(i for i, s in enumerate(segments(topology)) if edge[1] in s.inner | s.downstream
                 and p in s.upstream)
    replay = state.replays.get((p, index))
    if replay is None:
        return live
    first, through = replay
    if first - 1 < heads[p] or through != state.versions[p]:
        return None
    return list(range(first, through + 1)) + live


def _exactly_once(topology, state, heads, durable, last):
    for n in topology.nodes:
        version = state.versions[n]
        if version > durable[n]:
            return False                              # no such checkpoint
        for p in topology.predecessors(n):
            stream = _emitted(topology, state, heads, (p, n), last)
            if stream is None:
                return False
            kept = [b for b in stream if b > version] if topology.is_connector(n) else stream
            if kept != list(range(version + 1, last + 1)) or stream != sorted(stream):
                return False
    return True


def _feasible(topology, durable, heads, versions):
    """Local stream constraints only (no segments): which restarts lose or repeat nothing."""
    for a, b in topology.edges:
        ca, cb = topology.is_connector(a), topology.is_connector(b)
        if not ca and not cb and versions[a] != versions[b]:
            return False
        if not ca and cb and versions[a] > versions[b]:
            return False
        if ca and not (heads[a] <= versions[b] <= versions[a]):
            return False
    return all(versions[n] <= durable[n] for n in topology.nodes)


@settings(max_examples=300, deadline=None)
@given(jobs())
def test_the_adjusted_state_is_exactly_once_and_the_freshest(job):
    topology, durable, acked = job
    heads = truncation_heads(topology, acked)
    state = adjusted_state(topology, durable)
    last = max(durable.values()) + 2
    assert _exactly_once(topology, state, heads, durable, last)
    for segment in segments(topology):                         # Theorem 2
        assert len({state.versions[n] for n in segment.inner}) <= 1
    plain = [n for n in topology.nodes if not topology.is_connector(n)]
    fixed = {c: durable[c] for c in topology.connectors}
    for choice in product(*[range(durable[n] + 1) for n in plain]):
        versions = {**fixed, **dict(zip(plain, choice))}
        if _feasible(topology, durable, heads, versions):
            assert all(versions[n] <= state.versions[n] for n in plain), (versions, state.versions)
    assert _feasible(topology, durable, heads, state.versions)


def test_the_thesis_example_restarts_each_segment_at_its_own_version():
    # Figure 3.3/3.4: S -> A -> B; B -> C -> E -> F; B -> D -> I -> K (connectors S, B, E, I, F, K).
    edges = [("S", "A"), ("A", "B"), ("B", "C"), ("C", "E"), ("E", "F"), ("B", "D"), ("D", "I"), ("I", "K")]
    nodes = ["S", "A", "B", "C", "D", "E", "F", "I", "K"]
    topology = Topology.of(nodes, edges, {"S", "B", "E", "F", "I", "K"})
    durable = {"S": 500, "A": 450, "B": 400, "C": 350, "E": 350, "F": 300, "D": 300, "I": 300, "K": 300}
    state = adjusted_state(topology, durable)
    assert state.versions == {**durable, "A": 400, "C": 350, "D": 300}
    assert truncation_heads(topology, durable)["B"] == 300        # the slower branch (I) holds B back
    replayed = {u: r for (u, _), r in state.replays.items()}
    assert replayed == {"S": (401, 500), "B": (301, 400), "E": (301, 350)}
    assert state.drop_through["E"] == 350


def test_version_pointers_follow_each_downstream_segment():
    topology = Topology.of("SBEI", [("S", "B"), ("B", "E"), ("B", "I")], "SBEI")
    pointers = version_pointers(topology, {"B": 400, "E": 350, "I": 300})
    assert sorted(pointers.values()) == [300, 350, 400]
    assert truncation_heads(topology, {"B": 400, "E": 350, "I": 300}) == {"S": 400, "B": 300, "E": 0, "I": 0}


@pytest.mark.parametrize("nodes,edges,connectors,message", [
    ("SAK", [("S", "A"), ("A", "K")], "AK", "S is a source, so it must be a connector"),
    ("SAK", [("S", "A"), ("A", "K")], "SA", "K is a sink, so it must be a connector"),
    ("SABK", [("S", "A"), ("A", "B"), ("B", "A"), ("B", "K")], "SK", "form a loop: A -> B -> A"),
])
def test_topologies_it_cannot_back_up_are_refused_by_name(nodes, edges, connectors, message):
    with pytest.raises(SegmentBackupError, match=message):
        Topology.of(nodes, edges, connectors)
