"""The strategy of every edge the API creates (FORWARD, HASH, BROADCAST, ROUND_ROBIN), and
how the planner resolves FORWARD between blocks with different replica counts."""
import pytest

import segflow
from segflow import CountWindow
from segflow.plan.graph import Strategy
from segflow.plan.placement import Worker, plan

F, H, B, R = Strategy.FORWARD, Strategy.HASH, Strategy.BROADCAST, Strategy.ROUND_ROBIN


def edges(build):
    """``[(src block, dst block, strategy)]`` of the graph ``build(env)`` makes."""
    env = segflow.StreamEnvironment(parallelism=3)
    build(env)
    return [(e.src, e.dst, e.strategy) for e in env.graph.edges]


def source(env):
    return env.from_parallel(lambda i, n: [])


@pytest.mark.parametrize("build,expected", [
    # source block -> its first block, always forward; stateless operators add no edge
    (lambda env: source(env).map(str).filter(bool).flat_map(list).key_by(len).unkey().collect(),
     [(0, 1, F), (1, 2, F)]),
    (lambda env: source(env).shuffle().collect(), [(0, 1, F), (1, 2, R), (2, 3, F)]),
    (lambda env: source(env).group_by(len).collect(), [(0, 1, F), (1, 2, H), (2, 3, F)]),
    (lambda env: source(env).group_by_count().collect(), [(0, 1, F), (1, 2, H), (2, 3, F)]),
    (lambda env: source(env).fold_assoc(0, max, max).collect(), [(0, 1, F), (1, 2, F), (2, 3, F)]),
    (lambda env: source(env).max_parallelism(2).collect(), [(0, 1, F), (1, 2, F), (2, 3, F)]),
    # a keyed stream leaving its block stays partitioned by key
    (lambda env: source(env).group_by(len).max_parallelism(2).collect(),
     [(0, 1, F), (1, 2, H), (2, 3, H), (3, 4, F)]),
    (lambda env: source(env).join(source(env), str, str).collect(),
     [(0, 1, F), (2, 3, F), (1, 4, H), (3, 4, H), (4, 5, F)]),
    (lambda env: source(env).join_with(source(env), str, str).ship_broadcast_right().left().collect(),
     [(0, 1, F), (2, 3, F), (1, 4, F), (3, 4, B), (4, 5, F)]),
    (lambda env: source(env).concat(source(env)).collect(), [(0, 1, F), (2, 3, F), (1, 4, F), (3, 4, F), (4, 5, F)]),
    (lambda env: source(env).group_by(str).concat(source(env).group_by(str)).collect(),
     [(0, 1, F), (1, 2, H), (3, 4, F), (4, 5, H), (2, 6, H), (5, 6, H), (6, 7, F)]),
    (lambda env: source(env).zip(source(env)).collect(), [(0, 1, F), (2, 3, F), (1, 4, F), (3, 4, F), (4, 5, F)]),
    (lambda env: source(env).add_timestamps(len).interval_join(source(env).add_timestamps(len), 1, 1).collect(),
     [(0, 1, F), (2, 3, F), (1, 4, F), (3, 4, F), (4, 5, F)]),
    (lambda env: source(env).group_by(str).window(CountWindow.tumbling(2)).join(
        source(env).group_by(str).window(CountWindow.tumbling(2))).collect(),
     [(0, 1, F), (1, 2, H), (3, 4, F), (4, 5, H), (2, 6, H), (5, 6, H), (6, 7, F)]),
    (lambda env: [s.collect() for s in source(env).split(2)], [(0, 1, F), (1, 2, F), (1, 3, F), (2, 4, F), (3, 5, F)]),
], ids=["chain", "shuffle", "group_by", "group_by_count", "fold_assoc", "max_parallelism", "keyed_split", "join",
        "broadcast_right", "concat", "keyed_concat", "zip", "interval_join", "window_join", "split"])
def test_edges_of_each_operator(build, expected):
    assert edges(build) == expected


def test_the_edges_of_an_iteration():
    """Into the loop forward; the body's end sends deltas to the single leader (port 2)
    and feeds back; the leader broadcasts its decision to every start replica (port 1,
    input 1); the start block's port 1 is the loop's result; the side input joining the
    body is replayed every iteration."""
    env = segflow.StreamEnvironment(parallelism=3)
    table = source(env)
    state, last = source(env).iterate(3, 0, lambda s, st: s.join(table, str, str).drop_key(),
                                      lambda d, x: d, lambda s, d: s)
    state.collect()
    last.collect()
    g = env.graph
    assert [b.label for b in g.blocks] == [
        "from_parallel", "join.key_right(str)", "from_parallel", "(empty)", "iterate.start -> join.key_left(str)",
        "inner_join(hash, hash) -> drop_key -> iterate.end", "iterate.leader", "(empty)", "(empty)", "collect",
        "collect"]
    assert [(e.src, e.dst, e.strategy, e.dst_input, e.port, e.feedback, e.replay) for e in g.edges] == [
        (0, 1, F, 0, 0, False, False), (2, 3, F, 0, 0, False, False), (3, 4, F, 0, 0, False, False),
        (4, 5, H, 0, 0, False, False), (1, 5, H, 1, 0, False, True), (5, 6, F, 0, 2, False, False),
        (6, 4, B, 1, 1, True, False), (5, 4, F, 2, 0, True, False), (6, 7, F, 0, 0, False, False),
        (4, 8, F, 0, 1, False, False), (7, 9, F, 0, 0, False, False), (8, 10, F, 0, 0, False, False)]
    assert [b.scope for b in g.blocks] == [None] * 4 + [1, 1] + [None] * 5
    assert g.blocks[6].max_parallelism == 1


@pytest.mark.parametrize("n_src,n_dst,resolved", [(3, 3, F), (3, 1, F), (1, 3, R), (2, 3, R), (3, 2, R)])
def test_forward_resolves_by_replica_counts(n_src, n_dst, resolved):
    """Forward stays forward replica-to-replica (same counts) and many-to-one; otherwise
    the records are dealt round robin."""
    env = segflow.StreamEnvironment()
    source(env).max_parallelism(n_src).max_parallelism(n_dst).collect()
    execution = plan(env.graph, [Worker("w", 3)])
    edge = env.graph.edges[2]
    assert (execution.replicas[edge.src], execution.replicas[edge.dst]) == (n_src, n_dst)
    assert execution.strategy(edge) is resolved
    if resolved is F:
        assert [execution.destinations(edge, s) for s in range(n_src)] == \
            ([[s] for s in range(n_src)] if n_dst > 1 else [[0]] * n_src)
    else:
        assert all(execution.destinations(edge, s) == list(range(n_dst)) for s in range(n_src))
