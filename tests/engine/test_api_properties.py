"""Random pipelines on random inputs: the result equals a plain-Python model and does not
depend on the parallelism or the batch mode."""
import collections

from conftest import bag, run
from hypothesis import given, settings
from hypothesis import strategies as st

import segflow
from segflow import CountWindow

STAGES = st.lists(st.sampled_from(["double", "drop_odd", "repeat", "shift", "shuffle"]), max_size=4)
ENDINGS = st.sampled_from(["none", "count", "sum", "reduce_max", "tumbling_sum", "fold_list"])


def apply_model(data, stages, ending):
    for stage in stages:
        data = {"double": lambda d: [x * 2 for x in d], "drop_odd": lambda d: [x for x in d if x % 2 == 0],
                "repeat": lambda d: [y for x in d for y in [x] * (abs(x) % 3)],
                "shift": lambda d: [x + 7 for x in d], "shuffle": lambda d: d}[stage](data)
    groups = collections.defaultdict(list)
    for x in data:
        groups[x % 5].append(x)
    if ending == "none":
        return bag(data)
    if ending == "count":
        return bag((k, len(v)) for k, v in groups.items())
    if ending == "sum":
        return bag((k, sum(v)) for k, v in groups.items())
    if ending == "reduce_max":
        return bag((k, max(v)) for k, v in groups.items())
    if ending == "fold_list":
        return bag((k, tuple(sorted(v))) for k, v in groups.items())
    return bag((k, sum(sorted(v)[i:i + 4])) for k, v in groups.items() for i in range(0, len(v), 4))


def build_pipeline(env, data, stages, ending, batch):
    stream = env.from_parallel(lambda i, n: data[i::n]).batch_mode(segflow.BatchMode.fixed(batch))
    for stage in stages:
        stream = {"double": lambda s: s.map(lambda x: x * 2), "drop_odd": lambda s: s.filter(lambda x: x % 2 == 0),
                  "repeat": lambda s: s.flat_map(lambda x: [x] * (abs(x) % 3)),
                  "shift": lambda s: s.map(lambda x: x + 7), "shuffle": lambda s: s.shuffle()}[stage](stream)
    key = lambda x: x % 5  # noqa: E731
    if ending == "none":
        return stream
    if ending == "count":
        return stream.group_by_count(key)
    if ending == "sum":
        return stream.group_by_sum(key)
    if ending == "reduce_max":
        return stream.group_by_reduce(key, max)
    if ending == "fold_list":
        return stream.group_by(key).fold((), lambda acc, x: tuple(sorted(acc + (x,))))
    # count windows see a key's values in arrival order: sort them first so the model is exact
    return (stream.group_by(key).fold((), lambda acc, x: tuple(sorted(acc + (x,))))
            .unkey().flat_map(lambda kv: [(kv[0], x) for x in kv[1]])
            .max_parallelism(1).group_by(lambda kv: kv[0]).map(lambda k, kv: kv[1])
            .window(CountWindow.tumbling(4)).sum())


@settings(max_examples=40, deadline=None)
@given(data=st.lists(st.integers(-50, 50), max_size=60), stages=STAGES, ending=ENDINGS,
       parallelism=st.integers(1, 4), batch=st.sampled_from([1, 7, 1024]))
def test_random_pipelines_match_the_model(data, stages, ending, parallelism, batch):
    got = run(lambda env: build_pipeline(env, data, stages, ending, batch), parallelism)
    assert bag(got) == apply_model(data, stages, ending)
