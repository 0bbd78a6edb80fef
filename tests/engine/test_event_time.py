"""add_timestamps and watermarks: a block's event time is the minimum over all its input
replicas and inputs (the watermark frontier), so no record that was on time where it was
stamped becomes late downstream, whatever the parallelism."""
from support.pipelines import bag, run, time_windows

from segflow import EventTimeWindow

TIMES = list(range(300))


def per_replica(env, watermark=lambda x, ts: ts):
    """Replica i of n stamps the times i, i + n, ... in order, with its own watermarks:
    the replicas' watermarks run ahead of each other."""
    return env.from_parallel(lambda i, n: TIMES[i::n]).add_timestamps(lambda x: x, watermark)


def expected_counts(times, key, size):
    return bag((k, len(v)) for (k, _), v in time_windows([(key(t), (t, t)) for t in times], size, size).items())


def test_the_frontier_is_the_slowest_replica(parallelism):
    """Each source replica sends watermarks as fast as its own records go; downstream
    windows only close when every replica has passed, so none of the records is late."""
    got = run(lambda env: per_replica(env).group_by(lambda x: x % 4).window(EventTimeWindow.tumbling(25)).count(),
              parallelism)
    assert bag(got) == expected_counts(TIMES, lambda t: t % 4, 25)


def test_the_frontier_is_the_slowest_input(parallelism):
    """Two timestamped inputs of a concat, one done at once, the other paced over 0.15 s:
    the input that is ahead does not close the windows the other still feeds."""
    def build(env):
        fast = env.from_iterable(TIMES).map(lambda t: ("fast", t))
        slow = env.generate(lambda t: ("slow", t), count=len(TIMES), rate=2000)
        stamp = lambda s: s.add_timestamps(lambda e: e[1], lambda e, ts: ts)  # noqa: E731
        return stamp(fast).concat(stamp(slow)).group_by(lambda e: e[0]).window(EventTimeWindow.tumbling(50)).count()
    assert bag(run(build, parallelism)) == expected_counts(TIMES, lambda t: "fast", 50) + \
        expected_counts(TIMES, lambda t: "slow", 50)


def test_watermarks_pass_shuffles_and_keyed_stages(parallelism):
    got = run(lambda env: per_replica(env).shuffle().map(lambda x: x * 1).group_by(lambda x: x % 3)
              .map(lambda k, x: x).window(EventTimeWindow.tumbling(30)).sum()
              .unkey().group_by(lambda kv: kv[0]).window(EventTimeWindow.tumbling(90)).count(), parallelism)
    # the first windows end at 30, 60, ...; a 90-wide window takes three of them per key
    ends = [end for end in range(30, 301, 30)]
    assert bag(got) == bag((k, len(v)) for (k, _), v in time_windows(
        [(k, (end, end)) for k in range(3) for end in ends], 90, 90).items())


def test_a_falling_watermark_is_ignored():
    """Watermarks must not move back: a lower one later changes nothing."""
    def watermark(x, ts):
        return ts if x % 10 == 9 else ts - 100
    got = run(lambda env: env.from_iterable(TIMES).add_timestamps(lambda x: x, watermark)
              .window_all(EventTimeWindow.tumbling(10)).count())
    assert got == [10] * 30


def test_without_watermarks_windows_close_at_the_end_of_the_stream(parallelism):
    got = run(lambda env: env.from_parallel(lambda i, n: TIMES[i::n]).add_timestamps(lambda x: x)
              .group_by(lambda x: x % 2).window(EventTimeWindow.tumbling(100)).count(), parallelism)
    assert bag(got) == expected_counts(TIMES, lambda t: t % 2, 100)


def test_records_keep_their_order_and_times_within_a_replica():
    """A watermark cuts the batch right after the record that produced it."""
    got = run(lambda env: env.from_iterable([3, 1, 2, 14, 12, 30]).add_timestamps(
        lambda x: x, lambda x, ts: 10 if x == 2 else None).window_all(EventTimeWindow.tumbling(10)).map(list))
    assert got == [[3, 1, 2], [14, 12], [30]]
