"""Stateless operators, shuffles and stream shapes, against plain Python."""
from conftest import bag, run

import segflow


def test_map_filter_flat_map_filter_map_flatten(parallelism):
    data = list(range(200))
    assert bag(run(lambda env: env.from_iterable(data).shuffle().map(lambda x: x * 2), parallelism)) == \
        bag(x * 2 for x in data)
    assert bag(run(lambda env: env.from_iterable(data).shuffle().filter(lambda x: x % 3 == 0), parallelism)) == \
        bag(x for x in data if x % 3 == 0)
    assert bag(run(lambda env: env.from_iterable(data).shuffle().flat_map(lambda x: [x] * (x % 3)), parallelism)) \
        == bag(y for x in data for y in [x] * (x % 3))
    assert bag(run(lambda env: env.from_iterable(data).shuffle()
                   .filter_map(lambda x: x // 2 if x % 2 else None), parallelism)) == \
        bag(x // 2 for x in data if x % 2)
    assert bag(run(lambda env: env.from_iterable([[1, 2], [], [3]]).shuffle().flatten(), parallelism)) == \
        bag([1, 2, 3])


def test_falsy_results_are_kept_by_filter_map_except_none():
    assert run(lambda env: env.from_iterable([0, 1, 2]).filter_map(lambda x: [0, "", None][x])) == [0, ""]


def test_rich_map_keeps_state_per_replica_and_per_key(parallelism):
    def numbering():
        seen = [0]

        def number(x):
            seen[0] += 1
            return seen[0]
        return number
    numbers = run(lambda env: env.from_iterable(range(50)).rich_map(numbering), parallelism)
    assert sorted(numbers) == list(range(1, 51))           # one replica: from_iterable is single

    def running_total():
        total = [0]

        def add(_key, value):
            total[0] += value
            return total[0]
        return add
    totals = run(lambda env: env.from_iterable([("a", 1), ("b", 10), ("a", 2), ("b", 20), ("a", 3)])
                 .group_by(lambda kv: kv[0]).map(lambda k, kv: kv[1]).rich_map(running_total), parallelism)
    assert sorted(totals) == [("a", 1), ("a", 3), ("a", 6), ("b", 10), ("b", 30)]


def test_rich_flat_map_and_rich_filter_map():
    def dedupe():
        seen = set()

        def first_time(x):
            if x in seen:
                return None
            seen.add(x)
            return x
        return first_time
    assert run(lambda env: env.from_iterable([3, 1, 3, 2, 1]).rich_filter_map(dedupe)) == [3, 1, 2]

    def pairs():
        previous = [None]

        def pair(x):
            out = [] if previous[0] is None else [(previous[0], x)]
            previous[0] = x
            return out
        return pair
    assert run(lambda env: env.from_iterable([1, 2, 3]).rich_flat_map(pairs)) == [(1, 2), (2, 3)]


def test_keyed_streams_key_by_unkey_drop_key(parallelism):
    data = [f"w{i % 7}" for i in range(100)]
    keyed = run(lambda env: env.from_iterable(data).key_by(len).map(lambda k, w: w.upper()), parallelism)
    assert bag(keyed) == bag((len(w), w.upper()) for w in data)
    assert bag(run(lambda env: env.from_iterable(data).group_by(lambda w: w).unkey(), parallelism)) == \
        bag((w, w) for w in data)
    assert bag(run(lambda env: env.from_iterable(data).group_by(lambda w: w[1]).drop_key(), parallelism)) == bag(data)


def test_split_concat_zip(parallelism):
    def build(env):
        a, b = env.from_iterable(range(20)).split(2)
        return [a.map(lambda x: -x).concat(b), env.from_iterable("abc").zip(env.from_iterable([1, 2, 3, 4]))]
    merged, zipped = run(build, parallelism)
    assert bag(merged) == bag(list(range(20)) + [-x for x in range(20)])
    assert zipped == [("a", 1), ("b", 2), ("c", 3)]


def test_batch_modes_do_not_change_results(parallelism):
    data = list(range(3000))
    for mode in (segflow.BatchMode.fixed(1), segflow.BatchMode.fixed(64), segflow.BatchMode.adaptive(16, 0.001)):
        out = run(lambda env: env.from_iterable(data).batch_mode(mode).shuffle().map(lambda x: x + 1), parallelism)
        assert sorted(out) == [x + 1 for x in data]


def test_max_parallelism_limits_a_block(parallelism):
    env = segflow.StreamEnvironment(parallelism=parallelism)
    limited = env.from_parallel(lambda i, n: [i] * 5).max_parallelism(1)
    out = limited.collect()
    env.execute()
    assert sorted(out.get()) == sorted(i for i in range(parallelism) for _ in range(5))
    assert env.graph.blocks[limited.block.id].max_parallelism == 1
    from segflow.plan.placement import Worker, plan
    assert plan(env.graph, [Worker("w", parallelism)]).replicas[limited.block.id] == 1


def test_empty_and_single_inputs(parallelism):
    assert run(lambda env: env.from_iterable([]).shuffle().map(str), parallelism) == []
    assert run(lambda env: env.from_iterable([7]).shuffle().map(str), parallelism) == ["7"]
    assert run(lambda env: env.from_iterable([]).group_by_count(), parallelism) == []
