"""Event-time windows (tumbling, sliding, session) per key and over the whole stream: their
boundaries, late records, output times, aggregations and joins, against plain Python."""
import pytest
from support.pipelines import WINDOW_AGGREGATIONS, bag, groups, run, sessions, stamped, time_windows

from segflow import EventTimeWindow

EVENTS = [(f"k{i % 3}", i * 5) for i in range(150)]          # (key, time), times increasing


def keyed_windows(events, size, step):
    return time_windows([(k, (t, t)) for k, t in events], size, step)


@pytest.mark.parametrize("size,step", [(100, 100), (100, 25), (60, 40), (20, 50)], ids=str)
def test_time_windows_per_key(parallelism, size, step):
    """Aligned windows [start, start + size) every ``step``; with a step longer than the
    size (hopping windows) records between windows belong to none."""
    window = EventTimeWindow.tumbling(size) if size == step else EventTimeWindow.sliding(size, step)
    got = run(lambda env: stamped(env, EVENTS, every=50).group_by(lambda e: e[0]).window(window)
              .map(lambda es: tuple(e[1] for e in es)), parallelism)
    assert bag(got) == bag((k, tuple(v)) for (k, _), v in keyed_windows(EVENTS, size, step).items())


def test_time_windows_over_the_whole_stream(parallelism):
    got = run(lambda env: stamped(env, EVENTS, every=50).window_all(EventTimeWindow.sliding(30, 20))
              .map(lambda es: [e[1] for e in es]), parallelism)
    assert got == [v for _, v in sorted(time_windows([(None, (t, t)) for _, t in EVENTS], 30, 20).items())]


@pytest.mark.parametrize("name", WINDOW_AGGREGATIONS)
def test_aggregations_of_time_windows(parallelism, name):
    apply, model = WINDOW_AGGREGATIONS[name]
    got = run(lambda env: apply(stamped(env, EVENTS, every=50).group_by(lambda e: e[0]).map(lambda k, e: e[1])
                                .window(EventTimeWindow.sliding(40, 20))), parallelism)
    assert bag(got) == bag((k, model(v)) for (k, _), v in keyed_windows(EVENTS, 40, 20).items())


def test_window_boundaries_are_start_inclusive_end_exclusive(parallelism):
    """A record at a window's end time belongs to the next window; negative and fractional
    times land in the right aligned window too."""
    times = [-10, -0.5, 0, 9.99, 10, 19, 20, 20.5]
    got = run(lambda env: stamped(env, times, time=lambda t: t).window_all(EventTimeWindow.tumbling(10)).map(list),
              parallelism)
    assert got == [[-10, -0.5], [0, 9.99], [10, 19], [20, 20.5]]


def test_late_records_are_dropped_from_closed_windows_only(parallelism):
    """Watermark w closes the windows ending at or before w. A later record older than w
    joins only the windows still open: with sliding(10, 5), a record at 17 after watermark
    20 misses [10, 20) but joins [15, 25). A record at exactly w is on time."""
    def watermark(e, ts):
        return 20 if ts == 21 else None
    times = [11, 16, 21, 17, 20, 24]
    got = run(lambda env: env.from_iterable(times).add_timestamps(lambda t: t, watermark)
              .window_all(EventTimeWindow.sliding(10, 5)).map(list), parallelism)
    assert got == [[11], [11, 16], [16, 21, 17, 20, 24], [21, 20, 24]]


def test_a_window_result_carries_its_end_time_so_windows_chain(parallelism):
    """Results of [0, 10), [10, 20)... are stamped 10, 20...; a 30-wide window over them
    takes the results stamped 30, 40 and 50 together."""
    got = run(lambda env: stamped(env, list(range(100)), time=lambda x: x).window_all(EventTimeWindow.tumbling(10))
              .min().window_all(EventTimeWindow.tumbling(30)).map(list), parallelism)
    assert got == [[0, 10], [20, 30, 40], [50, 60, 70], [80, 90]]


SESSION_TIMES = [1, 2, 4, 20, 21, 26, 50, 53, 54, 100]


@pytest.mark.parametrize("gap", [3, 5, 30])
def test_session_windows_per_key(parallelism, gap):
    """Records at most ``gap`` apart share a session (a difference of exactly ``gap`` too)."""
    data = sorted(((k, t) for k in ("a", "b") for t in SESSION_TIMES if k == "a" or t % 2 == 0), key=lambda e: e[1])
    got = run(lambda env: stamped(env, data).group_by(lambda e: e[0]).window(EventTimeWindow.session(gap))
              .map(lambda es: tuple(e[1] for e in es)), parallelism)
    expected = [(k, tuple(s)) for k, ts in groups(data).items() for s in sessions(ts, gap)]
    assert bag(got) == bag(expected)


def test_a_record_that_fills_a_gap_merges_two_sessions(parallelism):
    """Out of order but not late (the watermark lags): 6 joins the sessions of 1 and 10."""
    def watermark(e, ts):
        return ts - 20
    got = run(lambda env: env.from_iterable([1, 10, 6, 40]).add_timestamps(lambda t: t, watermark)
              .window_all(EventTimeWindow.session(5)).map(list), parallelism)
    assert got == [[1, 6, 10], [40]]


def test_a_session_result_carries_its_last_time_plus_the_gap(parallelism):
    """Sessions [1, 2, 4], [20, 21, 26], [50, 53, 54] and [100] with gap 5 end at 9, 31,
    59 and 105: a 30-wide window after them takes the second and third together."""
    got = run(lambda env: stamped(env, SESSION_TIMES, time=lambda t: t).window_all(EventTimeWindow.session(5))
              .map(list).window_all(EventTimeWindow.tumbling(30)).map(list), parallelism)
    assert got == [[[1, 2, 4]], [[20, 21, 26], [50, 53, 54]], [[100]]]


def test_session_records_behind_the_watermark_are_dropped(parallelism):
    def watermark(e, ts):
        return 30 if ts == 30 else None
    got = run(lambda env: env.from_iterable([1, 30, 29, 31]).add_timestamps(lambda t: t, watermark)
              .window_all(EventTimeWindow.session(5)).map(list), parallelism)
    assert got == [[1], [30, 31]]


def test_window_joins_pair_records_of_the_same_window(parallelism):
    left = [(f"k{i % 2}", i * 10) for i in range(20)]
    right = [(f"k{i % 2}", i * 10 + 5) for i in range(20)]
    w = EventTimeWindow.tumbling(50)

    def keyed(env):
        return stamped(env, left).group_by(lambda e: e[0]).window(w).join(
            stamped(env, right).group_by(lambda e: e[0]).window(w))

    def plain(env):
        return stamped(env, left).window_all(w).join(stamped(env, right).window_all(w))
    same_window = [(lft, r) for lft in left for r in right if lft[1] // 50 == r[1] // 50]
    assert bag(run(keyed, parallelism)) == bag((lft[0], (lft, r)) for lft, r in same_window if lft[0] == r[0])
    assert bag(run(plain, parallelism)) == bag(same_window)


def test_empty_and_one_record_inputs(parallelism):
    for window in (EventTimeWindow.tumbling(5), EventTimeWindow.sliding(5, 1), EventTimeWindow.session(5)):
        assert run(lambda env: stamped(env, []).window_all(window).count(), parallelism) == []
        assert run(lambda env: stamped(env, [("k", 3)]).group_by(lambda e: e[0]).window(window).count(),
                   parallelism) == [("k", 1)] * (5 if window.step == 1 else 1)
