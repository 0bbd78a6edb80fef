"""A pipeline drawn from ``seed``: paced stamped sources, random stateless stages, one of
several shapes (a chain, a split that merges again, a second source concatenated, a hash
join, an interval join, a second shuffle on another key) and one of several endings
(keyed aggregates, event-time and count windows, a global total, extreme elements, the
records themselves). Every drawn pipeline's output is a function of its input alone: no
ending depends on the order in which parallel replicas' records meet. The differential
kill test runs it without failures and under SIGKILLs and compares the two outputs."""
import random
from dataclasses import dataclass

import segflow

KEYS = 7
GAP_EVERY, GAP = 500, 1000          # event time jumps by GAP every GAP_EVERY records (sessions end)


def stamp(i):
    return i + (i // GAP_EVERY) * GAP


def watermark(record, ts):
    return ts - 30 if ts % 20 == 0 else None


def key(x):
    return x % KEYS


def other_key(x):
    return (x // KEYS) % 5


def add(a, b):
    return a + b


def source(env, offset, count, rate):
    """Records offset, offset + 1, ... with event time ``stamp`` of their index."""
    return (env.generate(lambda i: i + offset, count=count, rate=rate)
            .add_timestamps(lambda x: stamp(x - offset), watermark))


STAGES = {
    "map": lambda s: s.map(lambda x: x * 3 + 1),
    "filter": lambda s: s.filter(lambda x: x % 3 != 0),
    "repeat": lambda s: s.flat_map(lambda x: [x] * (x % 3)),
    "filter_map": lambda s: s.filter_map(lambda x: x // 2 if x % 5 else None),
    "shuffle": lambda s: s.shuffle(),
}
SHAPES = ("chain", "diamond", "union", "join", "interval", "reshuffle")
ENDINGS = {
    "count": lambda s: s.group_by_count(key),
    "sum": lambda s: s.group_by_sum(key),
    "fold": lambda s: s.group_by_fold(key, 0, lambda acc, x: acc + x * x, add),
    "reduce": lambda s: s.group_by(key).reduce(add),
    "tumbling": lambda s: s.group_by(key).window(segflow.EventTimeWindow.tumbling(200)).sum(),
    "sliding": lambda s: s.group_by(key).window(segflow.EventTimeWindow.sliding(300, 100)).count(),
    "session": lambda s: s.group_by(key).window(segflow.EventTimeWindow.session(200)).sum(),
    "count_window": lambda s: s.group_by(key).window(segflow.CountWindow.sliding(6, 4)).count(),
    "all_tumbling": lambda s: s.window_all(segflow.EventTimeWindow.tumbling(250)).sum(),
    "total": lambda s: s.reduce_assoc(add),
    "largest": lambda s: s.group_by_max_element(key),
    "records": lambda s: s,
}
TIMED = {"tumbling", "sliding", "session", "all_tumbling"}
UNSTAMPED = {"join"}                # a hash join's output has no event times


@dataclass(frozen=True)
class Recipe:
    """The drawn pipeline. ``branches``: the stages of a diamond's two branches (the
    second also of a union's second source); ``side``: a diamond's first branch also has
    a sink of its own."""

    head: tuple
    shape: str
    branches: tuple
    side: bool
    tail: tuple
    ending: str


def recipe(seed: int) -> Recipe:
    rng = random.Random(seed)

    def stages(most=2):
        return tuple(rng.sample(sorted(STAGES), rng.randint(0, most)))
    head, shape, branches, side, tail = stages(), rng.choice(SHAPES), (stages(), stages()), rng.random() < 0.5, \
        stages(most=1)
    endings = sorted(ENDINGS) if shape not in UNSTAMPED else sorted(set(ENDINGS) - TIMED)
    return Recipe(head, shape, branches, side, tail, rng.choice(endings))


def staged(stream, names):
    for name in names:
        stream = STAGES[name](stream)
    return stream


def shaped(env, stream, made: Recipe, events, rate, output):
    """The middle of the pipeline: a stream of ints."""
    if made.shape == "diamond":
        left, right = stream.split(2)
        left = staged(left, made.branches[0])
        if made.side:
            left, side = left.split(2)
            side.write_text(f"{output}/side")
        return left.concat(staged(right, made.branches[1]).map(lambda x: x + 10_000_000))
    if made.shape == "union":
        return stream.concat(staged(source(env, 20_000_000, events // 2, rate), made.branches[1]))
    if made.shape == "join":
        labels = env.generate(lambda i: i, count=KEYS)
        return stream.join(labels, key, key).drop_key().map(lambda pair: pair[0] * 10 + pair[1])
    if made.shape == "interval":
        right = source(env, 30_000_000, events // 3, rate).filter(lambda x: x % 4 == 0)
        return (stream.filter(lambda x: x % 5 == 0).interval_join(right, 3, 6)
                .map(lambda pair: pair[0] * 100_000_000 + pair[1]))
    if made.shape == "reshuffle":
        return stream.group_by(other_key).map(lambda k, x: x + 1).drop_key()
    return stream


def build(env, output, seed="0", events="6000", rate="800"):
    made, count, pace = recipe(int(seed)), int(events), float(rate)
    stream = shaped(env, staged(source(env, 0, count, pace), made.head), made, count, pace, output)
    ENDINGS[made.ending](staged(stream, made.tail)).write_text(f"{output}/main")
