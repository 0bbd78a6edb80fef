"""Watermark strategies: bounded out-of-orderness and monotonous watermarks, emitted per
batch (never per record) or at multiples of an interval, and idleness that stops an input
without records from holding back the watermark of the operators after it."""
import random
import threading
import time

import pytest
from support.pipelines import PARALLELISMS, bag, run, time_windows

from segflow import EventTimeWindow, PipelineError, WatermarkStrategy
from segflow.runtime.elements import IDLE, Batch, Watermark
from segflow.runtime.operators.time import AddTimestamps


def test_next_watermark_trails_the_largest_timestamp_and_only_advances():
    strategy = WatermarkStrategy.bounded_out_of_orderness(5)
    assert strategy.next_watermark(20, None) == 15
    assert strategy.next_watermark(20, 15) is None and strategy.next_watermark(21, 15) == 16
    assert WatermarkStrategy.monotonous().next_watermark(7, None) == 7
    every = strategy.every(10)
    assert [every.next_watermark(t, e) for t, e in [(24, None), (24, 10), (25, 10), (40, 20)]] == [10, None, 20, 30]
    for make in (lambda: WatermarkStrategy.bounded_out_of_orderness(-1), lambda: strategy.every(0),
                 lambda: strategy.with_idleness(0)):
        with pytest.raises(PipelineError):
            make()


def shuffled_within(bound, n, seed=3):
    """Times 0..n-1, each moved at most ``bound`` from its place (a bounded disorder)."""
    rng = random.Random(seed)
    return [t for _, t in sorted((t + rng.uniform(0, bound), t) for t in range(n))]


@pytest.mark.parametrize("parallelism", PARALLELISMS)
def test_records_out_of_order_within_the_bound_all_count(parallelism):
    times = shuffled_within(8, 600)
    got = run(lambda env: env.from_iterable([("k", t) for t in times])
              .add_timestamps(lambda r: r[1], WatermarkStrategy.bounded_out_of_orderness(8))
              .group_by(lambda r: r[0]).window(EventTimeWindow.tumbling(50)).count(), parallelism)
    want = time_windows([("k", (t, t)) for t in times], 50, 50)
    assert bag(got) == bag(("k", len(v)) for v in want.values())


def test_watermarks_come_per_batch_or_per_interval_never_per_record():
    op = AddTimestamps(lambda x: x, WatermarkStrategy.monotonous())
    out = op.process(Batch(list(range(100))))
    assert [type(e) for e in out] == [Batch, Watermark] and out[1].ts == 99
    later = op.process(Batch([50, 60]))                                     # no advance, no watermark
    assert type(later) is Batch and later.timestamps == [50, 60]
    spaced = AddTimestamps(lambda x: x, WatermarkStrategy.monotonous().every(1000))
    outputs = [spaced.process(Batch([t, t + 50])) for t in range(0, 5000, 100)]
    marks = [e.ts for out in outputs if isinstance(out, list) for e in out if type(e) is Watermark]
    assert marks == [0, 1000, 2000, 3000, 4000]


def test_an_idle_stream_says_so_once_and_a_record_makes_it_active_again():
    op = AddTimestamps(lambda x: x, WatermarkStrategy.monotonous().with_idleness(0.05))
    op.process(Batch([10]))
    now = time.monotonic()
    assert op.on_tick(now) is None
    assert op.on_tick(now + 0.06) == [IDLE] and op.on_tick(now + 1) is None
    assert op.process(Batch([5]))[1] == Watermark(10)           # active again, no new maximum
    assert op.snapshot() == {"largest": 10, "emitted": 10}


def test_an_idle_replica_does_not_hold_back_the_windows_of_the_others():
    """Replica 1 of a parallel source sends nothing for a while and does not end; with
    idleness, the windows of replica 0's records close meanwhile (without, they would
    wait for replica 1)."""
    closed, release = [], threading.Event()

    def records(index, replicas):
        if index == 1:
            release.wait(20)                    # silent, but alive
            return iter(())
        return iter(range(0, 1000, 10))

    def watch(window, values):
        closed.append(window.start)
        if window.start >= 500:
            release.set()
        return len(values)
    strategy = WatermarkStrategy.monotonous().with_idleness(0.2)
    started = time.monotonic()
    got = run(lambda env: env.from_parallel(records).add_timestamps(lambda t: t, strategy)
              .window_all(EventTimeWindow.tumbling(100)).process(watch), 2)
    assert got == [10] * 10 and release.is_set() and time.monotonic() - started < 15
    assert closed[:5] == [0, 100, 200, 300, 400]
