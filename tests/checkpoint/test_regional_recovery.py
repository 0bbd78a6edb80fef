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

Kept consumers (rule 2's exception): some blocks are drawn *replayable* (one input
channel, deterministic). A kept consumer of a restarted block takes what the block sends
again minus what it took since the block's version, which is exact only when the block's
replay is the same sequence per channel: replayable, and fed only by exact replays or
kept connectors. The oracle counts records per version, so it cannot see order; it takes
that condition as its order model, and ``test_a_skip_count_is_wrong_when_a_replay_interleaves_its_inputs_anew``
shows on sequences why a block with two input channels breaks it.
"""
from collections import Counter
from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from segflow.checkpoint.regional import (RegionalRecovery, Skip, recovery_of_region, regional_recovery,
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
    replayable = {i for i in nodes if len(preds[i]) == 1 and draw(st.booleans())}
    return topology, progress, snapshots, written, placement, lost, replayable


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


def in_order(topology, restart, replayable):
    """The restarted blocks whose replay sends what they sent before, in the same order per
    channel (the module's doc): replayable, and fed in the region only by such blocks."""
    ordered = {}

    def replays_in_order(n):
        if n not in ordered:
            ordered[n] = n in replayable and all(replays_in_order(p) for p in topology.predecessors(n) if p in restart)
        return ordered[n]
    return {n for n in restart if replays_in_order(n)}


def exactly_once(topology, recovery: RegionalRecovery, progress, snapshots, windows, written, replayable=()):
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
    skips = {(k.producer, k.consumer): k.version for k in recovery.skips}
    ordered = in_order(topology, restart, replayable)
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
            resent = sent[p]
            if p in restart and n not in restart and (p, n) in skips:
                if p not in ordered or skips[(p, n)] != restart[p]:
                    return False           # the count would name other records than those it took
                resent = Counter({r: c for r, c in resent.items() if r[0] > progress[n]})
            stream += resent
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
    topology, progress, snapshots, written, placement, lost, replayable = loss
    windows, heads = stored_windows(topology, snapshots, written)
    recovery = regional_recovery(topology, placement, lost, snapshots, windows, heads, replayable)
    assert exactly_once(topology, recovery, progress, snapshots, windows, written, replayable), recovery
    assert touched_blocks(placement, lost) <= recovery.region
    assert recovery.kept == frozenset(topology.nodes) - recovery.region
    assert {(k.producer, k.consumer) for k in recovery.skips} == {
        (a, b) for a, b in topology.edges if a in recovery.region and b in recovery.kept}


@settings(max_examples=300, deadline=None)
@given(losses())
def test_without_replayable_blocks_no_consumer_of_a_restarted_block_keeps_running(loss):
    topology, progress, snapshots, written, placement, lost, _ = loss
    windows, heads = stored_windows(topology, snapshots, written)
    recovery = regional_recovery(topology, placement, lost, snapshots, windows, heads)
    assert not recovery.skips
    assert exactly_once(topology, recovery, progress, snapshots, windows, written)


@settings(max_examples=150, deadline=None)
@given(losses())
def test_no_smaller_region_is_exactly_once_once_every_block_went_past_its_versions(loss):
    """The planner does not know how far each block got: against blocks that all went on
    past every stored version (nothing left in flight), every region that passes contains
    its own."""
    topology, _, snapshots, written, placement, lost, replayable = loss
    windows, heads = stored_windows(topology, snapshots, written)
    finished = {n: LAST for n in topology.nodes}
    recovery = regional_recovery(topology, placement, lost, snapshots, windows, heads, replayable, finished)
    versions = plan_restore(topology, snapshots, windows).versions
    assert exactly_once(topology, recovery, finished, snapshots, windows, written, replayable)
    touched = touched_blocks(placement, lost)
    optional = sorted(set(topology.nodes) - touched)
    for size in range(len(optional) + 1):
        for extra in combinations(optional, size):
            region = touched | set(extra)
            candidate = recovery_of_region(topology, frozenset(region), versions, windows)
            if exactly_once(topology, candidate, finished, snapshots, windows, written, replayable):
                assert recovery.region <= region, (sorted(region), recovery)


@settings(max_examples=200, deadline=None)
@given(losses())
def test_losing_every_block_restarts_them_all_as_a_global_restore_does(loss):
    topology, progress, snapshots, written, _, _, replayable = loss
    windows, heads = stored_windows(topology, snapshots, written)
    everywhere = {n: {0} for n in topology.nodes}
    recovery = regional_recovery(topology, everywhere, {0}, snapshots, windows, heads, replayable)
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


def test_a_loss_in_the_middle_of_a_chain_of_replayable_blocks_keeps_the_consumers_running():
    held = {n: {1, 2} for n in range(7)}
    workers = {n: {f"w{n}"} for n in range(7)}
    windows = {0: {2}, 2: {2}, 4: {2}}
    recovery = regional_recovery(chain(), workers, {"w3"}, held, windows, NO_HEADS, replayable={1, 2, 3, 4, 5, 6})
    assert recovery.restart == {3: 2} and recovery.kept == {0, 1, 2, 4, 5, 6}
    assert recovery.skips == (Skip(3, 4, 2),)
    assert "4 skips 3's resent output after 2" in recovery.describe()
    assert exactly_once(chain(), recovery, {n: 2 for n in range(7)}, held, windows, windows, {1, 2, 3, 4, 5, 6})
    plain = regional_recovery(chain(), workers, {"w3"}, held, windows, NO_HEADS)
    assert plain.restart == {3: 2, 4: 2, 5: 2, 6: 2} and not plain.skips


def test_a_consumer_not_known_to_have_passed_the_restarted_version_restarts_with_the_block():
    """source 0 -> connector 1 -> sink 2: the store holds 1's version 2 but only the sink's
    1. The sink may have taken less than 1 sends again: keeping it would lose records."""
    topology = Topology.of([0, 1, 2], [(0, 1), (1, 2)], {0, 1, 2})
    held = {0: {1, 2}, 1: {1, 2}, 2: {1}}
    windows = {0: {1, 2}, 1: {1, 2}, 2: set()}
    workers = {n: {f"w{n}"} for n in range(3)}
    recovery = regional_recovery(topology, workers, {"w1"}, held, windows, NO_HEADS, replayable={1, 2})
    assert recovery.restart == {1: 2, 2: 1} and not recovery.skips
    behind = {0: 2, 1: 2, 2: 1}                    # the sink had not taken version 2 yet
    assert exactly_once(topology, recovery, behind, held, windows, windows, {1, 2})
    kept = recovery_of_region(topology, frozenset({1}), {0: 2, 1: 2, 2: 1}, windows)
    assert kept.skips == (Skip(1, 2, 2),)
    assert not exactly_once(topology, kept, behind, held, windows, windows, {1, 2})
    told = regional_recovery(topology, workers, {"w1"}, held, windows, NO_HEADS, {1, 2}, reached={0: 2, 1: 2, 2: 2})
    assert told.restart == {1: 2} and told.skips == (Skip(1, 2, 2),)


def merged(channels: dict[str, list[str]], arrival: list[str]) -> list[str]:
    """What a block with one input per channel sends: its inputs in the order they arrived."""
    readers = {name: iter(records) for name, records in channels.items()}
    return [f"out({next(readers[name])})" for name in arrival]


def kept_consumer_takes(first_run: list[str], taken: int, replay: list[str]) -> list[str]:
    """A consumer took ``taken`` elements of a block's first run when the block was lost;
    the block restarted and sent ``replay``; the consumer skips as many as it took."""
    return first_run[:taken] + replay[taken:]


def test_a_skip_count_is_wrong_when_a_replay_interleaves_its_inputs_anew():
    """Why only blocks with one input channel replay exactly: a merge takes its two inputs
    as they arrive, and its replay's arrival differs; skipping the first two elements of it
    then drops one the consumer never took and resends one it did."""
    one = {"a": ["a1", "a2", "a3", "a4"]}
    single = merged(one, ["a"] * 4)
    assert kept_consumer_takes(single, 2, merged(one, ["a"] * 4)) == single     # one channel: the same replay
    two = {"x": ["x1", "x2"], "y": ["y1", "y2"]}
    first_run = merged(two, ["x", "y", "x", "y"])
    replay = merged(two, ["x", "x", "y", "y"])
    taken = Counter(kept_consumer_takes(first_run, 2, replay))
    assert taken["out(y1)"] == 2 and taken["out(x2)"] == 0          # a duplicate and a loss
    assert taken != Counter(first_run)
    # so the planner keeps the consumers of a merge only when they restart with it
    topology = Topology.of([0, 1, 2, 3, 4], [(0, 2), (1, 2), (2, 3), (3, 4)], {0, 1, 2, 4})
    held = {n: {1, 2} for n in range(5)}
    windows = {0: {2}, 1: {2}, 2: {2}, 4: {2}}
    workers = {n: {f"w{n}"} for n in range(5)}
    recovery = regional_recovery(topology, workers, {"w2"}, held, windows, NO_HEADS, replayable={3, 4})
    assert recovery.restart == {2: 2, 3: 2, 4: 2} and not recovery.skips
    downstream = regional_recovery(topology, workers, {"w3"}, held, windows, NO_HEADS, replayable={3, 4})
    assert downstream.restart == {3: 2} and downstream.skips == (Skip(3, 4, 2),)
