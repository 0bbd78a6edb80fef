"""Each operator family on both engines: the segflow engine in process and Spark, same job,
same input, the same multiset of records.

Inputs are chosen so that the engine's own result does not depend on thread timing: a
record order that matters (count windows, non-associative folds, rich maps, zip, late
records) comes from a single sender, as from ``from_iterable``, or from a parallel source
whose replicas Spark reproduces as its partitions, never through a round-robin edge (the
engine deals out whole batches, whose bounds depend on timing).
"""
from __future__ import annotations

import pytest

from segflow import CountWindow, EventTimeWindow, WatermarkStrategy
from segflow.datagen.nexmark import mix

WORDS = ["a b c", "b c", "", "c d e a", "a"] * 40


def numbers(env, n=300):
    """A parallel source: replica r of p makes the records r, r + p, ..."""
    return env.generate(lambda i: mix(i, 1) % 1000, count=n)


def ordered(env, n=300):
    """One sender: every later block sees the records in this order."""
    return env.from_iterable([mix(i, 2) % 1000 for i in range(n)])


def counter():
    seen = [0]

    def number(*record):
        seen[0] += 1
        return (record, seen[0])
    return number


def stamped(env, n=300, late_every=0):
    """Records with event times 0, 3, 6, ... (one sender); a watermark after every 10th
    record, ``late_every``-th records stamped 40 back in time (late if a watermark passed)."""
    def ts(i):
        return 3 * i - (40 if late_every and i % late_every == 0 else 0)
    return (env.from_iterable(list(range(n)))
            .add_timestamps(ts, lambda i, t: t - 5 if i % 10 == 9 else None))


PIPELINES = {
    # ---------------------------------------------------------------- stateless
    "map_filter_flat_map": lambda env: (numbers(env).map(lambda x: x * 3).filter(lambda x: x % 2)
                                        .flat_map(lambda x: [x, -x]).collect()),
    "filter_map_flatten": lambda env: (numbers(env).filter_map(lambda x: [x] * (x % 3) if x % 5 else None)
                                       .flatten().inspect(lambda x: None).collect()),
    "read_words": lambda env: env.from_iterable(WORDS).flat_map(str.split).map(str.upper).collect(),
    "keyed_stateless": lambda env: (numbers(env).key_by(lambda x: x % 7).map(lambda k, v: v + k)
                                    .filter(lambda k, v: v % 3).flat_map(lambda k, v: [v, k])
                                    .filter_map(lambda k, v: v if v % 4 else None).unkey().collect()),
    "drop_key_shuffle": lambda env: (numbers(env).group_by(lambda x: x % 5).drop_key().shuffle()
                                     .map(lambda x: x + 1).collect()),
    "max_parallelism": lambda env: numbers(env).max_parallelism(1).map(lambda x: x // 2).collect(),
    # ------------------------------------------------------------- rich (stateful)
    "rich_map_per_replica": lambda env: numbers(env).rich_map(counter).collect(),
    "rich_per_key": lambda env: (ordered(env).group_by(lambda x: x % 6).rich_flat_map(counter)
                                 .rich_filter_map(counter).collect()),
    # ------------------------------------------------------------------- folds
    "fold_reduce": lambda env: (ordered(env).fold([], lambda acc, x: acc + [x])
                                .concat(ordered(env).reduce(lambda x, y: x * 31 + y)).collect()),
    "assoc_folds": lambda env: (lambda a, b: a.fold_assoc(0, lambda acc, x: acc + x, lambda p, q: p + q).concat(
        b.reduce_assoc(max)))(*numbers(env).split(2)).collect(),
    "keyed_fold_in_order": lambda env: (ordered(env).group_by(lambda x: x % 9)
                                        .fold((), lambda acc, x: acc + (x,)).collect()),
    "keyed_reduce": lambda env: numbers(env).group_by(lambda x: x % 9).reduce(lambda a, b: a + b).collect(),
    "group_by_count_sum_avg": lambda env: (lambda a, b, c, d: a.group_by_count(lambda x: x % 11).concat(
        b.group_by_sum(lambda x: x % 4, lambda x: x * 2)).concat(c.group_by_avg(lambda x: x % 3)).concat(
        d.flat_map(lambda x: str(x)).group_by_count()))(*numbers(env).split(4)).collect(),
    "group_by_fold_reduce": lambda env: (lambda a, b: a.group_by_fold(
        lambda x: x % 8, 0, lambda acc, x: acc + x, lambda p, q: p + q).concat(
        b.group_by_reduce(lambda x: x % 8, min)))(*numbers(env).split(2)).collect(),
    "min_max_element": lambda env: (lambda a, b: a.group_by_min_element(lambda x: x % 5, lambda x: -x).concat(
        b.group_by_max_element(lambda x: x % 5)))(*numbers(env).split(2)).collect(),
    # ----------------------------------------------------------------- windows
    "count_windows_keyed": lambda env: (ordered(env).group_by(lambda x: x % 7)
                                        .window(CountWindow.sliding(5, 2)).map(list).collect()),
    "count_windows_all": lambda env: ordered(env).window_all(CountWindow.tumbling(7)).sum().collect(),
    "count_windows_step_over_size": lambda env: (ordered(env).group_by(lambda x: x % 3)
                                                 .window(CountWindow.sliding(3, 5)).map(tuple).collect()),
    "count_windows_stamped": lambda env: (stamped(env).key_by(lambda i: i % 4)
                                          .window(CountWindow.tumbling(6)).first()
                                          .window(EventTimeWindow.tumbling(50)).map(sorted).collect()),
    "tumbling_late_records": lambda env: (stamped(env, late_every=7).key_by(lambda i: i % 3)
                                          .window(EventTimeWindow.tumbling(30)).map(list).collect()),
    "sliding_all": lambda env: (stamped(env, late_every=11).window_all(EventTimeWindow.sliding(40, 15))
                                .fold(0, lambda acc, x: acc * 7 + x).collect()),
    "sessions": lambda env: (env.from_iterable([mix(i, 3) % 900 for i in range(200)])
                             .add_timestamps(lambda x: x, lambda x, t: t - 100 if x % 13 == 0 else None)
                             .key_by(lambda x: x % 4).window(EventTimeWindow.session(12)).map(list).collect()),
    "window_aggregates": lambda env: (lambda a, b, c: a.window_all(EventTimeWindow.tumbling(60)).count().concat(
        b.group_by(lambda i: i % 2).window(EventTimeWindow.tumbling(60)).reduce(max).drop_key()).concat(
        c.window_all(EventTimeWindow.sliding(60, 20)).min()).concat(
        stamped(env).window_all(CountWindow.tumbling(9)).max()))(*stamped(env).split(3)).collect(),
    "window_join": lambda env: (lambda a, b: a.key_by(lambda i: i % 3).window(EventTimeWindow.tumbling(45)).join(
        b.filter(lambda i: i % 4 == 0).key_by(lambda i: i % 3).window(EventTimeWindow.tumbling(45))))(
        *stamped(env).split(2)).collect(),
    "window_metadata": lambda env: (lambda a, b, d: a.group_by(lambda i: i % 3).window(EventTimeWindow.tumbling(50))
        .process(lambda w, v: (w.start, w.end, w.key, sum(v))).drop_key().concat(
        b.window_all(EventTimeWindow.session(7)).with_window().count().map(tuple)).concat(
        stamped(env).window_all(CountWindow.tumbling(9)).process(lambda w, v: (w.start, w.end, max(v)))).concat(
        d.filter(lambda i: i % 2 == 0).group_by(lambda i: i % 3).window(EventTimeWindow.tumbling(45)).cogroup(
            stamped(env).filter(lambda i: i % 5 == 0).group_by(lambda i: i % 3).window(EventTimeWindow.tumbling(45)),
            lambda w, lft, r: (w.start, w.key, sum(lft), sum(r))).drop_key()))(*stamped(env).split(3)).collect(),
    "watermark_strategy": lambda env: (env.from_iterable([i // 10 * 10 + 9 - i % 10 for i in range(300)])
                                       .add_timestamps(lambda t: t, WatermarkStrategy.bounded_out_of_orderness(10)
                                                       .every(20))
                                       .window_all(EventTimeWindow.sliding(60, 30)).process(
                                           lambda w, v: (w.start, len(v), sum(v))).collect()),
    "parallel_watermarks": lambda env: (env.generate(lambda i: i, count=600)   # each replica's times rise
                                        .add_timestamps(lambda x: x, lambda x, t: t - 2 if x % 5 == 0 else None)
                                        .group_by(lambda x: x % 5).window(EventTimeWindow.tumbling(100))
                                        .map(sorted).collect()),
    # ------------------------------------------------------------------- joins
    "hash_joins": lambda env: (lambda a, b, c, d, e, f: a.join(b, lambda x: x % 13, lambda y: y % 17).unkey().concat(
        c.left_join(d, lambda x: x % 13, lambda y: y % 17).unkey()).concat(
        e.outer_join(f, lambda x: x % 29, lambda y: y % 31).unkey()))(
        *numbers(env, 60).split(3), *ordered(env, 40).split(3)).collect(),
    "broadcast_and_sort_merge": lambda env: (lambda a, b, c, d: a.join_with(b, lambda x: x % 13, lambda y: y % 17)
                                             .ship_broadcast_right().inner().concat(
        c.join_with(d, lambda x: x % 13, lambda y: y % 17).local_sort_merge().outer()))(
        *numbers(env, 60).split(2), *ordered(env, 40).split(2)).collect(),
    "interval_joins": lambda env: (lambda a, b, c, d: a.interval_join(b.filter(lambda i: i % 5 == 0), 4, 7).concat(
        c.key_by(lambda i: i % 2).interval_join(d.key_by(lambda i: i % 2), 0, 9).unkey()))(
        *stamped(env, 120).split(4)).collect(),
    # ------------------------------------------------------------------ shapes
    "split_concat": lambda env: (lambda a, b: a.map(lambda x: x * 2).concat(b.filter(lambda x: x % 3)))(
        *numbers(env).split(2)).collect(),
    "keyed_concat": lambda env: (lambda a, b: a.concat(b).reduce(lambda p, q: p + q))(
        numbers(env).group_by(lambda x: x % 4), ordered(env).group_by(lambda x: x % 4)).collect(),
    "zip": lambda env: ordered(env, 30).zip(env.from_iterable("abcdefghijklmnopq")).collect(),
    # -------------------------------------------------------------- iterations
    "iterate": lambda env: env.from_iterable(list(range(40))).iterate(
        4, 0, lambda s, state: s.map(lambda x: x + state.get()).filter(lambda x: x % 7).group_by(
            lambda x: x % 3).reduce(lambda a, b: a + b).drop_key(),
        local_fold=lambda d, x: d + 1, global_fold=lambda s, d: s + d, delta_init=0)[1].collect(),
    "iterate_state": lambda env: env.from_iterable(list(range(40))).iterate(
        8, {"total": 0}, lambda s, state: s.map(lambda x: x // 2).filter(lambda x: x > 0),
        local_fold=lambda d, x: d + x, global_fold=lambda s, d: {"total": s["total"] + d},
        loop_condition=lambda s: s["total"] < 600, delta_init=0)[0].collect(),
    "replay_with_side_input": lambda env: (lambda side: numbers(env, 100).replay(
        3, [0], lambda s, state: s.map(lambda x: (x % 10, x * (state.get()[-1] % 3 + 1))).join(
            side, lambda p: p[0], lambda q: q % 10).drop_key().map(lambda pq: pq[0][1] + pq[1]),
        local_fold=lambda d, x: d + x, global_fold=lambda s, d: sorted(s + [d]), delta_init=0))(
        env.from_iterable(list(range(20)))).collect(),
    # ----------------------------------------------------------------- sources
    "from_parallel": lambda env: env.from_parallel(lambda i, n: range(i, 50, n)).map(lambda x: x * x).collect(),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_both_engines_agree(name, same_on_both):
    """Three replicas: more partitions than Spark's two cores, uneven hash partitions,
    coalesces into one, round-robin fan-out from one (the property test varies it)."""
    same_on_both(PIPELINES[name], 3)
