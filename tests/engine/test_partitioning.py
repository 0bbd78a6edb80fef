"""Where records go: shuffle, group_by, key_by, unkey/drop_key, split/concat/zip,
max_parallelism, and batch modes (which may change batching but never results)."""
import time

import pytest
from support.pipelines import bag, execute, groups, run

import segflow
from segflow import BatchMode
from segflow.plan.graph import Strategy

# A replica's records, gathered per replica: the local stage of fold_assoc runs in the
# replicas of the block before it, and its combine sees one partial per replica.
PER_REPLICA = ((), lambda acc, x: acc + (x,), lambda acc, part: acc + (part,))


def test_shuffle_spreads_even_one_small_batch_over_every_replica(parallelism):
    """300 records from one source arrive as one batch; the shuffle still deals them over
    all replicas, evenly."""
    parts = run(lambda env: env.from_iterable(range(300)).shuffle().fold_assoc(*PER_REPLICA), parallelism)[0]
    assert len(parts) == parallelism
    assert sorted(x for part in parts for x in part) == list(range(300))
    assert {len(part) for part in parts} == {300 // parallelism}


def test_group_by_puts_each_key_in_exactly_one_replica(parallelism):
    parts = run(lambda env: env.from_parallel(lambda i, n: range(i, 500, n)).group_by(lambda x: x % 10).drop_key()
                .fold_assoc(*PER_REPLICA), parallelism)[0]
    keys = [{x % 10 for x in part} for part in parts]
    assert sorted(x for part in parts for x in part) == list(range(500))
    assert sum(map(len, keys)) == 10 and set().union(*keys) == set(range(10))


def test_all_records_with_one_key_meet_in_one_replica(parallelism):
    parts = run(lambda env: env.from_parallel(lambda i, n: range(i, 90, n)).group_by(lambda x: "same").drop_key()
                .fold_assoc(*PER_REPLICA), parallelism)[0]
    assert sorted(map(len, parts)) == [0] * (parallelism - 1) + [90]


def test_key_by_keys_without_moving_records(parallelism):
    """key_by trusts the records to be partitioned already: a per-key fold after it runs
    in each source replica, so a key present in every replica gives one result per replica."""
    got, env, _ = execute(lambda env: env.from_parallel(lambda i, n: [("k", 1), ("k", 2)])
                          .key_by(lambda r: r[0]).fold(0, lambda acc, r: acc + r[1]), parallelism)
    assert got == [("k", 3)] * parallelism
    assert Strategy.HASH not in {e.strategy for e in env.graph.edges}


def test_unkey_and_drop_key(parallelism):
    words = [f"w{i % 7}" for i in range(100)]
    assert bag(run(lambda env: env.from_iterable(words).group_by(len).unkey(), parallelism)) == \
        bag((len(w), w) for w in words)
    assert bag(run(lambda env: env.from_iterable(words).group_by(lambda w: w[1]).drop_key(), parallelism)) == bag(words)
    # a keyed stream after unkey is a plain stream of pairs: plain functions take the pair
    assert bag(run(lambda env: env.from_iterable(words).group_by(len).unkey().map(lambda kv: kv[0]), parallelism)) == \
        bag([2] * 100)


def test_split_gives_every_branch_every_record(parallelism):
    def build(env):
        a, b, c = env.from_iterable(range(50)).split(3)
        return [a.map(lambda x: -x), b.filter(lambda x: x % 2), c.shuffle().group_by_count(lambda x: x % 3)]
    negated, odd, counts = run(build, parallelism)
    assert sorted(negated) == sorted(-x for x in range(50))
    assert sorted(odd) == list(range(1, 50, 2))
    assert sorted(counts) == [(0, 17), (1, 17), (2, 16)]
    assert sorted(run(lambda env: env.from_iterable(range(5)).split(1)[0], parallelism)) == list(range(5))


def test_concat_plain_keyed_and_empty(parallelism):
    def build(env):
        plain = env.from_iterable(range(20)).concat(env.from_parallel(lambda i, n: range(100 + i, 130, n)))
        keyed = env.from_iterable(range(10)).group_by(lambda x: x % 2).concat(
            env.from_iterable(range(10, 20)).group_by(lambda x: x % 2)).fold(0, lambda acc, v: acc + v)
        empty = env.from_iterable([]).concat(env.from_iterable([1, 2]))
        return [plain, keyed, empty]
    plain, keyed, empty = run(build, parallelism)
    assert sorted(plain) == list(range(20)) + list(range(100, 130))
    assert sorted(keyed) == [(0, sum(range(0, 20, 2))), (1, sum(range(1, 20, 2)))]
    assert sorted(empty) == [1, 2]


def test_zip_pairs_records_in_order_and_drops_the_leftovers(parallelism):
    def build(env):
        return [env.from_iterable("abcde").zip(env.from_iterable(range(3))),
                env.from_iterable(range(4)).map(str).zip(env.from_iterable([[1], [2], [3], [4], [5]])),
                env.from_iterable([]).zip(env.from_iterable(range(3)))]
    assert run(build, parallelism) == [[("a", 0), ("b", 1), ("c", 2)],
                                       [("0", [1]), ("1", [2]), ("2", [3]), ("3", [4])], []]


def test_max_parallelism_caps_one_block_until_the_next_split(parallelism):
    def build(env):
        limited = env.from_parallel(lambda i, n: [i] * 5).max_parallelism(2).map(lambda x: x * 10)
        return limited.shuffle().map(lambda x: x + 1)
    got, env, _ = execute(build, parallelism)
    assert sorted(got) == sorted(i * 10 + 1 for i in range(parallelism) for _ in range(5))
    from segflow.plan.placement import Worker, plan
    execution = plan(env.graph, [Worker("w", parallelism)])
    mapped = [b.id for b in env.graph.blocks if b.operators and b.operators[0].name.startswith("map")]
    assert [execution.replicas[b] for b in mapped] == [min(2, parallelism), parallelism]


@pytest.mark.parametrize("mode", [BatchMode.fixed(1), BatchMode.fixed(7), BatchMode.adaptive(16, 0.001)], ids=str)
def test_batch_modes_do_not_change_results(parallelism, mode):
    data = list(range(2000))
    got = run(lambda env: env.from_iterable(data).batch_mode(mode).shuffle().map(lambda x: x + 1)
              .group_by(lambda x: x % 7).reduce(lambda a, b: a + b), parallelism)
    assert sorted(got) == sorted((k, sum(v)) for k, v in groups((x % 7, x) for x in (y + 1 for y in data)).items())


def arrival_spread(mode):
    """Seconds between the first and the last record reaching a sink, for 16 records
    produced over about 0.4 s and batched with ``mode`` on the way."""
    arrivals = []
    env = segflow.StreamEnvironment(parallelism=1)
    env.generate(lambda i: i, count=16, rate=40).batch_mode(mode).shuffle().for_each(
        lambda x: arrivals.append(time.monotonic()))
    env.execute()
    assert len(arrivals) == 16
    return max(arrivals) - min(arrivals)


def test_adaptive_batches_leave_on_timeout_fixed_ones_when_full():
    """Adaptive mode bounds latency: records trickle through as they are produced. A fixed
    batch that never fills waits for the end of the stream, then everything arrives at once."""
    assert arrival_spread(BatchMode.adaptive(1024, 0.02)) > 0.2
    assert arrival_spread(BatchMode.fixed(1024)) < 0.05

