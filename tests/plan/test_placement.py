"""Replica counts and placement: workers in name order, each taking up to its slots of a
block's replicas (so single-replica blocks land on the first worker); pinned counts for
rescaled restores."""
import pytest

import segflow
from segflow import PipelineError
from segflow.plan.graph import Strategy
from segflow.plan.placement import ReplicaId, Worker, parse_replica_name, pinned_blocks, plan, replica_name


def wordcount_like(parallelism=3):
    env = segflow.StreamEnvironment(parallelism=parallelism)
    (env.from_parallel(lambda i, n: []).flat_map(str.split).map(str.lower)
        .group_by_count().unkey().max_parallelism(1).collect())
    return env.graph


def test_replicas_and_placement_follow_worker_names_and_slots():
    execution = plan(wordcount_like(), [Worker("b", 2), Worker("a", 1)])
    assert [w.name for w in execution.workers] == ["a", "b"]
    assert execution.replicas == {0: 3, 1: 3, 2: 3, 3: 1, 4: 1}
    assert {str(r): w for r, w in execution.placement.items()} == {
        "b0.r0": "a", "b0.r1": "b", "b0.r2": "b", "b1.r0": "a", "b1.r1": "b", "b1.r2": "b",
        "b2.r0": "a", "b2.r1": "b", "b2.r2": "b", "b3.r0": "a", "b4.r0": "a"}


def test_a_replica_name_reads_back_and_nothing_else_does():
    assert replica_name(12, 3) == str(ReplicaId(12, 3)) == "b12.r3"
    assert parse_replica_name("b12.r3") == (12, 3)
    assert [parse_replica_name(n) for n in ("b1", "1.0", "b1.r0/v2", "b1.rx", "")] == [None] * 5


def test_a_block_fills_one_worker_before_the_next():
    g = wordcount_like()
    execution = plan(g, [Worker("x", 4), Worker("y", 4)])
    assert execution.replicas[1] == 8
    assert [execution.placement[ReplicaId(1, i)] for i in range(8)] == ["x"] * 4 + ["y"] * 4


def test_edges_of_the_plan():
    execution = plan(wordcount_like(), [Worker("w", 3)])
    g = execution.graph
    assert [execution.strategy(e) for e in g.edges] == [Strategy.FORWARD, Strategy.HASH, Strategy.FORWARD,
                                                       Strategy.FORWARD]
    to_one = g.edges[2]                      # 3 replicas -> max_parallelism(1)
    assert [execution.destinations(to_one, s) for s in range(3)] == [[0], [0], [0]]
    assert execution.senders(to_one, 0) == [0, 1, 2]
    same = g.edges[0]                        # 3 -> 3: replica to replica
    assert [execution.destinations(same, s) for s in range(3)] == [[0], [1], [2]]
    assert [execution.senders(same, r) for r in range(3)] == [[0], [1], [2]]
    shuffle = g.edges[1]
    assert execution.destinations(shuffle, 1) == [0, 1, 2] and execution.senders(shuffle, 2) == [0, 1, 2]


def test_planning_needs_workers_with_slots():
    with pytest.raises(PipelineError, match="cannot plan a job without workers"):
        plan(wordcount_like(), [])
    with pytest.raises(PipelineError, match="offer no slots"):
        plan(wordcount_like(), [Worker("w", 0)])


def test_forward_between_different_counts_becomes_round_robin():
    execution = plan(wordcount_like(), [Worker("w", 3)], pinned={0: 2})
    assert execution.replicas[0] == 2 and execution.replicas[1] == 3
    assert execution.strategy(execution.graph.edges[0]) is Strategy.ROUND_ROBIN


def test_rescaling_pins_sources_and_their_forward_chain_only():
    g = wordcount_like()
    assert pinned_blocks(g, {0: 2, 1: 2, 2: 2, 3: 1, 4: 1}) == {0: 2, 1: 2}
    pinned = plan(g, [Worker("a", 1), Worker("b", 1), Worker("c", 1)],
                  pinned_blocks(g, {0: 4, 1: 4, 2: 4, 3: 1, 4: 1}))
    assert pinned.replicas == {0: 4, 1: 4, 2: 3, 3: 1, 4: 1}
    assert [pinned.placement[r] for r in pinned.replica_ids(0)] == ["a", "b", "c", "a"]
