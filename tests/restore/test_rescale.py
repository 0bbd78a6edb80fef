"""Rescaling operators' state (a snapshot restored at another parallelism), checked
against what the operator computes over all records, however they fall on the old and
the new replicas.

The local stage of a two-stage aggregate: its input is not partitioned by key, so every
old replica may hold a partial result for any key; the partials the new replicas emit
must combine to the aggregate of all records (a rule that kept one old replica's partial
per key lost the others': the final counts were short). Joins shipped by key: every
match of the records before and after the rescale, none twice."""
import operator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from segflow.runtime.elements import Batch
from segflow.runtime.operators import aggregate, joins, stateless
from segflow.runtime.rescale import RescaleError, owned


def modulo_five(x):
    return x % 5


def pick_larger(a, b):
    return b if b > a else a


# name: (the local stage, the final stage's combine of partials, the whole aggregate per key)
KEYED = {
    "group_by_count": (lambda: aggregate.LocalCount(modulo_five), operator.add, len),
    "group_by_sum": (lambda: aggregate.LocalKeyedFold(modulo_five, operator.add, operator.add, 0), operator.add, sum),
    "group_by_reduce(max)": (lambda: aggregate.LocalKeyedFold(modulo_five, pick_larger, pick_larger), pick_larger,
                             max),
    "group_by_fold(sorted list)": (
        lambda: aggregate.LocalKeyedFold(modulo_five, lambda acc, x: sorted(acc + [x]),
                                         lambda a, b: sorted(a + b), []),
        lambda a, b: sorted(a + b), sorted),
}
GLOBAL = {
    "reduce_assoc.local": (lambda: aggregate.Fold(operator.add, combine=operator.add), operator.add, sum),
    "fold_assoc.local": (lambda: aggregate.Fold(lambda acc, x: acc + [x], [], lambda a, b: a + b),
                         lambda a, b: sorted(a + b), sorted),
}

records = st.lists(st.integers(-50, 50), max_size=60)
parts = st.lists(records, min_size=1, max_size=4)


def rescaled_partials(make, before: list[list], after: list[list]) -> list:
    """Feed ``before[i]`` to old replica i, rescale to ``len(after)`` replicas, feed
    ``after[j]`` to new replica j; every partial the new replicas emit at the end."""
    old_states = []
    for items in before:
        op = make()
        op.process(Batch(list(items)))
        old_states.append(op.snapshot())
    emitted = []
    for index, items in enumerate(after):
        op = make()
        op.restore(op.rescale(old_states, index, len(after)))
        op.process(Batch(list(items)))
        out = op.on_end()
        emitted += [] if out is None else out.items
    return emitted


@settings(max_examples=60, deadline=None, database=None)
@given(before=parts, after=parts, case=st.sampled_from(sorted(KEYED)))
def test_keyed_partials_combine_to_the_aggregate_of_every_record(before, after, case):
    make, combine, whole = KEYED[case]
    final: dict = {}
    for key, partial in rescaled_partials(make, before, after):
        final[key] = combine(final[key], partial) if key in final else partial
    everything = [x for part in before + after for x in part]
    by_key: dict = {}
    for x in everything:
        by_key.setdefault(modulo_five(x), []).append(x)
    assert final == {key: whole(values) for key, values in by_key.items()}


@settings(max_examples=60, deadline=None, database=None)
@given(before=parts, after=parts, case=st.sampled_from(sorted(GLOBAL)))
def test_global_partials_combine_to_the_aggregate_of_every_record(before, after, case):
    make, combine, whole = GLOBAL[case]
    partials = rescaled_partials(make, before, after)
    everything = [x for part in before + after for x in part]
    if not everything:
        assert all(p == [] for p in partials)      # only fold_assoc emits (its init) for no records
        return
    total = partials[0]
    for partial in partials[1:]:
        total = combine(total, partial)
    assert (sorted(total) if isinstance(total, list) else total) == whole(everything)


def test_a_whole_stream_fold_still_refuses_to_rescale():
    """A fold without a combine runs on one replica: its state has no rule to split."""
    fold = aggregate.Fold(operator.add)
    fold.name = "fold(add)"
    with pytest.raises(RescaleError, match=r"fold\(add\) keeps state that cannot be redistributed"):
        fold.rescale([fold.snapshot(), fold.snapshot()], 0, 3)


# -------------------------------------------------------------------------------- joins
sides = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 6), st.integers(0, 99)), max_size=50)


def partitioned_run(make, replicas: int, records: list, states: list[dict] | None = None) -> tuple[list, list]:
    """``records`` (side, key, value) sent by key to ``replicas`` replicas of ``make()``
    (restored from the rescaled ``states`` if given); their output and snapshots."""
    ops = [make() for _ in range(replicas)]
    out = []
    for index, op in enumerate(ops):
        if states is not None:
            op.restore(op.rescale(states, index, replicas))
        for side, key, value in records:
            if owned(key, index, replicas):
                stamps = [value] if isinstance(op, joins.IntervalJoin) else None
                emitted = op.process_input(side, Batch([(key, value)], stamps))
                out += [] if emitted is None else emitted.items
    return out, ops


def joined(kind: str, records: list) -> list:
    lefts = [(k, v) for side, k, v in records if side == 0]
    rights = [(k, v) for side, k, v in records if side == 1]
    pairs = [(k, (lft, r)) for k, lft in lefts for k2, r in rights if k == k2]
    if kind in (joins.LEFT, joins.OUTER):
        pairs += [(k, (lft, None)) for k, lft in lefts if all(k2 != k for k2, _ in rights)]
    if kind == joins.OUTER:
        pairs += [(k, (None, r)) for k, r in rights if all(k2 != k for k2, _ in lefts)]
    return sorted(pairs)


@settings(max_examples=60, deadline=None, database=None)
@given(before=sides, after=sides, old=st.integers(1, 4), new=st.integers(1, 4),
       local=st.sampled_from([joins.HashJoin, joins.SortMergeJoin]),
       kind=st.sampled_from([joins.INNER, joins.LEFT, joins.OUTER]))
def test_a_join_shipped_by_key_rescales_to_every_match_once(before, after, old, new, local, kind):
    make = lambda: local(kind, partitioned=True)    # noqa: E731 - the factory of every replica
    first, ops = partitioned_run(make, old, before)
    second, ops = partitioned_run(make, new, after, [op.snapshot() for op in ops])
    ends = [op.on_end() for op in ops]
    out = first + second + [pair for end in ends if end is not None for pair in end.items]
    assert sorted(out) == joined(kind, before + after)


@settings(max_examples=60, deadline=None, database=None)
@given(before=sides, after=sides, old=st.integers(1, 4), new=st.integers(1, 4))
def test_a_keyed_interval_join_rescales_to_every_pair_once(before, after, old, new):
    make = lambda: joins.IntervalJoin(3, 5, keyed=True)     # noqa: E731 - the factory of every replica
    first, ops = partitioned_run(make, old, before)
    second, _ = partitioned_run(make, new, after, [op.snapshot() for op in ops])
    records = before + after
    want = [(k, (lft, r)) for side, k, lft in records if side == 0 for side2, k2, r in records
            if side2 == 1 and k2 == k and lft - 3 <= r <= lft + 5]
    assert sorted(first + second) == sorted(want)


def running_total():
    """A rich_map function: the total of its key's values so far."""
    total = 0

    def add(key, value):
        nonlocal total
        total += value
        return total
    return add


@settings(max_examples=60, deadline=None, database=None)
@given(before=sides, after=sides, old=st.integers(1, 4), new=st.integers(1, 4))
def test_a_keyed_rich_map_rescales_each_keys_function_with_its_state(before, after, old, new):
    make = lambda: stateless.Rich(running_total, "map", keyed=True)     # noqa: E731 - every replica's factory
    records = [(0, key, value) for _, key, value in before]     # one input
    first, ops = partitioned_run(make, old, records)
    second, _ = partitioned_run(make, new, [(0, key, value) for _, key, value in after],
                                [op.snapshot() for op in ops])
    totals: dict = {}
    want = []
    for _, key, value in before + after:
        totals[key] = totals.get(key, 0) + value
        want.append((key, totals[key]))
    assert sorted(first + second) == sorted(want)


def test_a_broadcast_join_still_refuses_to_rescale():
    """Its left side is not partitioned and every replica holds the whole right side."""
    join = joins.HashJoin(joins.INNER, partitioned=False)
    join.name = "inner_join(broadcast_right, hash)"
    with pytest.raises(RescaleError, match=r"inner_join\(broadcast_right, hash\) keeps state that cannot be "
                                           r"redistributed"):
        join.rescale([join.snapshot()], 0, 2)
