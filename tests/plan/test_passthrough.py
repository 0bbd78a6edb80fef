"""Pass-through blocks (no operators, one input) are removed once the graph is complete:
their sender sends to their receivers directly, ids stay dense, and what every sink
receives is the same as through the pass-through blocks, at any parallelism."""
import pytest

from segflow import EventTimeWindow
from segflow.plan.graph import Strategy
from segflow.plan.passthrough import elide_pass_through_blocks
from support.graph_passes import blocks_removed, built


def joined(env):
    """group_by then a two-input operator: a shuffle into an empty block, then a second
    shuffle into the operator's block."""
    left = env.from_parallel(lambda i, n: [(k, i) for k in range(i, 60, n)]).group_by(lambda r: r[0] % 7)
    right = env.from_parallel(lambda i, n: [(k, -i) for k in range(i, 40, n)]).group_by(lambda r: r[0] % 7)
    return left.concat(right).reduce(lambda a, b: max(a, b)).unkey()


def interval_joined(env):
    stamped = [env.from_parallel(lambda i, n, s=s: [(k, s) for k in range(i, 300, n)])
               .add_timestamps(lambda r: r[0], lambda r, ts: ts if ts % 10 == 0 else None)
               .group_by(lambda r: r[0] % 5) for s in ("a", "b")]
    return stamped[0].interval_join(stamped[1], 3, 4)


def split_after_source(env):
    first, second = env.generate(lambda i: i, count=500).split(2)
    return first.map(lambda x: x * 2).concat(second.filter(lambda x: x % 3 == 0))


def split_after_group_by(env):
    """A shuffle into an empty block, then forward edges: the branches must still get
    their records by key."""
    first, second = env.from_parallel(lambda i, n: list(range(i, 90, n))).group_by(lambda x: x % 11).split(2)
    return first.reduce(lambda a, b: a + b).unkey().concat(second.fold(0, lambda n, _: n + 1).unkey())


def capped_then_windowed(env):
    return (env.generate(lambda i: i, count=400).add_timestamps(lambda x: x, lambda x, ts: ts)
            .max_parallelism(2).window_all(EventTimeWindow.tumbling(50)).count())


def iterated(env):
    """A loop whose last iteration's output leaves through a shuffle (its own empty block)."""
    return env.from_parallel(lambda i, n: list(range(i, 20, n))).iterate(
        3, 0, lambda s, state: s.map(lambda x: x + 1), lambda acc, x: acc + x, lambda total, acc: total + acc,
        delta_init=0)[1].shuffle().map(lambda x: -x)


# Each with the number of its blocks that are pass-through ones.
PIPELINES = [(joined, 2), (interval_joined, 2), (split_after_source, 1), (split_after_group_by, 1),
             (capped_then_windowed, 0), (iterated, 2)]


@pytest.mark.parametrize("parallelism", [1, 3])
@pytest.mark.parametrize("pipeline,passing", PIPELINES, ids=[p.__name__ for p, _ in PIPELINES])
def test_the_sinks_receive_the_same_records_without_the_pass_through_blocks(pipeline, passing, parallelism):
    assert blocks_removed(elide_pass_through_blocks, pipeline, parallelism) == passing


def test_two_inputs_after_group_by_are_fed_by_one_shuffle_each():
    env, _ = built(joined, 4)
    assert len(env.graph.blocks) == 8
    elide_pass_through_blocks(env.graph)
    graph = env.graph
    assert [b.id for b in graph.blocks] == list(range(len(graph.blocks))) == [0, 1, 2, 3, 4, 5]
    (concat,) = [b for b in graph.blocks if b.operators[0].name == "concat"]
    inputs = sorted((e for e in graph.edges if e.dst == concat.id), key=lambda e: e.dst_input)
    assert [(graph.blocks[e.src].operators[-1].name.split("(")[0], e.strategy) for e in inputs] == \
        [("key_by", Strategy.HASH), ("key_by", Strategy.HASH)]
    assert all(0 <= e.src < len(graph.blocks) and 0 <= e.dst < len(graph.blocks) for e in graph.edges)


def test_a_split_source_sends_to_every_branch_itself():
    env, _ = built(split_after_source, 2)
    elide_pass_through_blocks(env.graph)
    source = env.graph.blocks[0]
    assert source.is_source
    assert sorted(e.strategy.value for e in env.graph.edges if e.src == source.id) == ["forward", "forward"]


def test_a_block_that_caps_replicas_before_a_forward_edge_stays():
    """1 replica -> round-robin -> 3 -> forward -> 1: the 3-replica block sets how records
    are dealt, so it is kept (it has a different cap than its sender); the empty block
    after the source, capped like it, goes."""
    def build(env):
        return env.from_iterable(range(10)).shuffle().max_parallelism(1).map(str)
    env, _ = built(build, 3)
    elide_pass_through_blocks(env.graph)
    assert [(b.label, b.max_parallelism) for b in env.graph.blocks] == \
        [("from_iterable", 1), ("(empty)", None), ("map(str)", 1), ("collect", 1)]
    assert [(e.src, e.dst, e.strategy) for e in env.graph.edges] == \
        [(0, 1, Strategy.ROUND_ROBIN), (1, 2, Strategy.FORWARD), (2, 3, Strategy.FORWARD)]


def test_feedback_and_side_inputs_of_loops_are_never_rewired():
    env, _ = built(iterated, 3)
    feedback = [(env.graph.blocks[e.src].name, env.graph.blocks[e.dst].name) for e in env.graph.edges if e.feedback]
    elide_pass_through_blocks(env.graph)
    assert [(env.graph.blocks[e.src].name, env.graph.blocks[e.dst].name)
            for e in env.graph.edges if e.feedback] == feedback


def test_eliding_twice_changes_nothing():
    env, _ = built(joined, 2)
    elide_pass_through_blocks(env.graph)
    once = repr(env.graph.edges), [b.id for b in env.graph.blocks]
    elide_pass_through_blocks(env.graph)
    assert (repr(env.graph.edges), [b.id for b in env.graph.blocks]) == once


def test_running_a_job_elides_them():
    env, output = built(joined, 2)
    env.execute()
    assert all(b.operators for b in env.graph.blocks)
    assert output.get()

