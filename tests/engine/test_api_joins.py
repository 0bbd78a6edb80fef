"""Key joins (inner, left, outer) for every ship and local strategy, and interval joins."""
import itertools

import pytest
from conftest import bag, run

LEFT = [(i % 7, f"L{i}") for i in range(40)]
RIGHT = [(i % 9, f"R{i}") for i in range(25)] + [(None, "Rnone")]


def model(kind):
    out = []
    for l in LEFT:
        matches = [r for r in RIGHT if r[0] == l[0]]
        out += [(l[0], (l, r)) for r in matches] or ([(l[0], (l, None))] if kind != "inner" else [])
    if kind == "outer":
        out += [(r[0], (None, r)) for r in RIGHT if not any(l[0] == r[0] for l in LEFT)]
    return out


STRATEGIES = [s for s in itertools.product(["ship_hash", "ship_broadcast_right"], ["local_hash", "local_sort_merge"],
                                           ["inner", "left", "outer"])
              if s[0] != "ship_broadcast_right" or s[2] != "outer"]     # refused: see test_api_errors


@pytest.mark.parametrize("ship,local,kind", STRATEGIES, ids=["-".join(s) for s in STRATEGIES])
def test_key_joins(parallelism, ship, local, kind):
    if local == "local_sort_merge":
        right = [r for r in RIGHT if r[0] is not None]      # sort-merge needs orderable keys
    else:
        right = RIGHT

    def build(env):
        builder = env.from_iterable(LEFT).shuffle().join_with(env.from_iterable(right).shuffle(),
                                                              lambda l: l[0], lambda r: r[0])
        return getattr(getattr(getattr(builder, ship)(), local)(), kind)()
    expected = [(k, (l, r)) for k, (l, r) in model(kind) if r is None or r in right]
    if kind == "outer" and local == "local_sort_merge":
        expected = [e for e in expected if e[1][1] is None or e[1][1][0] is not None]
    assert bag(run(build, parallelism)) == bag(expected)


def test_join_shortcuts_are_hash_joins(parallelism):
    for name, kind in (("join", "inner"), ("left_join", "left"), ("outer_join", "outer")):
        got = run(lambda env: getattr(env.from_iterable(LEFT), name)(env.from_iterable(RIGHT),
                                                                       lambda l: l[0], lambda r: r[0]), parallelism)
        assert bag(got) == bag(model(kind)), name


def test_interval_join(parallelism):
    left = [(f"k{i % 2}", t) for i, t in enumerate(range(0, 200, 10))]
    right = [(f"k{i % 2}", t) for i, t in enumerate(range(3, 200, 7))]

    def build(env):
        a = env.from_iterable(left).add_timestamps(lambda e: e[1], lambda e, ts: ts - 20)
        b = env.from_iterable(right).add_timestamps(lambda e: e[1], lambda e, ts: ts - 20)
        return a.interval_join(b, 5, 8)
    expected = [(l, r) for l in left for r in right if l[1] - 5 <= r[1] <= l[1] + 8]
    assert bag(run(build, parallelism)) == bag(expected)

    def keyed(env):
        a = env.from_iterable(left).add_timestamps(lambda e: e[1], lambda e, ts: ts - 20).group_by(lambda e: e[0])
        b = env.from_iterable(right).add_timestamps(lambda e: e[1], lambda e, ts: ts - 20).group_by(lambda e: e[0])
        return a.interval_join(b, 5, 8)
    got = run(keyed, parallelism)
    assert bag(got) == bag((l[0], (l, r)) for l, r in expected if l[0] == r[0])
