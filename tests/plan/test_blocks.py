"""Blocks: operators chain into one block until one needs the network or another
partitioning; replica caps (non-parallel sources, max_parallelism, single-replica
operators) hold for one block and reset at the next split."""
import segflow
from segflow import BatchMode, CountWindow
from segflow.plan.placement import Worker, plan


def graph_of(build, parallelism=4):
    env = segflow.StreamEnvironment(parallelism=parallelism)
    build(env)
    return env.graph


def wordcount_like(env):
    (env.from_parallel(lambda i, n: []).flat_map(str.split).map(str.lower)
        .group_by_count().unkey().max_parallelism(1).collect())


def test_blocks_split_at_shuffles_and_chain_the_rest():
    g = graph_of(wordcount_like)
    assert [[op.name for op in b.operators] for b in g.blocks] == [
        ["from_parallel"],
        ["flat_map(str.split)", "map(str.lower)", "group_by_count pre-aggregate"],
        ["group_by_count final aggregate"],
        [],                                       # max_parallelism(1): a new, empty block...
        ["collect"],                              # ...and collect needs one replica: one more
    ]
    assert [b.is_source for b in g.blocks] == [True, False, False, False, False]


def test_stateless_operators_never_split_a_block():
    g = graph_of(lambda env: env.from_iterable([]).map(str).filter(bool).flat_map(list).filter_map(str)
                 .flatten().inspect(print).rich_map(lambda: str).key_by(len).map(lambda k, v: v).drop_key()
                 .for_each(print))
    assert len(g.blocks) == 2 and len(g.blocks[1].operators) == 11


def replicas(build, parallelism=4):
    env = segflow.StreamEnvironment(parallelism=parallelism)
    build(env)
    execution = plan(env.graph, [Worker("w", parallelism)])
    return [execution.replicas[b.id] for b in env.graph.blocks]


def test_a_non_parallel_source_caps_its_block_until_the_next_split():
    assert replicas(lambda env: env.from_iterable([]).map(str).shuffle().map(str).for_each(print)) == [1, 1, 4]
    assert replicas(lambda env: env.from_parallel(lambda i, n: []).map(str).for_each(print)) == [4, 4]


def test_max_parallelism_caps_one_block_and_resets_at_the_next_split():
    assert replicas(lambda env: env.from_parallel(lambda i, n: []).max_parallelism(2).map(str)
                    .group_by(len).for_each(print)) == [4, 4, 2, 4]
    assert replicas(lambda env: env.from_parallel(lambda i, n: []).max_parallelism(9).for_each(print)) == [4, 4, 4]


def test_single_replica_operators():
    """collect, fold, reduce, window_all, zip and non-keyed interval joins run on one replica."""
    src = lambda env: env.from_parallel(lambda i, n: [])  # noqa: E731
    assert replicas(lambda env: src(env).collect()) == [4, 4, 1]
    assert replicas(lambda env: src(env).fold(0, max).for_each(print)) == [4, 4, 1]
    assert replicas(lambda env: src(env).reduce_assoc(max).for_each(print)) == [4, 4, 1]
    assert replicas(lambda env: src(env).window_all(CountWindow.tumbling(2)).count().for_each(print)) == [4, 4, 1]
    assert replicas(lambda env: src(env).zip(src(env)).for_each(print)) == [4, 4, 4, 4, 1]
    stamped = lambda env: src(env).add_timestamps(len)  # noqa: E731
    assert replicas(lambda env: stamped(env).interval_join(stamped(env), 1, 1).for_each(print)) == [4, 4, 4, 4, 1]
    assert replicas(lambda env: stamped(env).group_by(str).interval_join(stamped(env).group_by(str), 1, 1)
                    .for_each(print)) == [4, 4, 4, 4, 4, 4, 4]


def test_batch_mode_applies_to_its_block_its_source_and_the_blocks_after():
    mode = BatchMode.fixed(7)
    g = graph_of(lambda env: (env.from_parallel(lambda i, n: []).map(str).shuffle().batch_mode(mode)
                              .map(str).shuffle().for_each(print),
                              env.from_iterable([]).batch_mode(BatchMode.fixed(3)).for_each(print)))
    assert [str(b.batch_mode) for b in g.blocks] == \
        ["adaptive(1024, 0.05s)", "adaptive(1024, 0.05s)", "fixed(7)", "fixed(7)", "fixed(3)", "fixed(3)"]


def test_iterations_get_a_scope_and_a_single_leader():
    g = graph_of(lambda env: env.from_parallel(lambda i, n: []).iterate(
        2, 0, lambda s, st: s.map(str).shuffle().map(str), lambda d, x: d, lambda s, d: s)[0].collect())
    assert [(b.label, b.scope, b.max_parallelism) for b in g.blocks] == [
        ("from_parallel", None, None), ("(empty)", None, None), ("iterate.start -> map(str)", 1, None),
        ("map(str) -> iterate.end", 1, None), ("iterate.leader", None, 1), ("(empty)", None, None),
        ("(empty)", None, None), ("collect", None, 1)]
