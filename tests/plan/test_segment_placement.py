"""Placement by segment (pure): the groups of blocks that get workers of their own, how
workers are shared out among them, and what losing one worker then restarts (regional
recovery's region) compared with spreading every block over every worker."""
from hypothesis import given, settings
from hypothesis import strategies as st

import segflow

from recovery.jobs.segment_shapes import build
from segflow.checkpoint.regional import restart_region, touched_blocks
from segflow.checkpoint.segment_placement import placement_groups
from segflow.checkpoint.segments import Topology
from segflow.cli.segment_layout import segment_plan
from segflow.plan.compact import compact
from segflow.plan.placement import Worker, group_workers, plan


def chain(n=7, connectors=(0, 2, 4, 6)):
    return Topology.of(list(range(n)), [(i, i + 1) for i in range(n - 1)], set(connectors))


def test_a_chain_groups_each_segment_with_the_connector_it_ends_and_the_source_alone():
    assert placement_groups(chain()) == ((0,), (1, 2), (3, 4), (5, 6))


def test_a_join_goes_with_the_first_segment_that_ends_it():
    # 0 -> 1 -> 3(join) ; 2 -> 3 ; 3 -> 4 -> 5
    join = Topology.of(list(range(6)), [(0, 1), (1, 3), (2, 3), (3, 4), (4, 5)], {0, 2, 3, 5})
    assert placement_groups(join) == ((0,), (1, 3), (2,), (4, 5))


@st.composite
def dags(draw):
    n = draw(st.integers(2, 8))
    edges = sorted({(a, b) for a in range(n) for b in range(a + 1, n) if draw(st.booleans())}) or [(0, 1)]
    nodes = sorted({i for e in edges for i in e})
    connectors = {i for i in nodes if not any(b == i for _, b in edges) or not any(a == i for a, _ in edges)
                  or draw(st.booleans())}
    return Topology.of(nodes, edges, connectors)


@settings(max_examples=200, deadline=None)
@given(dags(), st.integers(1, 3))
def test_groups_partition_the_blocks_and_a_lost_worker_never_restarts_more_than_when_spread(topology, per_group):
    groups = placement_groups(topology)
    assert sorted(b for g in groups for b in g) == sorted(topology.nodes)
    workers = [Worker(f"w{i:02d}", 1) for i in range(per_group * len(groups))]
    own = group_workers(groups, workers)
    assert own is not None
    for group in groups:
        assert len({w.name for b in group for w in own[b]}) == per_group
        assert all(own[b] == own[group[0]] for b in group)
    placement = {b: {w.name for w in own[b]} for b in topology.nodes}
    spread = {b: {w.name for w in workers} for b in topology.nodes}
    for worker in workers:
        by_segment = restart_region(topology, touched_blocks(placement, {worker.name}))
        assert by_segment <= restart_region(topology, touched_blocks(spread, {worker.name}))
        assert not any(topology.is_connector(b) and not topology.predecessors(b) for b in by_segment
                       if worker.name not in placement[b])           # a source restarts only if it was lost


def five_blocks():
    env = segflow.StreamEnvironment(parallelism=3)
    env.from_parallel(lambda i, n: []).flat_map(str.split).group_by_count().unkey().shuffle().collect()
    return env.graph


def test_the_planner_gives_each_group_its_share_and_spreads_without_enough_workers():
    graph = five_blocks()
    workers = [Worker(f"w{i}", 1) for i in range(5)]
    groups = ((0, 1), (2, 3, 4))
    execution = plan(graph, workers, groups=groups)
    assert execution.replicas == {0: 3, 1: 3, 2: 2, 3: 2, 4: 1}        # 5 workers: 3 and 2 (collect: one)
    assert {execution.placement[r] for b in (0, 1) for r in execution.replica_ids(b)} == {"w0", "w1", "w2"}
    assert {execution.placement[r] for b in (2, 3, 4) for r in execution.replica_ids(b)} == {"w3", "w4"}
    few = plan(graph, workers[:1], groups=groups)
    assert set(few.replicas.values()) == {1} and set(few.placement.values()) == {"w0"}
    assert group_workers(groups, workers[:1]) is None
    assert plan(graph, workers, groups=groups, pinned={0: 3}).replicas == plan(graph, workers, pinned={0: 3}).replicas


def test_segflow_plan_names_each_blocks_segment_and_says_when_workers_are_too_few():
    env = segflow.StreamEnvironment(parallelism=2)
    build(env, "/nonexistent/out", shape="linear")
    compact(env.graph)
    execution, roles, note = segment_plan(env.graph, 6, "auto", "segment")
    assert note.startswith("placement by segment: 3 groups of blocks (0; 1 2; 3)")
    assert roles == {0: "connector", 1: "segment 1", 2: "connector", 3: "connector"}
    assert {execution.placement[r] for r in execution.replica_ids(1)} == {"w2", "w3"}
    _, _, few = segment_plan(env.graph, 2, "auto", "segment")
    assert "needs a worker for each of its 3 groups" in few and "spread over every worker" in few
