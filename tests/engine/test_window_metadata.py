"""Window functions that see their window: ``process(fn(window, records))``,
``with_window()`` results and window ``cogroup``, checked against plain Python for
tumbling, sliding, session and count windows, keyed and not."""
import collections

import pytest
from support.pipelines import PARALLELISMS, bag, run, stamped

from segflow import CountWindow, EventTimeWindow, Window, WindowResult

EVENTS = [(f"k{i % 3}", t) for i, t in enumerate([1, 4, 9, 12, 15, 22, 23, 31, 37, 52, 53, 70])]


def span(window, values):
    return (window.start, window.end, window.key, tuple(sorted(t for _, t in values)))


def model(events, windows_of, keyed):
    """``{(start, end, key): sorted times}`` of the windows ``windows_of(t)`` gives."""
    out = collections.defaultdict(list)
    for key, t in events:
        for start, end in windows_of(t):
            out[(start, end, key if keyed else None)].append(t)
    return bag((s, e, k, tuple(sorted(ts))) for (s, e, k), ts in out.items())


@pytest.mark.parametrize("parallelism", PARALLELISMS)
def test_process_sees_tumbling_and_sliding_windows_per_key(parallelism):
    tumbling = run(lambda env: stamped(env, EVENTS).group_by(lambda e: e[0])
                   .window(EventTimeWindow.tumbling(10)).process(span), parallelism)
    assert bag(r for _, r in tumbling) == model(EVENTS, lambda t: [(t // 10 * 10, t // 10 * 10 + 10)], True)
    sliding = run(lambda env: stamped(env, EVENTS).window_all(EventTimeWindow.sliding(20, 10)).process(span),
                  parallelism)
    assert bag(sliding) == model(EVENTS, lambda t: [(s, s + 20) for s in (t // 10 * 10 - 10, t // 10 * 10)], False)


def test_process_sees_session_and_count_window_bounds():
    sessions = run(lambda env: stamped(env, EVENTS).window_all(EventTimeWindow.session(6)).process(span))
    assert sessions == [(1, 21, None, (1, 4, 9, 12, 15)), (22, 29, None, (22, 23)), (31, 43, None, (31, 37)),
                        (52, 59, None, (52, 53)), (70, 76, None, (70,))]
    counts = run(lambda env: stamped(env, EVENTS).group_by(lambda e: e[0]).window(CountWindow.tumbling(2))
                 .process(span))
    by_key = collections.defaultdict(list)
    for key, t in EVENTS:
        by_key[key].append(t)
    assert bag(r for _, r in counts) == bag((ts[i], ts[min(i + 1, len(ts) - 1)], k, tuple(ts[i:i + 2]))
                                            for k, ts in by_key.items() for i in range(0, len(ts), 2))


def test_with_window_puts_the_window_beside_every_aggregate():
    out = run(lambda env: stamped(env, EVENTS).group_by(lambda e: e[0]).window(EventTimeWindow.tumbling(25))
              .with_window().count())
    assert all(isinstance(r, WindowResult) and r.window.key == k for k, r in out)
    got = bag((r.window.start, r.window.end, r.window.key, r.value) for _, r in out)
    assert got == bag((s, e, k, len(ts)) for s, e, k, ts in model(EVENTS, lambda t: [(t // 25 * 25, t // 25 * 25 + 25)],
                                                                    True))
    assert Window(0, 25, "k0") in {r.window for _, r in out}


@pytest.mark.parametrize("parallelism", PARALLELISMS)
def test_cogroup_sees_both_sides_of_each_window_even_when_one_is_empty(parallelism):
    left = [("a", 1), ("b", 2), ("a", 11), ("c", 21)]
    right = [("a", 3), ("a", 4), ("b", 15), ("d", 22)]

    def both(window, lefts, rights):
        return (window.start, window.key, tuple(sorted(t for _, t in lefts)), tuple(sorted(t for _, t in rights)))
    keyed = run(lambda env: stamped(env, left).group_by(lambda e: e[0]).window(EventTimeWindow.tumbling(10)).cogroup(
        stamped(env, right).group_by(lambda e: e[0]).window(EventTimeWindow.tumbling(10)), both), parallelism)
    assert bag(r for _, r in keyed) == bag([(0, "a", (1,), (3, 4)), (0, "b", (2,), ()), (10, "a", (11,), ()),
                                            (10, "b", (), (15,)), (20, "c", (21,), ()), (20, "d", (), (22,))])
    whole = run(lambda env: stamped(env, left).window_all(EventTimeWindow.tumbling(10)).cogroup(
        stamped(env, right).window_all(EventTimeWindow.tumbling(10)), both), parallelism)
    assert bag(whole) == bag([(0, None, (1, 2), (3, 4)), (10, None, (11,), (15,)), (20, None, (21,), (22,))])
