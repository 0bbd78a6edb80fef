"""The block after a source runs in the source's block (Noir's chaining) where that keeps
what every receiver sees: the sinks get the same records chained as apart, at any
parallelism, and the blocks that must stay apart (several inputs, another replica cap,
an operator on the clock, a loop) stay apart."""
import threading
import time

import pytest

import segflow
from segflow import BatchMode, EventTimeWindow, ProcessingTimeWindow, WatermarkStrategy
from segflow.plan.graph import Strategy
from segflow.plan.passthrough import elide_pass_through_blocks
from segflow.plan.source_chain import chain_into_sources
from support.graph_passes import blocks_removed, built


def mapped_then_grouped(env):
    return (env.from_parallel(lambda i, n: range(i, 3000, n)).map(lambda x: (x % 13, x))
            .group_by_fold(lambda r: r[0], 0, lambda acc, r: acc + r[1], lambda a, b: a + b).unkey())


def one_reader(env):
    return env.from_iterable(range(500)).filter(lambda x: x % 3).map(lambda x: x * 2)


def stamped_windows(env):
    return (env.generate(lambda i: i, count=900).add_timestamps(lambda x: x, WatermarkStrategy.monotonous())
            .group_by(lambda x: x % 4).window(EventTimeWindow.tumbling(100)).count().unkey())


def keyed_in_place(env):
    return env.from_parallel(lambda i, n: range(i, 400, n)).key_by(lambda x: x % 5).reduce(lambda a, b: a + b).unkey()


def split_after_source(env):
    first, second = env.generate(lambda i: i, count=500).split(2)
    return first.map(lambda x: x * 2).concat(second.filter(lambda x: x % 3 == 0))


def two_sources(env):
    return env.from_iterable(range(50)).concat(env.from_iterable(range(100, 130)))


def capped(env):
    return env.from_parallel(lambda i, n: range(i, 200, n)).max_parallelism(1).map(lambda x: -x)


def idling(env):
    return (env.from_parallel(lambda i, n: range(i, 300, n))
            .add_timestamps(lambda x: x, WatermarkStrategy.monotonous().with_idleness(0.5))
            .window_all(EventTimeWindow.tumbling(100)).count())


def iterated(env):
    return env.from_parallel(lambda i, n: list(range(i, 20, n))).iterate(
        3, 0, lambda s, state: s.map(lambda x: x + 1), lambda acc, x: acc + x, lambda total, acc: total + acc,
        delta_init=0)[1]


# Each with the number of blocks that chaining takes out.
PIPELINES = [(mapped_then_grouped, 1), (one_reader, 1), (stamped_windows, 1), (keyed_in_place, 1),
             (split_after_source, 0), (two_sources, 0), (capped, 0), (idling, 0), (iterated, 0)]


@pytest.mark.parametrize("parallelism", [1, 3])
@pytest.mark.parametrize("pipeline,chained", PIPELINES, ids=[p.__name__ for p, _ in PIPELINES])
def test_the_sinks_receive_the_same_records_with_the_block_chained_into_its_source(pipeline, chained, parallelism):
    assert blocks_removed(chain_into_sources, pipeline, parallelism, elide_pass_through_blocks) == chained


def test_the_source_block_takes_the_chain_and_what_its_records_are():
    env, _ = built(keyed_in_place, 2, elide_pass_through_blocks)
    apart = env.graph.blocks[1]
    assert apart.keys_in_place and not env.graph.blocks[0].keys_in_place
    chain_into_sources(env.graph)
    source = env.graph.blocks[0]
    assert source.is_source and source.keys_in_place
    assert [op.name.split("(")[0] for op in source.operators] == ["from_parallel", "key_by", "reduce"]
    assert [(e.src, e.dst, e.strategy) for e in env.graph.edges][0] == (0, 1, Strategy.FORWARD)

    env, _ = built(stamped_windows, 2, elide_pass_through_blocks)
    chain_into_sources(env.graph)
    assert env.graph.blocks[0].timestamped and env.graph.blocks[0].expected_records == 900


def test_a_different_batch_mode_after_the_source_keeps_the_blocks_apart():
    env = segflow.StreamEnvironment(parallelism=2)
    env.generate(lambda i: i, count=10).map(str).collect()
    env.graph.blocks[0].batch_mode = BatchMode.fixed(7)
    chain_into_sources(env.graph)
    assert len(env.graph.blocks) == 3


def test_chaining_twice_changes_nothing():
    env, _ = built(mapped_then_grouped, 2, elide_pass_through_blocks)
    chain_into_sources(env.graph)
    once = repr(env.graph.edges), [b.label for b in env.graph.blocks]
    chain_into_sources(env.graph)
    assert (repr(env.graph.edges), [b.label for b in env.graph.blocks]) == once


def test_running_a_job_chains_and_a_lone_source_block_is_also_its_sink():
    env = segflow.StreamEnvironment(parallelism=2)
    output = env.from_parallel(lambda i, n: range(i, 100, n)).map(lambda x: x + 1).collect()
    env.execute()
    assert len(env.graph.blocks) == 2 and env.graph.blocks[0].is_source
    assert sorted(output.get()) == list(range(1, 101))


def test_a_processing_time_window_closes_while_its_source_blocks():
    """A source whose iterator waits for data (here: for the first window to close) must
    not stop the window's clock: the window stays in a block of its own."""
    closed = threading.Event()

    def records():
        yield from range(5)
        closed.wait(20)
        yield 5

    def watch(window, values):
        closed.set()
        return len(values)
    env = segflow.StreamEnvironment(parallelism=1)
    output = (env.from_iterable(records()).batch_mode(BatchMode.fixed(1))
              .window_all(ProcessingTimeWindow.tumbling(0.2)).process(watch).collect())
    started = time.monotonic()
    env.execute()
    assert closed.is_set() and time.monotonic() - started < 15
    assert sum(output.get()) == 6 and len(env.graph.blocks) == 3
