"""Regional recovery against a record-level oracle on random DAGs (pure, no servers).

The oracle knows nothing of segments or regions. It simulates a job that ran until a loss:
every block had taken versions 1..p of its inputs (p never ahead of an input), the store
holds some snapshots and window parts (some writes failed; parts below the truncation
heads are gone), a running connector holds in memory what it produced after its newest
stored part. Then it carries out a recovery: restarted blocks go back to a stored
snapshot and lose what was in flight to them, the others keep their state and position,
replays deliver what the store or the producer's memory really holds, and every block
runs to the end. Records are (source version, path): exactly once means every block,
every sink among them, ends holding each record of every path once.

The planner's recovery must pass; it must restart nothing a smaller region could spare
(every subset of the blocks that also passes contains it); and with every block lost it
restarts what a global restore restarts.
"""
from collections import Counter
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from segflow.checkpoint.regional import (RegionalRecovery, recovery_of_region, regional_recovery,
                                         restart_region, touched_blocks)
from segflow.checkpoint.segment_plan import plan_restore, restorable_versions
from segflow.checkpoint.segments import Topology, truncation_heads

NO_HEADS: dict = {}     # nothing truncated yet
REACHED = 5     # no block got further than this version when the loss came
LAST = 7        # the versions a job runs


@st.composite
def losses(draw):
    n = draw(st.integers(2, 7))
    edges = sorted({(a, b) for a in range(n) for b in range(a + 1, n) if draw(st.booleans())}) or [(0, 1)]
    nodes = sorted({i for e in edges for i in e})
    preds = {i: [a for a, b in edges if b == i] for i in nodes}
    succs = {i: [b for a, b in edges if a == i] for i in nodes}
    connectors = {i for i in nodes if not preds[i] or not succs[i] or draw(st.booleans())}
    topology = Topology.of(nodes, edges, connectors)
    progress = {}
    for i in nodes:
        progress[i] = draw(st.integers(0, min((progress[p] for p in preds[i]), default=REACHED)))
    snapshots = {i: {v for v in range(1, progress[i] + 1) if draw(st.integers(0, 4))} for i in nodes}
    written = {c: {v for v in range(1, progress[c] + 1) if draw(st.integers(0, 4))} for c in connectors}
    workers = draw(st.integers(2, 4))                 # one worker loses everything: a global restore
    placement = {i: draw(st.sets(st.integers(0, workers - 1), min_size=1, max_size=2)) for i in nodes}
    lost = draw(st.sets(st.integers(0, workers - 1), min_size=1, max_size=workers - 1))
    return topology, progress, snapshots, written, placement, lost


def stored_windows(topology, snapshots, written):
    """What the store holds of each window once the ledger truncated it, and the heads."""
    heads = truncation_heads(topology, restorable_versions(topology, snapshots))
    return {c: {v for v in parts if v > heads[c]} for c, parts in written.items()}, heads


def ideal_inputs(topology):
    """block -> version -> the records it takes in that version, in a run without failures."""
    out, taken = {}, {}
    for n in topology.nodes:            # the nodes are in topological order (edges go up)
        taken[n] = {k: Counter() for k in range(1, LAST + 1)}
        for k in range(1, LAST + 1):
            if not topology.predecessors(n):
                taken[n][k][((n, k), ())] += 1
            for p in topology.predecessors(n):
                taken[n][k].update(out[p][k])
        out[n] = {k: Counter({(origin, path + (n,)): c for (origin, path), c in taken[n][k].items()})
                  for k in taken[n]}
    return taken


def extended(records, node):
    return Counter({(k, origin, path + (node,)): c for (k, origin, path), c in records.items()})


def exactly_once(topology, recovery: RegionalRecovery, progress, snapshots, windows, written):
    """Carry ``recovery`` out (see the module's doc); whether every block ends exactly once."""
    ideal = ideal_inputs(topology)

    def ideal_out(n, versions):
        return Counter({(k, origin, path + (n,)): c for k in versions
                        for (origin, path), c in ideal[n][k].items()})
    restart = recovery.restart
    for n, version in restart.items():
        if version and version not in snapshots[n]:
            return False                                 # no snapshot to restore from
    replays = {(r.connector, r.consumer): r for r in recovery.replays}
    position = {n: restart.get(n, progress[n]) for n in topology.nodes}
    taken, sent = {}, {}
    for n in topology.nodes:
        taken[n] = Counter()
        if not topology.predecessors(n):
            taken[n] = Counter({(k, (n, k), ()): 1 for k in range(position[n] + 1, LAST + 1)})
        for p in topology.predecessors(n):
            stream = Counter()
            replay = replays.get((p, n))
            if replay is not None:
                held = windows[p] if p not in restart else {v for v in windows[p] if v <= restart[p]}
                memory = range(max(written[p], default=0) + 1, progress[p] + 1) if replay.live else ()
                stored = [v for v in range(replay.first, replay.through + 1) if v in held]
                remembered = [v for v in range(replay.through + 1, progress[p] + 1) if v in memory]
                stream += ideal_out(p, stored + remembered)
            if p not in restart and n not in restart:
                stream += ideal_out(p, range(progress[n] + 1, progress[p] + 1))      # in flight
            stream += sent[p]
            if n in recovery.drop_through:
                stream = Counter({r: c for r, c in stream.items() if r[0] > recovery.drop_through[n]})
            taken[n] += stream
        sent[n] = extended(taken[n], n)
    for n in topology.nodes:
        before = Counter({(k, origin, path): c for k in range(1, position[n] + 1)
                          for (origin, path), c in ideal[n][k].items()})
        whole = Counter({(k, origin, path): c for k in range(1, LAST + 1) for (origin, path), c in ideal[n][k].items()})
        if before + taken[n] != whole:
            return False
    return True


@settings(max_examples=400, deadline=None)
@given(losses())
def test_the_recovery_of_any_loss_is_exactly_once(loss):
    topology, progress, snapshots, written, placement, lost = loss
    windows, heads = stored_windows(topology, snapshots, written)
    recovery = regional_recovery(topology, placement, lost, snapshots, windows, heads)
    assert exactly_once(topology, recovery, progress, snapshots, windows, written), recovery
    assert touched_blocks(placement, lost) <= recovery.region
    assert recovery.kept == frozenset(topology.nodes) - recovery.region


@settings(max_examples=150, deadline=None)
@given(losses())
def test_no_smaller_region_is_exactly_once_once_every_block_went_past_its_versions(loss):
    """The planner does not know how far each block got: against blocks that all went on
    past every stored version (nothing left in flight), every region that passes contains
    its own."""
    topology, _, snapshots, written, placement, lost = loss
    windows, heads = stored_windows(topology, snapshots, written)
    recovery = regional_recovery(topology, placement, lost, snapshots, windows, heads)
    versions = plan_restore(topology, snapshots, windows).versions
    finished = {n: LAST for n in topology.nodes}
    assert exactly_once(topology, recovery, finished, snapshots, windows, written)
    touched = touched_blocks(placement, lost)
    optional = sorted(set(topology.nodes) - touched)
    for size in range(len(optional) + 1):
        for extra in combinations(optional, size):
            region = touched | set(extra)
            candidate = recovery_of_region(topology, frozenset(region), versions, windows)
            if exactly_once(topology, candidate, finished, snapshots, windows, written):
                assert recovery.region <= region, (sorted(region), recovery)


@settings(max_examples=200, deadline=None)
@given(losses())
def test_losing_every_block_restarts_them_all_as_a_global_restore_does(loss):
    topology, progress, snapshots, written, _, _ = loss
    windows, heads = stored_windows(topology, snapshots, written)
    everywhere = {n: {0} for n in topology.nodes}
    recovery = regional_recovery(topology, everywhere, {0}, snapshots, windows, heads)
    assert recovery.restart == plan_restore(topology, snapshots, windows).versions
    assert not recovery.kept and not any(r.live for r in recovery.replays)
    assert exactly_once(topology, recovery, progress, snapshots, windows, written)


def chain():
    """source -> map -> C -> dear -> D -> map -> sink: connectors C and D cut it in three."""
    return Topology.of(list(range(7)), [(i, i + 1) for i in range(6)], {0, 2, 4, 6})


def test_a_loss_in_the_middle_of_a_chain_keeps_what_is_upstream_of_it_running():
    held = {n: {1, 2} for n in range(7)}
    recovery = regional_recovery(chain(), {n: {f"w{n}"} for n in range(7)}, {"w3"}, held, {0: {2}, 2: {2}, 4: {2}},
                                 NO_HEADS)
    assert recovery.kept == {0, 1, 2}              # upstream of the lost block, connector C included
    assert recovery.restart == {3: 2, 4: 2, 5: 2, 6: 2}
    assert [(r.connector, r.consumer, r.first, r.live) for r in recovery.replays] == [(2, 3, 3, True)]
    assert restart_region(chain(), {3}) == {3, 4, 5, 6}
    assert restart_region(chain(), {1}) == {1, 2, 3, 4, 5, 6}        # the source is a connector: it replays


def test_a_boundary_connector_replays_from_the_store_and_then_from_memory():
    held = {0: {1, 2, 3}, 1: {1, 2, 3}, 2: {1, 2, 3}, 3: {1, 2}, 4: {1, 2}, 5: {1, 2}, 6: {1, 2}}
    workers = {n: {f"w{n}"} for n in range(7)}
    lost_connector = regional_recovery(chain(), workers, {"w4"}, held, {0: {3}, 2: {3}, 4: {2}}, NO_HEADS)
    assert lost_connector.kept == {0, 1, 2}        # D's plain input restarts with it; C replays into it
    assert [(r.connector, r.consumer, r.first, r.through, r.live)
            for r in lost_connector.replays] == [(2, 3, 3, 3, True)]
    lost_plain = regional_recovery(chain(), workers, {"w5"}, held, {0: {3}, 2: {3}, 4: {2}}, NO_HEADS)
    assert lost_plain.kept == {0, 1, 2, 3, 4} and lost_plain.restart == {5: 2, 6: 2}
    assert [(r.connector, r.consumer, r.first, r.through, r.live)
            for r in lost_plain.replays] == [(4, 5, 3, 2, True)]              # all of it from memory
    assert "keep 5 block(s) running" in lost_plain.describe()


def test_a_join_restarts_both_its_inputs_and_nothing_of_the_other_branch_above_them():
    # 0 -> 1 -> 2(C) -> 3 -> 6(join, C) ; 4 -> 5(C) -> 6 ; 6 -> 7 -> 8(sink)
    topology = Topology.of(list(range(9)), [(0, 1), (1, 2), (2, 3), (3, 6), (4, 5), (5, 6), (6, 7), (7, 8)],
                           {0, 2, 4, 5, 6, 8})
    assert restart_region(topology, {7}) == {7, 8}              # the join's connector replays into 7
    assert restart_region(topology, {6}) == {3, 6, 7, 8}        # its plain input 3 restarts, connector 5 replays
    assert restart_region(topology, {1}) == {1, 2, 3, 6, 7, 8}
