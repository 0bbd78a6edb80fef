"""Registry entries of the runtime operators that transform, aggregate, window, join and
iterate (connectors are in connector_cases)."""
from __future__ import annotations

import operator as op

from hypothesis import strategies as st

from segflow.runtime.elements import END, IterationUpdate
from segflow.runtime.operators import aggregate, columnar, iteration, joins, stateless, time, windows
from segflow.runtime.operators.sinks import CollectSink, ForEachSink

from .case import RestoreCase
from .streams import arrow_batches, event_lists, keyed, small_ints

plain = event_lists()
by_key = event_lists(keyed())
stamped = event_lists(stamps="always")
stamped_by_key = event_lists(keyed(), stamps="always")
two_sided = event_lists(keyed(), inputs=2)
two_sided_ordered_keys = event_lists(st.tuples(st.sampled_from("abcd"), small_ints), inputs=2)
two_sided_stamped = event_lists(inputs=2, stamps="always")
two_sided_stamped_by_key = event_lists(keyed(), inputs=2, stamps="always")
tagged_by_key = event_lists(keyed(st.tuples(st.integers(0, 1), small_ints)), stamps="always")
tagged = event_lists(st.tuples(st.integers(0, 1), small_ints), stamps="always")
record_batches = event_lists(arrow_batches(), stamps="never")
COLUMNAR_AGGREGATION = columnar.Aggregation.of("k", {"n": ("v", "count"), "total": ("v", "sum"),
                                                     "low": ("v", "min"), "mean": ("v", "mean")})


def doubled(x: int) -> int:
    return 2 * x


def tagged_double(key, value):
    return (key, value * 2)


def even(*record) -> bool:
    return record[-1] % 2 == 0


def repeated(*record) -> list:
    return [record[-1]] * (abs(record[-1]) % 3)


def half_if_even(*record):
    return record[-1] // 2 if record[-1] % 2 == 0 else None


def modulo_three(x: int) -> int:
    return x % 3


def appended(acc: list, x) -> list:
    acc.append(x)
    return acc


def event_time(x: int) -> int:
    return abs(x) * 3


def every_fourth_watermark(x: int, ts: int):
    return ts - 2 if x % 4 == 0 else None


def ignore(x) -> None:
    return None


def below_fifty(state: int) -> bool:
    return state < 50


class RunningTotal:
    """A rich function's own state (per replica or per key): the sum of the values it saw."""

    def __init__(self) -> None:
        self.total = 0

    def __call__(self, *record):
        self.total += record[-1]
        return self.total


class EvenTotals(RunningTotal):
    def __call__(self, *record):
        total = super().__call__(*record)
        return total if total % 2 == 0 else None


class RepeatedTotals(RunningTotal):
    def __call__(self, *record):
        total = super().__call__(*record)
        return [total] * (abs(total) % 3)


def iteration_start_events(replay: bool) -> st.SearchStrategy:
    """Loop input (0), leader decisions (1) and feedback (2), in any order."""
    decision = st.builds(IterationUpdate, st.just(0), st.integers(1, 4), small_ints, st.booleans())
    event = st.one_of(
        st.builds(lambda items: ("batch", 0, items, None), st.lists(small_ints, max_size=4)),
        st.builds(lambda items: ("batch", 2, items, None), st.lists(small_ints, max_size=4)),
        st.sampled_from([("control", 0, END), ("control", 2, END)]),
        st.builds(lambda update: ("control", 1, update), decision))
    return st.lists(event, max_size=12)


STATELESS = [
    RestoreCase("map", stateless.Map, lambda s: stateless.Map(doubled, False), plain),
    RestoreCase("map[keyed]", stateless.Map, lambda s: stateless.Map(tagged_double, True), by_key),
    RestoreCase("filter", stateless.Filter, lambda s: stateless.Filter(even, False), plain),
    RestoreCase("filter[keyed]", stateless.Filter, lambda s: stateless.Filter(even, True), by_key),
    RestoreCase("flat_map", stateless.FlatMap, lambda s: stateless.FlatMap(repeated, False), plain),
    RestoreCase("flat_map[keyed]", stateless.FlatMap, lambda s: stateless.FlatMap(repeated, True), by_key),
    RestoreCase("flatten", stateless.FlatMap, lambda s: stateless.FlatMap(stateless.records_themselves, False),
                event_lists(st.lists(small_ints, max_size=3))),
    RestoreCase("filter_map", stateless.FilterMap, lambda s: stateless.FilterMap(half_if_even, False), plain),
    RestoreCase("filter_map[keyed]", stateless.FilterMap, lambda s: stateless.FilterMap(half_if_even, True),
                by_key),
    RestoreCase("key_by", stateless.KeyBy, lambda s: stateless.KeyBy(modulo_three), plain),
    RestoreCase("drop_key", stateless.DropKey, lambda s: stateless.DropKey(), by_key),
    RestoreCase("inspect", stateless.Inspect, lambda s: stateless.Inspect(ignore, False), plain),
    RestoreCase("map_values", aggregate.MapValues, lambda s: aggregate.MapValues(doubled), by_key),
    RestoreCase("add_timestamps", time.AddTimestamps, lambda s: time.AddTimestamps(event_time, None), plain),
    RestoreCase("add_timestamps[watermarks]", time.AddTimestamps,
                lambda s: time.AddTimestamps(event_time, every_fourth_watermark), plain),
    RestoreCase("add_timestamps[strategy]", time.AddTimestamps,
                lambda s: time.AddTimestamps(event_time, time.WatermarkStrategy.bounded_out_of_orderness(3).every(2)),
                plain),
    RestoreCase("tag_inputs", windows.TagInputs, lambda s: windows.TagInputs(False), two_sided_stamped),
    RestoreCase("tag_inputs[keyed]", windows.TagInputs, lambda s: windows.TagInputs(True), two_sided),
    RestoreCase("concat", joins.Concat, lambda s: joins.Concat(), two_sided),
    RestoreCase("for_each", ForEachSink, lambda s: ForEachSink(ignore), plain),
]

RICH = [RestoreCase(f"rich_{mode}[{'keyed' if is_keyed else 'plain'}]", stateless.Rich,
                    lambda s, f=factory, m=mode, k=is_keyed: stateless.Rich(f, m, k), by_key if is_keyed else plain)
        for mode, factory in (("map", RunningTotal), ("filter_map", EvenTotals), ("flat_map", RepeatedTotals))
        for is_keyed in (False, True)]

AGGREGATES = [
    RestoreCase("fold", aggregate.Fold, lambda s: aggregate.Fold(op.add, 100), plain),
    RestoreCase("fold[mutable init]", aggregate.Fold, lambda s: aggregate.Fold(appended, []), plain),
    RestoreCase("reduce", aggregate.Fold, lambda s: aggregate.Fold(op.add), plain),
    RestoreCase("group_by_fold.combine", aggregate.KeyedFold, lambda s: aggregate.KeyedFold(appended, []), by_key),
    RestoreCase("group_by_reduce.combine", aggregate.KeyedFold, lambda s: aggregate.KeyedFold(op.add), by_key),
    RestoreCase("group_by_fold.local", aggregate.LocalKeyedFold,
                lambda s: aggregate.LocalKeyedFold(modulo_three, appended, op.add, []), plain),
    RestoreCase("group_by_reduce.local", aggregate.LocalKeyedFold,
                lambda s: aggregate.LocalKeyedFold(modulo_three, op.add, op.add), plain),
    RestoreCase("group_by_count.local", aggregate.LocalCount, lambda s: aggregate.LocalCount(modulo_three), plain),
    RestoreCase("count.local", aggregate.LocalCount, lambda s: aggregate.LocalCount(None), plain),
    RestoreCase("keyed_sum", aggregate.KeyedSum, lambda s: aggregate.KeyedSum(), by_key),
    RestoreCase("group_by_aggregate.local", columnar.LocalColumnarAggregate,
                lambda s: columnar.LocalColumnarAggregate(COLUMNAR_AGGREGATION), record_batches),
]

WINDOWS = [
    RestoreCase("count_window[tumbling]", windows.CountWindows,
                lambda s: windows.CountWindows(3, 3, sum, False), plain),
    RestoreCase("count_window[sliding, keyed]", windows.CountWindows,
                lambda s: windows.CountWindows(3, 1, sum, True), by_key),
    RestoreCase("time_window[tumbling]", windows.TimeWindows, lambda s: windows.TimeWindows(5, 5, sum, False),
                stamped),
    RestoreCase("time_window[sliding, keyed]", windows.TimeWindows,
                lambda s: windows.TimeWindows(6, 2, sum, True), stamped_by_key),
    RestoreCase("session_window", windows.SessionWindows, lambda s: windows.SessionWindows(3, sum, False),
                stamped),
    RestoreCase("session_window[keyed]", windows.SessionWindows, lambda s: windows.SessionWindows(3, sum, True),
                stamped_by_key),
    RestoreCase("processing_time_window", windows.ProcessingTime,
                lambda s: windows.ProcessingTime(windows.TimeWindows(25, 25, sum, False), s.clock),
                event_lists(stamps="never", ticks=True)),
    RestoreCase("processing_time_window[keyed]", windows.ProcessingTime,
                lambda s: windows.ProcessingTime(windows.TimeWindows(30, 10, sum, True), s.clock),
                event_lists(keyed(), stamps="never", ticks=True)),
    RestoreCase("window_join", windows.TimeWindows,
                lambda s: windows.TimeWindows(5, 5, windows.window_join_pairs, False, flat=True), tagged),
    RestoreCase("window_join[keyed]", windows.CountWindows,
                lambda s: windows.CountWindows(4, 4, windows.window_join_pairs, True, flat=True), tagged_by_key),
]

JOINS = [
    *[RestoreCase(f"hash_join[{kind}]", joins.HashJoin, lambda s, k=kind: joins.HashJoin(k), two_sided)
      for kind in (joins.INNER, joins.LEFT, joins.OUTER)],
    *[RestoreCase(f"sort_merge_join[{kind}]", joins.SortMergeJoin, lambda s, k=kind: joins.SortMergeJoin(k),
                  two_sided_ordered_keys)
      for kind in (joins.INNER, joins.LEFT, joins.OUTER)],
    RestoreCase("interval_join", joins.IntervalJoin, lambda s: joins.IntervalJoin(2, 3, False), two_sided_stamped),
    RestoreCase("interval_join[keyed]", joins.IntervalJoin, lambda s: joins.IntervalJoin(1, 4, True),
                two_sided_stamped_by_key),
    RestoreCase("zip", joins.Zip, lambda s: joins.Zip(), event_lists(inputs=2)),
]

ITERATIONS = [
    *[RestoreCase(f"iteration_start[{'replay' if replay else 'feedback'}]", iteration.IterationStart,
                  lambda s, r=replay: iteration.IterationStart(0, [1], r), iteration_start_events(replay))
      for replay in (True, False)],
    RestoreCase("iteration_end", iteration.IterationEnd, lambda s: iteration.IterationEnd(op.add, 0, False),
                event_lists(stamps="never", rounds=3)),
    RestoreCase("iteration_end[feedback]", iteration.IterationEnd,
                lambda s: iteration.IterationEnd(appended, [], True), event_lists(stamps="never", rounds=3)),
    RestoreCase("iteration_leader", iteration.IterationLeader,
                lambda s: iteration.IterationLeader(0, 3, 1, op.add, below_fifty),
                event_lists(stamps="never", rounds=4)),
]

COLLECT = [RestoreCase("collect", CollectSink, lambda s: CollectSink(0), event_lists(rounds=1))]

OPERATOR_CASES = STATELESS + RICH + AGGREGATES + WINDOWS + JOINS + ITERATIONS + COLLECT
