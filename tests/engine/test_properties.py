"""Random pipelines on random inputs: stateless stages, then a keyed fold or reduce, a
global aggregate, or count or event-time windows. Each one runs twice, with two random
parallelisms and batch modes, and both results must equal a plain-Python model: results
may depend on neither."""
import collections

from support.pipelines import bag, count_windows, groups, run, time_windows
from hypothesis import given, settings
from hypothesis import strategies as st

from segflow import BatchMode, CountWindow, EventTimeWindow

# stage: (apply to a stream, the same on one value in plain Python: its outputs)
STAGES = {
    "double": (lambda s: s.map(lambda x: x * 2), lambda v: [v * 2]),
    "drop_odd": (lambda s: s.filter(lambda x: x % 2 == 0), lambda v: [v] if v % 2 == 0 else []),
    "repeat": (lambda s: s.flat_map(lambda x: [x] * (abs(x) % 3)), lambda v: [v] * (abs(v) % 3)),
    "halve": (lambda s: s.filter_map(lambda x: x // 2 if x % 3 else None), lambda v: [v // 2] if v % 3 else []),
    "shift": (lambda s: s.map(lambda x: x + 7), lambda v: [v + 7]),
    "shuffle": (lambda s: s.shuffle(), lambda v: [v]),
}


def key(x):
    return x % 5


# ending: (apply to a stream, the model's result from the values and their event times)
ENDINGS = {
    "none": (lambda s: s, lambda vs, ts: bag(vs)),
    "count": (lambda s: s.group_by_count(key), lambda vs, ts: bag(collections.Counter(map(key, vs)).items())),
    "sum": (lambda s: s.group_by_sum(key),
            lambda vs, ts: bag((k, sum(g)) for k, g in groups((key(v), v) for v in vs).items())),
    "reduce_max": (lambda s: s.group_by_reduce(key, max),
                   lambda vs, ts: bag((k, max(g)) for k, g in groups((key(v), v) for v in vs).items())),
    "keyed_fold": (lambda s: s.group_by(key).fold((), lambda acc, x: tuple(sorted(acc + (x,)))),
                   lambda vs, ts: bag((k, tuple(sorted(g))) for k, g in groups((key(v), v) for v in vs).items())),
    "keyed_reduce": (lambda s: s.group_by(key).reduce(lambda a, b: a + b),
                     lambda vs, ts: bag((k, sum(g)) for k, g in groups((key(v), v) for v in vs).items())),
    "total": (lambda s: s.reduce_assoc(lambda a, b: a + b), lambda vs, ts: bag([sum(vs)] if vs else [])),
    "count_window": (lambda s: s.group_by(key).window(CountWindow.sliding(3, 2)).sum(),
                     lambda vs, ts: bag((k, sum(w)) for k, g in groups((key(v), v) for v in vs).items()
                                        for w in count_windows(g, 3, 2))),
    "time_window": (lambda s: s.group_by(key).window(EventTimeWindow.tumbling(7)).sum(),
                    lambda vs, ts: bag((k, sum(w)) for (k, _), w in time_windows(
                        [(key(v), (t, v)) for v, t in zip(vs, ts)], 7, 7).items())),
}

BATCHES = [BatchMode.fixed(1), BatchMode.fixed(7), BatchMode.adaptive(1024, 0.05), BatchMode.adaptive(3, 0.001)]


def model(data, stages, ending):
    pairs = [(v, v) for v in data]                      # (value, event time = the source record)
    for stage in stages:
        pairs = [(y, t) for v, t in pairs for y in STAGES[stage][1](v)]
    return ENDINGS[ending][1]([v for v, _ in pairs], [t for _, t in pairs])


def build(env, data, stages, ending, batch):
    """Count windows see each key's values in arrival order: that order is the model's only
    when one replica reads and nothing reshuffles before the group_by. Event times are the
    source records, sorted, with a watermark after each: no record is ever late."""
    if ending == "count_window":
        stream = env.from_iterable(data)
    else:
        stream = env.from_parallel(lambda i, n: data[i::n])
    stream = stream.batch_mode(batch)
    if ending == "time_window":
        stream = stream.add_timestamps(lambda x: x, lambda x, ts: ts)
    for stage in stages:
        stream = STAGES[stage][0](stream)
    return ENDINGS[ending][0](stream)


CONFIGS = st.tuples(st.integers(1, 4), st.sampled_from(BATCHES))


@settings(max_examples=35, deadline=None)
@given(data=st.lists(st.integers(-50, 50), max_size=60), stages=st.lists(st.sampled_from(sorted(STAGES)), max_size=4),
       ending=st.sampled_from(sorted(ENDINGS)), first=CONFIGS, second=CONFIGS)
def test_random_pipelines_match_the_model_at_any_parallelism_and_batching(data, stages, ending, first, second):
    if ending == "time_window":
        data = sorted(data)
    if ending == "count_window":
        stages = [s for s in stages if s != "shuffle"]
    expected = model(data, stages, ending)
    for parallelism, batch in (first, second):
        got = run(lambda env: build(env, data, stages, ending, batch), parallelism)
        assert bag(got) == expected, (parallelism, batch)
