"""Running small pipelines in process for the engine's tests, and plain-Python models of
what they must produce (tests/engine imports them; any other folder may)."""
import collections
import functools
import math

import segflow

PARALLELISMS = [1, 3]


# Every window aggregation beside a plain-Python model of it over a window's values in
# arrival order; map, fold and reduce depend on that order, so a reordered window shows.
WINDOW_AGGREGATIONS = {
    "first": (lambda w: w.first(), lambda vs: vs[0]),
    "sum": (lambda w: w.sum(), sum),
    "min": (lambda w: w.min(), min),
    "max": (lambda w: w.max(), max),
    "count": (lambda w: w.count(), len),
    "map": (lambda w: w.map(lambda vs: tuple(vs[::-1])), lambda vs: tuple(vs[::-1])),
    "fold": (lambda w: w.fold(1, lambda acc, x: acc * 2 + x),
             lambda vs: functools.reduce(lambda a, x: a * 2 + x, vs, 1)),
    "reduce": (lambda w: w.reduce(lambda a, b: a * 3 - b), lambda vs: functools.reduce(lambda a, b: a * 3 - b, vs)),
}


def execute(build, parallelism=1, **config):
    """Build with ``build(env)`` (a stream or a list of streams, collected here), run in
    process; returns ``(collected records, env, run result)``."""
    env = segflow.StreamEnvironment(parallelism=parallelism, **config)
    built = build(env)
    streams = built if isinstance(built, list) else [built]
    outputs = [s.collect() for s in streams]
    result = env.execute()
    records = [o.get() for o in outputs]
    return (records if isinstance(built, list) else records[0]), env, result


def run(build, parallelism=1, **config):
    """The records ``build(env)`` collects (a list of lists for a list of streams)."""
    return execute(build, parallelism, **config)[0]


def bag(items):
    """Records as a multiset: for results whose order depends on the replicas."""
    return collections.Counter(items)


def stamped(env, data, time=lambda e: e[1], every=None):
    """``data`` from one replica with event times ``time(record)``; a watermark equal to the
    record's time after every record, or after times divisible by ``every``."""
    if every is None:
        watermark = lambda e, ts: ts  # noqa: E731
    else:
        watermark = lambda e, ts: ts if ts % every == 0 else None  # noqa: E731
    return env.from_iterable(data).add_timestamps(time, watermark)


def groups(pairs):
    """``{key: [values in order]}`` of ``(key, value)`` pairs."""
    out = collections.defaultdict(list)
    for k, v in pairs:
        out[k].append(v)
    return dict(out)


def time_windows(pairs, size, step):
    """``{(key, window start): [values]}`` for aligned windows ``[start, start + size)``
    starting at multiples of ``step``, from ``(key, (time, value))`` pairs in order."""
    windows = collections.defaultdict(list)
    for key, (ts, value) in pairs:
        start = (math.floor((ts - size) / step) + 1) * step
        while start <= ts:
            windows[(key, start)].append(value)
            start += step
    return dict(windows)


def count_windows(values, size, step):
    """Count windows over one key's values in arrival order: a window fires at ``size``
    values, then its oldest ``step`` values leave (all of them when ``step > size``: the
    next window starts with the next value). At the end the open window is emitted if it
    holds values that no full window had."""
    out, start, covered = [], 0, 0
    while start + size <= len(values):
        out.append(values[start:start + size])
        covered, start = start + size, start + min(step, size)
    if start < len(values) and len(values) > covered:
        out.append(values[start:])
    return out


def sessions(times, gap):
    """Sessions of sorted times: consecutive times at most ``gap`` apart share one."""
    out = []
    for t in sorted(times):
        if out and t - out[-1][-1] <= gap:
            out[-1].append(t)
        else:
            out.append([t])
    return out
