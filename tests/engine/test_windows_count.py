"""Count windows, tumbling and sliding, per key and over the whole stream, with every
window aggregation, against a plain-Python model of the same windows."""
import pytest
from support.pipelines import WINDOW_AGGREGATIONS, bag, count_windows, groups, run

from segflow import CountWindow, EventTimeWindow

DATA = [(f"k{i % 3}", (i * 13) % 50) for i in range(200)]
SHAPES = [(5, 5), (5, 2), (3, 1), (4, 4), (2, 5)]


def window(size, step):
    return CountWindow.tumbling(size) if size == step else CountWindow.sliding(size, step)


@pytest.mark.parametrize("size,step", SHAPES, ids=lambda v: str(v))
def test_count_windows_per_key(parallelism, size, step):
    """One source, so each key's values arrive in order and the windows are exact."""
    got = run(lambda env: env.from_iterable(DATA).group_by(lambda e: e[0]).map(lambda k, e: e[1])
              .window(window(size, step)).map(tuple), parallelism)
    assert groups(got) == {k: list(map(tuple, count_windows(v, size, step))) for k, v in groups(DATA).items()}


@pytest.mark.parametrize("size,step", SHAPES, ids=lambda v: str(v))
def test_count_windows_over_the_whole_stream(parallelism, size, step):
    values = list(range(23))
    got = run(lambda env: env.from_iterable(values).window_all(window(size, step)).map(list), parallelism)
    assert got == count_windows(values, size, step)


def test_a_step_longer_than_the_window_starts_the_next_window_at_once():
    """Unlike time windows (a step longer than the size leaves gaps), a count window's next
    window starts with the next value: every value is in exactly one window."""
    assert run(lambda env: env.from_iterable(range(7)).window_all(CountWindow.sliding(2, 5)).map(list)) == \
        [[0, 1], [2, 3], [4, 5], [6]]


def test_the_last_window_is_flushed_only_with_new_values():
    assert run(lambda env: env.from_iterable(range(12)).window_all(CountWindow.sliding(5, 3)).map(list)) == \
        [[0, 1, 2, 3, 4], [3, 4, 5, 6, 7], [6, 7, 8, 9, 10], [9, 10, 11]]
    assert run(lambda env: env.from_iterable(range(7)).window_all(CountWindow.sliding(5, 2)).map(list)) == \
        [[0, 1, 2, 3, 4], [2, 3, 4, 5, 6]]
    assert run(lambda env: env.from_iterable(range(6)).window_all(CountWindow.tumbling(3)).count()) == [3, 3]


@pytest.mark.parametrize("name", WINDOW_AGGREGATIONS)
def test_aggregations_of_count_windows(parallelism, name):
    apply, model = WINDOW_AGGREGATIONS[name]
    got = run(lambda env: apply(env.from_iterable(DATA).group_by(lambda e: e[0]).map(lambda k, e: e[1])
                                .window(CountWindow.sliding(4, 3))), parallelism)
    expected = [(k, model(c)) for k, v in groups(DATA).items() for c in count_windows(v, 4, 3)]
    assert bag(map(repr, got)) == bag(map(repr, expected))


def test_empty_one_record_and_one_key(parallelism):
    assert run(lambda env: env.from_iterable([]).window_all(CountWindow.tumbling(3)).count(), parallelism) == []
    assert run(lambda env: env.from_iterable([("a", 1)]).group_by(lambda e: e[0])
               .window(CountWindow.tumbling(3)).count(), parallelism) == [("a", 1)]
    got = run(lambda env: env.from_parallel(lambda i, n: range(i, 30, n)).group_by(lambda x: "same")
              .window(CountWindow.tumbling(4)).count(), parallelism)
    assert got == [("same", 4)] * 7 + [("same", 2)]


def test_a_count_window_is_stamped_with_its_latest_time_or_a_later_watermark():
    """Records at 5, 7, 8, then a watermark 60: the full window [5, 7] is stamped 7; the
    window [8] closed by the end of the stream is stamped 60, because watermark 60 has
    passed. A following event-time window sees those times."""
    def watermark(e, ts):
        return 60 if ts == 8 else None
    got = run(lambda env: env.from_iterable([5, 7, 8]).add_timestamps(lambda x: x, watermark)
              .window_all(CountWindow.tumbling(2)).map(list)
              .window_all(EventTimeWindow.tumbling(50)).map(list))
    assert got == [[[5, 7]], [[8]]]


def test_a_count_window_join_counts_the_records_of_both_sides():
    """As in Noir, a window join windows the merged stream: with tumbling windows of two
    records and one record per key on each side, every key's window pairs its two records."""
    def build(env):
        left = env.from_iterable([(k, "L") for k in range(6)]).group_by(lambda e: e[0])
        right = env.from_iterable([(k, "R") for k in range(6)]).group_by(lambda e: e[0])
        return left.window(CountWindow.tumbling(2)).join(right.window(CountWindow.tumbling(2)))
    for parallelism in (1, 3):
        assert sorted(run(build, parallelism)) == [(k, ((k, "L"), (k, "R"))) for k in range(6)]
