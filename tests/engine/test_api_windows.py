"""Count, event-time and processing-time windows (tumbling, sliding, session) and their
aggregations, against a plain-Python model of the same windows."""
import collections

import pytest
from conftest import bag, run

from segflow import CountWindow, EventTimeWindow, ProcessingTimeWindow


def events(n=400):
    """(key, time) with time increasing; a watermark every 50 time units."""
    return [(f"k{i % 3}", i * 5) for i in range(n)]


def stamped(env, data):
    return env.from_iterable(data).add_timestamps(lambda e: e[1], lambda e, ts: ts if ts % 50 == 0 else None)


def sliding_model(data, size, step):
    windows = collections.defaultdict(list)
    for key, ts in data:
        start = (ts - size) // step * step + step
        while start <= ts:
            windows[(key, start)].append(ts)
            start += step
    return windows


@pytest.mark.parametrize("size,step", [(100, 100), (100, 25), (60, 40)])
def test_event_time_windows_per_key(parallelism, size, step):
    data = events()
    window = EventTimeWindow.tumbling(size) if size == step else EventTimeWindow.sliding(size, step)
    got = run(lambda env: stamped(env, data).group_by(lambda e: e[0]).window(window)
              .map(lambda es: (min(e[1] for e in es), len(es))), parallelism)
    model = sliding_model(data, size, step)
    assert bag(got) == bag((k, (min(v), len(v))) for (k, _), v in model.items())


def test_aggregations_on_windows(parallelism):
    data = [(f"k{i % 2}", i) for i in range(1, 41)]
    base = lambda env: env.from_iterable(data).group_by(lambda e: e[0]).map(lambda k, e: e[1])  # noqa: E731
    count = CountWindow.tumbling(5)
    groups = collections.defaultdict(list)
    for k, v in data:
        groups[k].append(v)
    chunks = [(k, vs[i:i + 5]) for k, vs in groups.items() for i in range(0, len(vs), 5)]
    for name, expected in [("sum", [(k, sum(c)) for k, c in chunks]), ("min", [(k, min(c)) for k, c in chunks]),
                           ("max", [(k, max(c)) for k, c in chunks]), ("count", [(k, len(c)) for k, c in chunks]),
                           ("first", [(k, c[0]) for k, c in chunks])]:
        got = run(lambda env: getattr(base(env).window(count), name)(), parallelism)
        assert bag(got) == bag(expected), name
    folded = run(lambda env: base(env).window(count).fold(0, lambda a, x: a * 2 + x), parallelism)
    expected = []
    for k, c in chunks:
        acc = 0
        for x in c:
            acc = acc * 2 + x
        expected.append((k, acc))
    assert bag(folded) == bag(expected)


def test_count_windows_slide_and_flush_the_rest_at_the_end():
    got = run(lambda env: env.from_iterable(range(12)).window_all(CountWindow.sliding(5, 3)).map(list))
    assert got == [[0, 1, 2, 3, 4], [3, 4, 5, 6, 7], [6, 7, 8, 9, 10], [9, 10, 11]]


def test_session_windows(parallelism):
    times = [1, 2, 4, 20, 21, 50, 53, 54, 100]
    data = [(k, t) for k in ("a", "b") for t in times]
    got = run(lambda env: env.from_iterable(sorted(data, key=lambda e: e[1]))
              .add_timestamps(lambda e: e[1], lambda e, ts: ts - 1)
              .group_by(lambda e: e[0]).window(EventTimeWindow.session(5))
              .map(lambda es: [e[1] for e in es]), parallelism)
    sessions = [[1, 2, 4], [20, 21], [50, 53, 54], [100]]
    assert bag((k, tuple(v)) for k, v in got) == bag((k, tuple(s)) for k in ("a", "b") for s in sessions)


def test_late_records_behind_the_watermark_are_dropped():
    data = [("k", 10), ("k", 120), ("k", 30), ("k", 130)]           # 30 arrives after watermark 120
    got = run(lambda env: env.from_iterable(data).add_timestamps(lambda e: e[1], lambda e, ts: ts)
              .group_by(lambda e: e[0]).window(EventTimeWindow.tumbling(100)).count())
    assert sorted(got) == [("k", 1), ("k", 2)]


def test_window_join_pairs_records_of_the_same_window_and_key(parallelism):
    left = [(f"k{i % 2}", i * 10) for i in range(20)]
    right = [(f"k{i % 2}", i * 10 + 5) for i in range(20)]

    def build(env):
        w = EventTimeWindow.tumbling(50)
        a = stamped(env, left).group_by(lambda e: e[0]).window(w)
        b = env.from_iterable(right).add_timestamps(lambda e: e[1], lambda e, ts: ts - 5 if ts % 50 == 5 else None) \
            .group_by(lambda e: e[0]).window(w)
        return a.join(b)
    got = run(build, parallelism)
    expected = [(l[0], (l, r)) for l in left for r in right if l[0] == r[0] and l[1] // 50 == r[1] // 50]
    assert bag(got) == bag(expected)


def test_processing_time_windows_group_by_arrival():
    """Records arriving over about 0.6 s (a rate-limited generator) fall into several
    0.15 s windows, each a run of consecutive records."""
    got = run(lambda env: env.generate(lambda i: i, count=12, rate=20)
              .window_all(ProcessingTimeWindow.tumbling(0.15)).map(sorted))
    assert sorted(x for w in got for x in w) == list(range(12))
    assert len(got) >= 3
    assert all(w == list(range(w[0], w[-1] + 1)) for w in got)
