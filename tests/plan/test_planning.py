"""The planner: blocks split at shuffles, edge strategies, replica counts and placement,
deterministic for the same job; pinned blocks for rescaled restores."""
import segflow
from segflow.plan.graph import Strategy
from segflow.plan.placement import Worker, pinned_blocks, plan
from segflow.plan.render import render_dot, render_text


def wordcount_like(env):
    (env.from_parallel(lambda i, n: []).flat_map(str.split).map(str.lower)
        .group_by_count().unkey().max_parallelism(1).collect())
    return env.graph


def graph(parallelism=3):
    return wordcount_like(segflow.StreamEnvironment(parallelism=parallelism))


def test_blocks_split_at_shuffles_and_chain_the_rest():
    g = graph()
    # source | flat_map+map+pre-aggregate | final aggregate | max_parallelism(1) | collect
    assert len(g.blocks) == 5
    assert [e.strategy for e in g.edges] == [Strategy.FORWARD, Strategy.HASH, Strategy.FORWARD, Strategy.FORWARD]
    names = [[op.name for op in b.operators] for b in g.blocks]
    assert any("pre-aggregate" in n for n in names[1]) and any("final aggregate" in n for n in names[2])


def test_replicas_placement_and_resolved_strategies():
    execution = plan(graph(), [Worker("b", 2), Worker("a", 1)])
    assert execution.replicas == {0: 3, 1: 3, 2: 3, 3: 1, 4: 1}
    assert [execution.placement[r] for r in execution.replica_ids(1)] == ["a", "b", "b"]
    assert execution.placement[execution.replica_ids(3)[0]] == "a"       # single blocks on the first worker
    last = execution.graph.edges[2]
    assert execution.strategy(last) is Strategy.FORWARD and execution.destinations(last, 2) == [0]
    assert execution.senders(last, 0) == [0, 1, 2]


def test_the_plan_is_deterministic():
    first, second = plan(graph(), [Worker("w", 3)]), plan(graph(), [Worker("w", 3)])
    assert render_text(first) == render_text(second)
    assert render_dot(first) == render_dot(second)
    assert render_dot(first).startswith("digraph")


def test_forward_between_different_counts_becomes_round_robin():
    execution = plan(graph(), [Worker("w", 3)], pinned={0: 2})
    assert execution.replicas[0] == 2 and execution.replicas[1] == 3
    assert execution.strategy(execution.graph.edges[0]) is Strategy.ROUND_ROBIN


def test_rescaling_pins_sources_and_their_forward_chain_only():
    g = graph()
    assert pinned_blocks(g, {0: 2, 1: 2, 2: 2, 3: 1, 4: 1}) == {0: 2, 1: 2}
    pinned = plan(g, [Worker("a", 1), Worker("b", 1), Worker("c", 1)],
                  pinned_blocks(g, {0: 4, 1: 4, 2: 4, 3: 1, 4: 1}))
    assert pinned.replicas == {0: 4, 1: 4, 2: 3, 3: 1, 4: 1}
    assert [pinned.placement[r] for r in pinned.replica_ids(0)] == ["a", "b", "c", "a"]
