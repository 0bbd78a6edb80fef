"""Processing-time windows: records are stamped with the wall clock when they reach the
window. Each test sends six records at once, stalls the stream for longer than a window
(or a session gap), then sends six more; what is checked does not depend on finer timing."""
import time

from support.pipelines import run

from segflow import BatchMode, ProcessingTimeWindow

STALL = 0.8


def stalled(env, resumed=None):
    """0-11, one record per batch; the stream stops for ``STALL`` s before record 6 (and
    ``resumed`` gets the time it went on)."""
    def stall(x):
        if x == 6:
            time.sleep(STALL)
            if resumed is not None:
                resumed.append(time.monotonic())
        return x
    return env.from_iterable(range(12)).batch_mode(BatchMode.fixed(1)).map(stall)


def check_runs(windows, copies):
    """Every record in ``copies`` windows; each window a run of consecutive records, none
    holding records from both sides of the stall."""
    assert sorted(x for w in windows for x in w) == sorted(list(range(12)) * copies)
    for w in windows:
        assert w == list(range(w[0], w[-1] + 1)) and (w[-1] < 6 or w[0] >= 6), w


def test_tumbling_windows():
    got = run(lambda env: stalled(env).window_all(ProcessingTimeWindow.tumbling(0.5)).map(sorted))
    check_runs(got, 1)


def test_sliding_windows_hold_each_record_size_over_step_times():
    got = run(lambda env: stalled(env).window_all(ProcessingTimeWindow.sliding(0.5, 0.25)).map(sorted))
    check_runs(got, 2)


def test_a_stall_longer_than_the_gap_ends_a_session():
    got = run(lambda env: stalled(env).group_by(lambda x: x % 2).window(ProcessingTimeWindow.session(0.3))
              .map(sorted), 2)
    assert sorted(got) == [(0, [0, 2, 4]), (0, [6, 8, 10]), (1, [1, 3, 5]), (1, [7, 9, 11])]


def test_windows_close_on_the_clock_while_the_stream_is_idle():
    """The window of records 0-5 closes during the stall (idle ticks advance the clock),
    not when record 6 or the end of the stream arrives."""
    arrivals, resumed = [], []
    import segflow
    env = segflow.StreamEnvironment(parallelism=1)
    stalled(env, resumed).window_all(ProcessingTimeWindow.tumbling(0.1)).map(sorted).for_each(
        lambda w: arrivals.append((time.monotonic(), w)))
    env.execute()
    first_time, first = arrivals[0]
    assert first[-1] < 6 and first_time < resumed[0]
