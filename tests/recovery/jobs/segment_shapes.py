"""Three topologies for segment backup (Shen, Segment Backup, §3.6), with their
plain-Python oracles.

linear: generate, timestamps (the source's block) -> shuffle -> key (a plain block) -> hash
-> event-time window count (a connector under ``--connectors auto``) -> shuffle -> format
-> text sink. Segments: source|plain|window, then window|sink directly.

split: one source feeds two branches, each to its own sink (filter, map): with ``auto``
one segment ends at both sinks, and the sink restored ahead of the other drops what its
state already holds (its output would repeat otherwise); with the split block as a
connector, that connector keeps one version pointer per branch.

merge: two sources joined by key (a hash join) into one sink: one segment with two
upstream connectors, each replaying its own window (the slow left branch keeps the sink
versions behind the sources).
"""
import collections
import time

import segflow

WINDOW = 100


def event(i):
    return (f"k{(i * 7919) % 13}", i)


def watermark(record, ts):
    return ts - 50 if ts % 200 in (0, 1) else None


def left(i):
    return (i % 400, f"L{i}")


def right(i):
    return (i % 3000, f"R{i}")


def _counts(stream):
    """Shuffled once the records have their times, so that a plain block (no connector:
    fed round-robin) lies between the source's block and the window's."""
    return (stream.add_timestamps(lambda e: e[1], watermark)
            .shuffle()
            .map(tuple)
            .group_by(lambda e: e[0])
            .window(segflow.EventTimeWindow.tumbling(WINDOW))
            .count()
            .unkey())


def slowly(seconds, fn):
    """``fn``, taking ``seconds`` per record: the sink behind it acknowledges versions
    later than the other connectors, so a disaster finds them at different versions."""
    def slowed(record):
        time.sleep(seconds)
        return fn(record)
    return slowed


def build(env, output, shape="linear", events="30000", rate="5000", delay="0"):
    n, rate, delay = int(events), float(rate), float(delay)
    if shape == "linear":
        (_counts(env.generate(event, count=n, rate=rate))
            .shuffle()
            .map(slowly(delay * 20, lambda kv: f"{kv[0]}\t{kv[1]}"))
            .write_text(output + "/counts"))
    elif shape == "split":
        # A block of its own before the split, behind a shuffle (a map right after the
        # source would run in the source's block, and an empty block would be left out of
        # the plan: the source would split the stream itself): the tests name it as the
        # connector with two downstream segments.
        evens, everything = env.generate(event, count=n, rate=rate).shuffle().map(lambda e: (e[0], e[1])).split(2)
        (evens.filter(lambda e: e[1] % 2 == 0)
            .map(slowly(delay * 2, lambda e: f"{e[0]}\t{e[1]}"))
            .write_text(output + "/evens"))
        everything.map(lambda e: f"{e[1]}\t{e[1] * e[1]}").write_text(output + "/squares")
    elif shape == "merge":
        a = env.generate(left, count=n // 2, rate=rate / 2).shuffle().map(slowly(delay * 2.5, lambda x: x))
        b = env.generate(right, count=n // 6, rate=rate / 6)
        (a.join(b, lambda x: x[0], lambda y: y[0])
            .drop_key()
            .write_text(output + "/pairs", lambda lr: f"{lr[0][1]}\t{lr[1][1]}"))
    else:
        raise ValueError(f"unknown shape {shape!r}: linear, split or merge")


def oracle(shape, events=30000):
    """Sink directory -> Counter of its lines, computed without segflow."""
    counts = collections.Counter((k, i // WINDOW) for k, i in map(event, range(events)))
    count_lines = collections.Counter(f"{k}\t{c}" for (k, _), c in counts.items())
    if shape == "linear":
        return {"counts": count_lines}
    if shape == "split":
        evens = collections.Counter(f"{k}\t{i}" for k, i in map(event, range(events)) if i % 2 == 0)
        return {"evens": evens, "squares": collections.Counter(f"{i}\t{i * i}" for i in range(events))}
    lefts = collections.defaultdict(list)
    for i in range(events // 2):
        key, name = left(i)
        lefts[key].append(name)
    pairs = collections.Counter(f"{lft}\t{name}" for key, name in map(right, range(events // 6))
                                for lft in lefts.get(key, []))
    return {"pairs": pairs}
