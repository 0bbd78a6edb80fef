"""A paced job with one branch per join and non-keyed window family that no example runs
under kills: an interval join, a keyed window join, a left and an outer hash join with a
static side, and non-keyed count and session windows. test_kills kills its workers and
compares each sink's output with plain Python (oracle_lines)."""
import collections

import segflow

KEYS = 7
WINDOW, LOWER, UPPER, COUNT, GAP = 200, 6, 9, 97, 100


def event(i):
    return (f"k{(i * 7919) % KEYS}", i)


def watermark(record, ts):
    return ts - 20 if ts % 50 in (0, 1) else None


def labels():
    """The static side: labels for every other key, and keys that no event has."""
    return [(f"k{k}", f"label{k}") for k in range(0, KEYS + 3, 2)]


def on_sessions(i):
    return (i // 500) % 2 == 0


def build(env, output, events="6000", rate="2000"):
    stamped = (env.generate(event, count=int(events), rate=float(rate))
               .add_timestamps(lambda e: e[1], watermark))
    left, right, window_left, window_right, hashed, outer, counted, sessions = stamped.split(8)
    (left.filter(lambda e: e[1] % 3 == 0).interval_join(right.filter(lambda e: e[1] % 5 == 0), LOWER, UPPER)
        .write_text(f"{output}/interval", lambda lr: f"{lr[0][1]} {lr[1][1]}"))
    tumbling = segflow.EventTimeWindow.tumbling(WINDOW)
    (window_left.filter(lambda e: e[1] % 10 == 0).group_by(lambda e: e[0]).window(tumbling)
        .join(window_right.filter(lambda e: e[1] % 7 == 0).group_by(lambda e: e[0]).window(tumbling))
        .unkey().write_text(f"{output}/window_join", lambda kv: f"{kv[0]} {kv[1][0][1]} {kv[1][1][1]}"))
    (hashed.filter(lambda e: e[1] % 4 == 0).left_join(env.from_iterable(labels()), lambda e: e[0], lambda kv: kv[0])
        .unkey().write_text(f"{output}/left", lambda kv: f"{kv[1][0][1]} {kv[1][1] and kv[1][1][1]}"))
    (outer.filter(lambda e: e[1] % 11 == 0).outer_join(env.from_iterable(labels()), lambda e: e[0], lambda kv: kv[0])
        .unkey().write_text(f"{output}/outer", lambda kv: f"{kv[0]} {kv[1][0] and kv[1][0][1]} "
                                                           f"{kv[1][1] and kv[1][1][1]}"))
    counted.window_all(segflow.CountWindow.tumbling(COUNT)).count().write_text(f"{output}/count_all")
    (sessions.filter(lambda e: on_sessions(e[1])).window_all(segflow.EventTimeWindow.session(GAP)).count()
        .write_text(f"{output}/session_all"))


def oracle_lines(events):
    """Per sink directory, the lines an uninterrupted run writes (as a multiset)."""
    records = [event(i) for i in range(events)]
    lefts = [r for r in records if r[1] % 3 == 0]
    rights = [r for r in records if r[1] % 5 == 0]
    interval = [f"{lft[1]} {r[1]}" for lft in lefts for r in rights if lft[1] - LOWER <= r[1] <= lft[1] + UPPER]
    window_join = [f"{a[0]} {a[1]} {b[1]}" for a in records if a[1] % 10 == 0 for b in records
                   if b[1] % 7 == 0 and a[0] == b[0] and a[1] // WINDOW == b[1] // WINDOW]
    label_of = dict(labels())
    left = [f"{i} {label_of.get(k)}" for k, i in records if i % 4 == 0]
    outer_left = [(k, i) for k, i in records if i % 11 == 0]
    outer = [f"{k} {i} {label_of.get(k)}" for k, i in outer_left]
    outer += [f"{k} None {label}" for k, label in labels() if k not in {k for k, _ in outer_left}]
    full, rest = divmod(events, COUNT)
    count_all = [str(COUNT)] * full + ([str(rest)] if rest else [])
    session_all = [str(n) for n in collections.Counter(i // 500 for i in range(events) if on_sessions(i)).values()]
    return {"interval": collections.Counter(interval), "window_join": collections.Counter(window_join),
            "left": collections.Counter(left), "outer": collections.Counter(outer),
            "count_all": collections.Counter(count_all), "session_all": collections.Counter(session_all)}
