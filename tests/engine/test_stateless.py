"""Record-at-a-time operators (map, filter, flat_map, filter_map, flatten, inspect) and their
stateful rich_* forms, on plain and keyed streams, against plain Python."""
import pytest
from support.pipelines import bag, groups, run, time_windows

from segflow import EventTimeWindow

DATA = [(i * 37) % 101 - 50 for i in range(600)]

# name: (apply to a stream, the same in plain Python)
OPERATORS = {
    "map": (lambda s: s.map(lambda x: x * 3), lambda d: [x * 3 for x in d]),
    "filter": (lambda s: s.filter(lambda x: x % 3 == 0), lambda d: [x for x in d if x % 3 == 0]),
    "flat_map": (lambda s: s.flat_map(lambda x: [x] * (x % 3)), lambda d: [y for x in d for y in [x] * (x % 3)]),
    "filter_map": (lambda s: s.filter_map(lambda x: x // 2 if x % 2 else None), lambda d: [x // 2 for x in d if x % 2]),
    "flatten": (lambda s: s.map(lambda x: [x, -x][:x % 3]).flatten(),
                lambda d: [y for x in d for y in [x, -x][:x % 3]]),
    "inspect": (lambda s: s.inspect(lambda x: None), lambda d: d),
}


@pytest.mark.parametrize("name", OPERATORS)
def test_operators_keep_the_order_of_one_replica(parallelism, name):
    """After a non-parallel source the chain has one replica: the order is exact."""
    apply, model = OPERATORS[name]
    assert run(lambda env: apply(env.from_iterable(DATA)), parallelism) == model(DATA)


@pytest.mark.parametrize("name", OPERATORS)
def test_operators_on_shuffled_replicas(parallelism, name):
    apply, model = OPERATORS[name]
    assert bag(run(lambda env: apply(env.from_iterable(DATA).shuffle()), parallelism)) == bag(model(DATA))


def test_empty_and_one_record_inputs(parallelism):
    for name, (apply, model) in OPERATORS.items():
        assert run(lambda env: apply(env.from_iterable([]).shuffle()), parallelism) == [], name
        assert run(lambda env: apply(env.from_iterable([5]).shuffle()), parallelism) == model([5]), name


def test_filter_map_keeps_falsy_results_other_than_none():
    assert run(lambda env: env.from_iterable([0, 1, 2, 3]).filter_map(lambda x: [0, "", None, []][x])) == [0, "", []]


def test_inspect_sees_every_record_and_passes_it_unchanged(parallelism):
    seen = []
    got = run(lambda env: env.from_iterable(DATA).shuffle().inspect(seen.append).map(abs), parallelism)
    assert bag(seen) == bag(DATA) and bag(got) == bag(map(abs, DATA))


KEYED = {
    "map": (lambda s: s.map(lambda k, v: (k, v * 2)), lambda k, vs: [(k, v * 2) for v in vs]),
    "filter": (lambda s: s.filter(lambda k, v: (k + v) % 2 == 0), lambda k, vs: [v for v in vs if (k + v) % 2 == 0]),
    "flat_map": (lambda s: s.flat_map(lambda k, v: [k] * (v % 3)), lambda k, vs: [k for v in vs for _ in range(v % 3)]),
    "filter_map": (lambda s: s.filter_map(lambda k, v: v - k if v > k else None),
                   lambda k, vs: [v - k for v in vs if v > k]),
    "flatten": (lambda s: s.map(lambda k, v: [v, k]).flatten(), lambda k, vs: [y for v in vs for y in (v, k)]),
    "inspect": (lambda s: s.inspect(lambda k, v: None), lambda k, vs: vs),
}


@pytest.mark.parametrize("name", KEYED)
def test_keyed_operators_get_key_and_value_and_keep_the_key(parallelism, name):
    """On a KeyedStream functions receive (key, value); the output stays keyed by the same
    key, and one key's records keep their order (one sender, FIFO channels)."""
    apply, model = KEYED[name]
    got = run(lambda env: apply(env.from_iterable(DATA).group_by(lambda x: x % 4)).unkey(), parallelism)
    expected = {k: model(k, vs) for k, vs in groups((x % 4, x) for x in DATA).items()}
    assert groups(got) == {k: vs for k, vs in expected.items() if vs}


def numbering():
    """A stateful function: the running count and sum of what it has seen."""
    state = {"n": 0, "sum": 0}

    def step(*args):
        state["n"] += 1
        state["sum"] += args[-1]
        return (state["n"], state["sum"])
    return step


def with_previous():
    """A stateful function: ``[(previous record, record)]``, nothing for the first record."""
    previous = []

    def pair(x):
        out = [(previous[0], x)] if previous else []
        previous[:] = [x]
        return out
    return pair


def test_rich_map_keeps_state_per_replica(parallelism):
    """Each replica gets its own function: every replica numbers its own records 1, 2, ..."""
    got = run(lambda env: env.from_parallel(lambda i, n: [(i, x) for x in range(i, 60, n)])
              .rich_map(lambda: (lambda f: lambda r: (r[0],) + f(r[1]))(numbering())), parallelism)
    expected = []
    for i in range(parallelism):
        mine = list(range(i, 60, parallelism))
        expected += [(i, n + 1, sum(mine[:n + 1])) for n in range(len(mine))]
    assert sorted(got) == sorted(expected)


def test_rich_operators_keep_state_per_key(parallelism):
    keyed = lambda env: env.from_iterable(DATA).group_by(lambda x: x % 5)  # noqa: E731
    by_key = groups((x % 5, x) for x in DATA)
    got = run(lambda env: keyed(env).rich_map(numbering).unkey(), parallelism)
    assert groups(got) == {k: [(n + 1, sum(vs[:n + 1])) for n in range(len(vs))] for k, vs in by_key.items()}

    def first_seen():
        seen = set()
        return lambda k, v: None if abs(v) in seen or seen.add(abs(v)) else v
    got = run(lambda env: keyed(env).rich_filter_map(first_seen).unkey(), parallelism)
    expected = {}
    for k, vs in by_key.items():
        firsts = []
        for v in vs:
            if abs(v) not in {abs(f) for f in firsts}:
                firsts.append(v)
        expected[k] = firsts
    assert groups(got) == expected

    got = run(lambda env: keyed(env).rich_flat_map(lambda: (lambda f: lambda k, v: f(v))(with_previous())).unkey(),
              parallelism)
    assert groups(got) == {k: list(zip(vs[:-1], vs[1:])) for k, vs in by_key.items()}


def test_rich_operators_on_a_plain_stream():
    def dedupe():
        seen = set()
        return lambda x: None if x in seen or seen.add(x) else x
    assert run(lambda env: env.from_iterable([3, 1, 3, 2, 1]).rich_filter_map(dedupe)) == [3, 1, 2]

    assert run(lambda env: env.from_iterable([1, 2, 3]).rich_flat_map(with_previous)) == [(1, 2), (2, 3)]


def test_timestamps_follow_their_records_through_every_operator(parallelism):
    """Records keep their event time through each stateless operator, plain and keyed:
    an event-time window afterwards groups them by the time of the record they came from.
    The times are out of order (no watermarks: the windows close at the end)."""
    events = [(i % 2, (i * 7) % 60) for i in range(60)]       # times out of order: no watermarks

    def build(env):
        s = env.from_iterable(events).add_timestamps(lambda e: e[1]).filter(lambda e: e[1] % 3)
        s = s.flat_map(lambda e: [e, e]).map(lambda e: (e[0], e[1], 0))
        s = s.filter_map(lambda e: e if e[1] % 5 else None).map(lambda e: [e]).flatten().inspect(lambda e: None)
        s = s.rich_map(lambda: lambda e: e).group_by(lambda e: e[0]).map(lambda k, e: e[1])
        s = s.filter(lambda k, v: v % 7).flat_map(lambda k, v: [v]).filter_map(lambda k, v: v)
        s = s.rich_map(lambda: lambda k, v: v)
        return s.window(EventTimeWindow.tumbling(10)).map(sorted)
    kept = [(k, (t, t)) for k, t in events if t % 3 and t % 5 and t % 7 for _ in (0, 1)]
    assert bag((k, tuple(v)) for k, v in run(build, parallelism)) == \
        bag((k, tuple(sorted(v))) for (k, _), v in time_windows(kept, 10, 10).items())
