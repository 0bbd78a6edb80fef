"""A paced job with one branch per operator family, each to its own file sink: a non-keyed
event-time window (issue 10's split window), keyed sliding windows, a keyed two-stage
reduction, an associative global reduction, a rich (stateful) map and a hash join with a
static side. test_runtime_restore kills it, restores it in new processes and compares the
output with plain Python (oracle_lines)."""
import collections
import operator

import segflow

KEYS = 7
TUMBLE, SLIDE_SIZE, SLIDE_STEP = 500, 300, 100


def event(i):
    return (f"k{(i * 7919) % KEYS}", i)


def watermark(record, ts):
    return ts - 20 if ts % 50 in (0, 1) else None


class Numbering:
    """A rich map's state: how many records of its key it has seen."""

    def __init__(self):
        self.seen = 0

    def __call__(self, key, record):
        self.seen += 1
        return self.seen


def build(env, output, events="6000", rate="2000"):
    stamped = (env.generate(event, count=int(events), rate=float(rate))
               .add_timestamps(lambda e: e[1], watermark))
    windows_all, keyed_windows, sums, total, numbered, joined = stamped.split(6)
    (windows_all.window_all(segflow.EventTimeWindow.tumbling(TUMBLE)).count()
        .write_text(f"{output}/window_all"))
    (keyed_windows.group_by(lambda e: e[0]).window(segflow.EventTimeWindow.sliding(SLIDE_SIZE, SLIDE_STEP))
        .count().unkey().write_text(f"{output}/keyed_windows", lambda kv: f"{kv[0]} {kv[1]}"))
    (sums.group_by_sum(lambda e: e[0], lambda e: e[1]).unkey()
        .write_text(f"{output}/sums", lambda kv: f"{kv[0]} {kv[1]}"))
    total.map(lambda e: e[1]).reduce_assoc(operator.add).write_text(f"{output}/total")
    (numbered.group_by(lambda e: e[0]).rich_map(Numbering).unkey()
        .filter(lambda kv: kv[1] % 100 == 0).write_text(f"{output}/numbered", lambda kv: f"{kv[0]} {kv[1]}"))
    labels = env.from_iterable([(f"k{k}", f"label{k}") for k in range(0, KEYS, 2)])
    (joined.filter(lambda e: e[1] % 10 == 0).join(labels, lambda e: e[0], lambda kv: kv[0]).unkey()
        .write_text(f"{output}/joined", lambda kv: f"{kv[1][0][1]} {kv[1][1][1]}"))


def oracle_lines(events):
    """Per sink directory, the lines an uninterrupted run writes (as a multiset)."""
    records = [event(i) for i in range(events)]
    by_key = collections.defaultdict(list)
    for key, i in records:
        by_key[key].append(i)
    tumbling = collections.Counter(i // TUMBLE for _, i in records)
    sliding = collections.Counter()
    for key, i in records:
        first = (i - SLIDE_SIZE) // SLIDE_STEP * SLIDE_STEP + SLIDE_STEP
        for start in range(first, i + 1, SLIDE_STEP):
            sliding[(key, start)] += 1
    labels = {f"k{k}": f"label{k}" for k in range(0, KEYS, 2)}
    lines = {
        "window_all": [str(n) for n in tumbling.values()],
        "keyed_windows": [f"{key} {n}" for (key, _), n in sliding.items()],
        "sums": [f"{key} {sum(values)}" for key, values in by_key.items()],
        "total": [str(sum(range(events)))],
        "numbered": [f"{key} {n}" for key, values in by_key.items() for n in range(100, len(values) + 1, 100)],
        "joined": [f"{i} {labels[key]}" for key, i in records if i % 10 == 0 and key in labels],
    }
    return {name: collections.Counter(found) for name, found in lines.items()}
