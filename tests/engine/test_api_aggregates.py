"""Folds, reduces and the group_by_* family, with and without local pre-aggregation."""
import collections
import statistics

import pytest
from conftest import bag, run

WORDS = [f"w{(i * 7) % 11}" for i in range(300)] + ["solo"]


def test_fold_and_reduce_over_the_whole_stream(parallelism):
    data = list(range(1, 101))
    assert run(lambda env: env.from_iterable(data).shuffle().fold(0, lambda a, x: a + x), parallelism) == [5050]
    assert run(lambda env: env.from_iterable(data).shuffle().reduce(max), parallelism) == [100]
    assert run(lambda env: env.from_iterable([]).reduce(max), parallelism) == []
    assert run(lambda env: env.from_iterable([]).fold(7, max), parallelism) == [7]


def test_associative_fold_and_reduce(parallelism):
    data = list(range(1, 201))
    assert run(lambda env: env.from_parallel(lambda i, n: data[i::n])
               .fold_assoc(0, lambda a, x: a + x, lambda a, b: a + b), parallelism) == [sum(data)]
    assert run(lambda env: env.from_parallel(lambda i, n: data[i::n]).reduce_assoc(min), parallelism) == [1]


def test_keyed_fold_and_reduce(parallelism):
    pairs = [(w, i) for i, w in enumerate(WORDS)]
    expected = collections.defaultdict(list)
    for w, i in pairs:
        expected[w].append(i)
    folded = run(lambda env: env.from_iterable(pairs).group_by(lambda p: p[0])
                 .fold([], lambda acc, p: acc + [p[1]]), parallelism)
    assert {k: sorted(v) for k, v in folded} == {k: sorted(v) for k, v in expected.items()}
    reduced = run(lambda env: env.from_iterable(pairs).group_by(lambda p: p[0]).reduce(max), parallelism)
    assert dict(reduced) == {k: (k, max(v)) for k, v in expected.items()}


@pytest.mark.parametrize("name", ["count", "sum", "avg", "min_element", "max_element", "fold", "reduce"])
def test_group_by_family(parallelism, name):
    values = [(w, (i * 37) % 101) for i, w in enumerate(WORDS)]
    groups = collections.defaultdict(list)
    for w, v in values:
        groups[w].append(v)
    key = lambda p: p[0]  # noqa: E731
    build, expect = {
        "count": (lambda s: s.group_by_count(key), {k: len(v) for k, v in groups.items()}),
        "sum": (lambda s: s.group_by_sum(key, lambda p: p[1]), {k: sum(v) for k, v in groups.items()}),
        "avg": (lambda s: s.group_by_avg(key, lambda p: p[1]), {k: statistics.mean(v) for k, v in groups.items()}),
        "min_element": (lambda s: s.group_by_min_element(key, lambda p: p[1]),
                        {k: (k, min(v)) for k, v in groups.items()}),
        "max_element": (lambda s: s.group_by_max_element(key, lambda p: p[1]),
                        {k: (k, max(v)) for k, v in groups.items()}),
        "fold": (lambda s: s.group_by_fold(key, 0, lambda a, p: a + p[1], lambda a, b: a + b),
                 {k: sum(v) for k, v in groups.items()}),
        "reduce": (lambda s: s.group_by_reduce(key, lambda a, b: a if a[1] >= b[1] else b),
                   {k: (k, max(v)) for k, v in groups.items()}),
    }[name]
    got = dict(run(lambda env: build(env.from_parallel(lambda i, n: values[i::n])), parallelism))
    assert got.keys() == expect.keys()
    for k in expect:
        assert got[k] == pytest.approx(expect[k]) if name == "avg" else got[k] == expect[k]


def test_count_without_a_key_counts_records_and_one_key_for_all(parallelism):
    assert dict(run(lambda env: env.from_iterable(WORDS).group_by_count(), parallelism)) == \
        dict(collections.Counter(WORDS))
    assert run(lambda env: env.from_iterable(range(500)).shuffle().group_by_count(lambda x: "all"), parallelism) \
        == [("all", 500)]


def test_pre_aggregation_really_happens_before_the_shuffle(parallelism):
    """group_by_count ships one partial count per key and replica, not every record."""
    import segflow
    env = segflow.StreamEnvironment(parallelism=parallelism)
    out = env.from_parallel(lambda i, n: ["x"] * 1000).group_by_count().collect()
    result = env.execute()
    assert out.get() == [("x", 1000 * parallelism)]
    final = [b for b in env.graph.blocks if any("final aggregate" in op.name for op in b.operators)][0]
    assert result.records_in[final.id] == parallelism
    assert bag(out.get()) == bag([("x", 1000 * parallelism)])
