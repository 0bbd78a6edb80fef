"""``key_by`` keys records where they are; a window after it must still see every record
of a key in one place. Spread over the replicas, each replica used to emit its own
partial window per key (duplicate, wrong results at parallelism > 1)."""
import collections
import sys

import cloudpickle
import pytest
from support.pipelines import bag, run, time_windows

import segflow
from segflow import EventTimeWindow
from segflow.jobs.loader import run_pipeline

RECORDS = [(f"k{i % 7}", i) for i in range(700)]
cloudpickle.register_pickle_by_value(sys.modules[__name__])    # the workers cannot import this test module


def windowed_counts(env):
    """Records dealt round-robin over the replicas, then keyed in place."""
    return (env.from_iterable(RECORDS).add_timestamps(lambda r: r[1], lambda r, ts: ts if ts % 50 == 0 else None)
            .shuffle().key_by(lambda r: r[0]).window(EventTimeWindow.tumbling(100)).count())


def expected():
    windows = time_windows([(k, (t, t)) for k, t in RECORDS], 100, 100)
    return bag((key, len(values)) for (key, _), values in windows.items())


@pytest.mark.parametrize("parallelism", [1, 2, 4])
def test_a_window_after_key_by_counts_each_key_once_in_process(parallelism):
    assert bag(run(windowed_counts, parallelism)) == expected()


def test_a_window_after_key_by_counts_each_key_once_on_worker_processes():
    _, output = run_pipeline(lambda env: windowed_counts(env).collect(), 2, runtime="processes")
    assert bag(output.get()) == expected()


def test_a_window_after_key_by_partitions_once_like_group_by():
    env = segflow.StreamEnvironment(parallelism=2)
    env.from_iterable(RECORDS).add_timestamps(lambda r: r[1]).group_by(lambda r: r[0]) \
        .window(EventTimeWindow.tumbling(100)).count().collect()
    keyed_in_place = segflow.StreamEnvironment(parallelism=2)
    keyed_in_place.from_iterable(RECORDS).add_timestamps(lambda r: r[1]).key_by(lambda r: r[0]) \
        .window(EventTimeWindow.tumbling(100)).count().collect()
    assert len(keyed_in_place.graph.edges) == len(env.graph.edges)
    assert collections.Counter(e.strategy.name for e in keyed_in_place.graph.edges)["HASH"] == 1
