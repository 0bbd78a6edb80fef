"""Folds and reductions over the whole stream or per key, their associative variants, and
the group_by_* family with local pre-aggregation, against plain Python."""
import collections

import pytest
from support.pipelines import bag, execute, groups, run

WORDS = [f"w{(i * 7) % 11}" for i in range(300)] + ["solo"]
VALUES = [(w, (i * 37) % 101 - 20) for i, w in enumerate(WORDS)]


def spread(env, data):
    """``data`` read by every replica, a slice each."""
    return env.from_parallel(lambda i, n: data[i::n])


def test_fold_and_reduce_over_the_whole_stream(parallelism):
    data = list(range(1, 101))
    assert run(lambda env: spread(env, data).fold(0, lambda a, x: a + x), parallelism) == [5050]
    assert run(lambda env: spread(env, data).reduce(max), parallelism) == [100]
    # a fold sees the records of one replica in order: a non-commutative fold is exact
    assert run(lambda env: env.from_iterable(data).fold("", lambda a, x: a + str(x % 10)), parallelism) == \
        ["".join(str(x % 10) for x in data)]


def test_fold_and_reduce_of_empty_and_single_streams(parallelism):
    assert run(lambda env: env.from_iterable([]).reduce(max), parallelism) == []
    assert run(lambda env: env.from_iterable([]).fold(7, max), parallelism) == [7]
    assert run(lambda env: env.from_iterable([[4]]).reduce(lambda a, b: 1 / 0), parallelism) == [[4]]
    assert run(lambda env: env.from_iterable([]).group_by(str).fold(0, max), parallelism) == []


def test_a_mutable_initial_accumulator_is_never_shared(parallelism):
    """Folds that mutate their accumulator get a fresh copy of ``init`` per key and per
    replica (and per run)."""
    def append(acc, x):
        acc.append(x)
        return acc
    for _ in range(2):
        got = run(lambda env: env.from_iterable(range(12)).group_by(lambda x: x % 3)
                  .fold([], lambda acc, x: append(acc, x)), parallelism)
        assert sorted(got) == [(k, list(range(k, 12, 3))) for k in range(3)]
    parts = run(lambda env: spread(env, list(range(9))).fold_assoc([], append, append), parallelism)[0]
    assert sorted(x for part in parts for x in part) == list(range(9)) and len(parts) == parallelism
    got = run(lambda env: spread(env, list(range(12))).group_by_fold(lambda x: x % 2, [], append,
                                                                      lambda acc, part: acc + part), parallelism)
    assert sorted((k, sorted(v)) for k, v in got) == [(0, list(range(0, 12, 2))), (1, list(range(1, 12, 2)))]


def test_associative_fold_and_reduce(parallelism):
    data = list(range(1, 201))
    assert run(lambda env: spread(env, data).fold_assoc(0, lambda a, x: a + x, lambda a, b: a + b), parallelism) == \
        [sum(data)]
    assert run(lambda env: spread(env, data).reduce_assoc(min), parallelism) == [1]
    assert run(lambda env: spread(env, []).reduce_assoc(min), parallelism) == []
    assert run(lambda env: spread(env, []).fold_assoc(0, lambda a, x: a + x, lambda a, b: a + b), parallelism) == [0]
    assert run(lambda env: spread(env, [42]).reduce_assoc(min), parallelism) == [42]


def test_keyed_fold_and_reduce(parallelism):
    pairs = [(w, i) for i, w in enumerate(WORDS)]
    expected = groups(pairs)
    folded = run(lambda env: env.from_iterable(pairs).group_by(lambda p: p[0])
                 .fold((), lambda acc, p: acc + (p[1],)), parallelism)
    assert dict(folded) == {k: tuple(v) for k, v in expected.items()}     # one sender: in order per key
    reduced = run(lambda env: spread(env, pairs).group_by(lambda p: p[0]).reduce(max), parallelism)
    assert sorted(reduced) == sorted((k, (k, max(v))) for k, v in expected.items())


def family(name):
    """``(apply to a stream, {key: expected result})`` for each group_by_* operator."""
    by_word = groups(VALUES)
    key, value = (lambda p: p[0]), (lambda p: p[1])
    return {
        "count": (lambda s: s.group_by_count(key), {k: len(v) for k, v in by_word.items()}),
        "sum": (lambda s: s.group_by_sum(key, value), {k: sum(v) for k, v in by_word.items()}),
        "avg": (lambda s: s.group_by_avg(key, value), {k: sum(v) / len(v) for k, v in by_word.items()}),
        "min_element": (lambda s: s.group_by_min_element(key, value), {k: (k, min(v)) for k, v in by_word.items()}),
        "max_element": (lambda s: s.group_by_max_element(key, value), {k: (k, max(v)) for k, v in by_word.items()}),
        "fold": (lambda s: s.group_by_fold(key, 0, lambda a, p: a + p[1], lambda a, b: a + b),
                 {k: sum(v) for k, v in by_word.items()}),
        "reduce": (lambda s: s.group_by_reduce(key, lambda a, b: a if a[1] >= b[1] else b),
                   {k: (k, max(v)) for k, v in by_word.items()}),
    }[name]


@pytest.mark.parametrize("name", ["count", "sum", "avg", "min_element", "max_element", "fold", "reduce"])
def test_group_by_family(parallelism, name):
    """Exact: the mean is the integer sum over the count, whatever the partial sums were."""
    apply, expected = family(name)
    got = run(lambda env: apply(spread(env, VALUES)), parallelism)
    assert len(got) == len(expected) and dict(got) == expected


def test_group_by_family_on_empty_single_and_one_key_inputs(parallelism):
    key = lambda x: "all"  # noqa: E731
    assert run(lambda env: spread(env, []).group_by_count(), parallelism) == []
    assert run(lambda env: spread(env, []).group_by_avg(key), parallelism) == []
    assert run(lambda env: spread(env, [5]).group_by_avg(key), parallelism) == [("all", 5.0)]
    assert run(lambda env: spread(env, [5]).group_by_reduce(key, lambda a, b: 1 / 0), parallelism) == [("all", 5)]
    assert run(lambda env: spread(env, list(range(500))).group_by_sum(key), parallelism) == [("all", sum(range(500)))]
    assert run(lambda env: spread(env, list(range(500))).group_by_count(key), parallelism) == [("all", 500)]


def test_count_without_a_key_counts_each_record(parallelism):
    assert sorted(run(lambda env: spread(env, WORDS).group_by_count(), parallelism)) == \
        sorted(collections.Counter(WORDS).items())


def test_extreme_elements_keep_the_first_on_ties():
    records = [("k", 3, "a"), ("k", 1, "b"), ("k", 3, "c"), ("k", 1, "d")]
    assert run(lambda env: env.from_iterable(records).group_by_max_element(lambda r: r[0], lambda r: r[1])) == \
        [("k", ("k", 3, "a"))]
    assert run(lambda env: env.from_iterable(records).group_by_min_element(lambda r: r[0], lambda r: r[1])) == \
        [("k", ("k", 1, "b"))]


def test_pre_aggregation_ships_partials_not_records(parallelism):
    """group_by_count sends one partial count per key and replica over the shuffle."""
    got, env, result = execute(lambda env: env.from_parallel(lambda i, n: ["x"] * 1000 + ["y"]).group_by_count(),
                               parallelism)
    assert sorted(got) == [("x", 1000 * parallelism), ("y", parallelism)]
    final = [b for b in env.graph.blocks if any("final aggregate" in op.name for op in b.operators)]
    assert len(final) == 1 and result.records_in[final[0].id] == 2 * parallelism


def test_a_keyed_reduce_of_one_record_per_key_returns_it(parallelism):
    assert bag(run(lambda env: spread(env, list(range(20))).group_by(lambda x: x).reduce(lambda a, b: 1 / 0),
                   parallelism)) == bag((x, x) for x in range(20))
