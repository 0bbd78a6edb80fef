"""Rescaling the local stage of a two-stage aggregate (a snapshot restored at another
parallelism). Its input is not partitioned by key, so every old replica may hold a partial
result for any key. However the records fall on the old and the new replicas, the partials
the new replicas emit at the end must combine to the aggregate of all records (a rule
that kept one old replica's partial per key lost the others': the final counts were short)."""
import operator

from hypothesis import given, settings
from hypothesis import strategies as st

from segflow.runtime.elements import Batch
from segflow.runtime.operators import aggregate
from segflow.runtime.rescale import RescaleError


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
    try:
        fold.rescale([fold.snapshot(), fold.snapshot()], 0, 3)
    except RescaleError as exc:
        assert "fold(add) keeps state that cannot be redistributed" in str(exc)
    else:
        raise AssertionError("a fold without combine was rescaled")
