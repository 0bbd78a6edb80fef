"""Segment backup over a real store's contents: restorable versions, the restore plan
when the store has gaps, and window truncation from version acks (pure, no servers).

The central property: whatever order acknowledgements arrive in, truncation never
removes a window part that a restore from the store at that moment would need, so a
restore never has to fall back behind what the ledger let go."""
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from segflow.checkpoint.segment_plan import SegmentLedger, plan_restore, restorable_versions
from segflow.checkpoint.segments import Topology, adjusted_state, segments

sys.path.insert(0, str(Path(__file__).parent))
from test_segments import _exactly_once, jobs  # noqa: E402


def linear():
    return Topology.of(["S", "a", "C", "b", "K"], [("S", "a"), ("a", "C"), ("C", "b"), ("b", "K")], {"S", "C", "K"})


def test_a_connector_is_never_restored_ahead_of_an_upstream_connector():
    # K's snapshot 3 became durable before C's: K must not restart ahead of C.
    held = {"S": {1, 2, 3}, "a": {1, 2, 3}, "C": {1, 2}, "b": {1, 2, 3}, "K": {1, 2, 3}}
    assert restorable_versions(linear(), held) == {"S": 3, "C": 2, "K": 2}


def test_a_connector_needs_the_plain_nodes_behind_it_at_its_version():
    # b lost its snapshot 3 (a failed write): K cannot restart at 3, its segment could not.
    held = {"S": {1, 2, 3}, "a": {1, 2, 3}, "C": {1, 2, 3}, "b": {1, 2}, "K": {1, 2, 3}}
    assert restorable_versions(linear(), held)["K"] == 2


def test_a_gap_in_a_window_lowers_the_connector_that_would_replay_it():
    held = {"S": {1, 2, 3}, "a": {1, 2, 3}, "C": {1, 2, 3}, "b": {1, 2, 3}, "K": {1}}
    plan = plan_restore(linear(), held, {"S": {1, 2, 3}, "C": {3}})      # C's part 2 is missing
    assert plan.versions["C"] == 1 and plan.versions["b"] == 1 and plan.versions["K"] == 1
    assert list(plan.replays.values()) == [(2, 3)]                          # S replays to a instead
    full = plan_restore(linear(), held, {"S": {1, 2, 3}, "C": {2, 3}})
    assert full.versions == {"S": 3, "a": 3, "C": 3, "b": 1, "K": 1}
    assert list(full.replays.values()) == [(2, 3)]


@st.composite
def stores(draw):
    topology, _, _ = draw(jobs())
    held = {n: set(draw(st.lists(st.integers(1, 5), max_size=5))) for n in topology.nodes}
    parts = {c: set(draw(st.lists(st.integers(1, 5), max_size=5))) for c in topology.connectors}
    return topology, held, parts


@settings(max_examples=300, deadline=None)
@given(stores())
def test_the_plan_of_any_store_uses_only_what_it_holds_and_is_exactly_once(store):
    topology, held, parts = store
    plan = plan_restore(topology, held, parts)
    for node, version in plan.versions.items():
        assert version == 0 or version in held[node], (node, version)
    for (connector, _), (first, last) in plan.replays.items():
        assert set(range(first, last + 1)) <= parts[connector]
    durable = {n: max(held[n], default=0) for n in topology.nodes}
    heads = {c: 0 for c in topology.connectors}
    last = max(durable.values(), default=0) + 2
    assert _exactly_once(topology, plan, heads, durable, last)


@st.composite
def ack_orders(draw):
    """A job's acknowledgements in an order the engine can produce: each node persists its
    versions in order, nodes in any order relative to each other."""
    topology, _, _ = draw(jobs())
    versions = draw(st.integers(1, 4))
    queues = {n: list(range(1, versions + 1)) for n in topology.nodes}
    order = []
    while any(queues.values()):
        node = draw(st.sampled_from(sorted(n for n, q in queues.items() if q)))
        order.append((node, queues[node].pop(0)))
    return topology, order


@settings(max_examples=300, deadline=None)
@given(ack_orders())
def test_truncation_never_removes_what_a_restore_needs(job):
    topology, order = job
    ledger = SegmentLedger(topology, {n: 1 for n in topology.nodes})
    held = {n: set() for n in topology.nodes}
    parts = {c: set() for c in topology.connectors if topology.successors(c)}
    for node, version in order:
        held[node].add(version)
        if node in parts:
            parts[node].add(version)
        for connector, gone in ledger.ack(node, 0, version).items():
            parts[connector] -= set(gone)
        expected = adjusted_state(topology, restorable_versions(topology, held))
        assert plan_restore(topology, held, parts) == expected, (node, version)


def test_a_version_counts_once_every_replica_acknowledged_it():
    ledger = SegmentLedger(linear(), {"S": 2, "a": 2, "C": 2, "b": 2, "K": 2})
    for node in ("S", "a"):
        for replica in (0, 1):
            assert ledger.ack(node, replica, 1, size=100, records=10) == {}
    assert ledger.ack("S", 1, 1, size=100, records=10) == {}, "a repeated acknowledgement"
    size = ledger.window_sizes()["S"]
    assert (size.versions, size.bytes, size.records, size.truncation_lag) == (1, 200, 20, 1)
    assert ledger.ack("C", 0, 1) == {}
    assert ledger.ack("C", 1, 1) == {"S": [1]}
    for replica in (0, 1):
        assert ledger.ack("b", replica, 1) == {}
    assert ledger.ack("K", 0, 1) == {}
    assert ledger.ack("K", 1, 1) == {"C": [1]}
    assert set(ledger.window_sizes()) == {"S", "C"}          # a sink keeps no window
    assert ledger.window_sizes()["C"].versions == 0


def test_the_slower_branch_holds_a_split_connectors_window():
    # S feeds two segments; only the one ending at K1 has acknowledged version 2.
    topology = Topology.of(["S", "x", "y", "K1", "K2"], [("S", "x"), ("S", "y"), ("x", "K1"), ("y", "K2")],
                           {"S", "K1", "K2"})
    assert len(segments(topology)) == 2
    ledger = SegmentLedger(topology, {n: 1 for n in topology.nodes})
    for node in ("S", "x", "y", "K1", "K2"):
        ledger.ack(node, 0, 1)
    for node in ("S", "x", "K1"):
        assert ledger.ack(node, 0, 2) == {}
    assert ledger.heads["S"] == 1 and ledger.window_sizes()["S"].versions == 1


def test_the_ledger_keeps_only_versions_a_restore_can_still_choose():
    ledger = SegmentLedger(linear(), {n: 1 for n in linear().nodes})
    for version in range(1, 101):
        for node in ("S", "a", "C", "b", "K"):
            ledger.ack(node, 0, version)
    assert all(held == {100} for held in ledger.complete.values()), ledger.complete
    assert ledger.heads == {"S": 100, "C": 100, "K": 0}


def test_a_part_written_again_after_its_truncation_is_truncated_again():
    """A round taken again (the job's end, after a failed first try) rewrites window parts
    of a version already truncated: the repeated acknowledgement must remove them, or a
    finished job leaves them in the store for good."""
    ledger = SegmentLedger(linear(), {n: 2 for n in linear().nodes})
    truncated = {}
    for node in ("S", "a", "C", "b", "K"):
        for replica in (0, 1):
            truncated.update(ledger.ack(node, replica, 7))
    assert truncated == {"S": [7], "C": [7]}
    assert ledger.ack("S", 0, 7) == {"S": [7]}
    assert ledger.ack("C", 1, 7) == {"C": [7]}
    assert ledger.ack("K", 1, 7) == {}, "a sink has no window"
    assert ledger.ack("S", 1, 8) == {}, "a new version waits for the others"


def test_a_rewound_region_acknowledges_its_versions_again():
    """A regional recovery puts C and b back at version 1: their acknowledgements of 2 and
    3 are void, and each replica's acknowledgement of them counts again; S keeps its own."""
    ledger = SegmentLedger(linear(), {n: 2 for n in linear().nodes})
    for version in (1, 2, 3):
        for node in ("S", "a", "C", "b"):
            for replica in (0, 1):
                ledger.ack(node, replica, version, size=10)
    ledger.ack("C", 0, 4, size=10)
    ledger.rewind({"C": 1, "b": 1})
    assert ledger.complete["C"] == {1} and ledger.complete["b"] == {1}
    assert ledger.complete["S"] == {1, 2, 3}
    assert set(ledger.parts["C"]) <= {1} and ("C", 4) not in ledger.acked
    ledger.ack("C", 0, 2)
    assert 2 not in ledger.complete["C"], "one replica of two"
    ledger.ack("C", 1, 2)
    assert 2 in ledger.complete["C"]
