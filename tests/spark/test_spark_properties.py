"""Random pipelines on random inputs: both engines give the same multiset of records.

A recipe is a source, a few stateless operators and a tail (a keyed fold or reduce, a
pre-aggregation, a count or tumbling window, a join, a concat). Tails that see record
order (count windows, folds into tuples, watermarks that make records late) get a
single-sender source, where the engine's order is defined; with a parallel source they
use order-free aggregates only.
"""
from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from segflow import CountWindow, EventTimeWindow

STATELESS = {
    "map": lambda s: s.map(lambda x: x * 7 % 101),
    "filter": lambda s: s.filter(lambda x: x % 3 != 0),
    "flat_map": lambda s: s.flat_map(lambda x: [x, x // 2]),
    "filter_map": lambda s: s.filter_map(lambda x: None if x % 4 == 0 else x + 1),
    "shuffle": lambda s: s.shuffle(),
}

ORDER_FREE = {
    "collect": lambda s, r: s,
    "keyed_sum": lambda s, r: s.group_by(lambda x: x % r.modulus).fold(0, lambda acc, x: acc + x),
    "keyed_reduce": lambda s, r: s.group_by(lambda x: x % r.modulus).reduce(max),
    "group_by_count": lambda s, r: s.group_by_count(lambda x: x % r.modulus),
    "group_by_sum": lambda s, r: s.group_by_sum(lambda x: x % r.modulus),
    "group_by_reduce": lambda s, r: s.group_by_reduce(lambda x: x % r.modulus, min),
    "reduce": lambda s, r: s.reduce(lambda a, b: a + b),
    "tumbling_sorted": lambda s, r: (s.add_timestamps(lambda x: x).group_by(lambda x: x % r.modulus)
                                     .window(EventTimeWindow.tumbling(r.size)).map(sorted)),
    "join": lambda s, r: s.join(s.env.from_iterable(list(range(0, 60, 3))), lambda x: x % r.modulus,
                                lambda y: y % r.modulus).unkey(),
    "outer_join": lambda s, r: s.outer_join(s.env.generate(lambda i: i * 5, count=12), lambda x: x % r.modulus,
                                            lambda y: y % (r.modulus + 3)).unkey(),   # some keys never match
    "concat_count": lambda s, r: s.concat(s.env.generate(lambda i: i, count=20)).group_by_count(),
}

IN_ORDER = {
    "keyed_tuple_fold": lambda s, r: s.group_by(lambda x: x % r.modulus).fold((), lambda acc, x: acc + (x,)),
    "count_window_keyed": lambda s, r: (s.group_by(lambda x: x % r.modulus)
                                        .window(CountWindow.sliding(r.size, r.step)).map(tuple)),
    "count_window_all": lambda s, r: s.window_all(CountWindow.sliding(r.size, r.step)).map(tuple),
    "tumbling_with_late_records": lambda s, r: (
        s.add_timestamps(lambda x: x, lambda x, t: t - r.step if x % r.modulus == 0 else None)
        .key_by(lambda x: x % 2).window(EventTimeWindow.tumbling(r.size)).map(tuple)),
}


@dataclass(frozen=True)
class Recipe:
    ordered_source: bool          # from_iterable (one sender) or generate (one per replica)
    values: tuple[int, ...]
    parallelism: int
    stateless: tuple[str, ...]
    tail: str
    modulus: int
    size: int
    step: int

    def build(self, env):
        values = list(self.values)
        if self.ordered_source:
            stream = env.from_iterable(values)
        else:
            stream = env.generate(values.__getitem__, count=len(values))
        for name in self.stateless:
            stream = STATELESS[name](stream)
        return {**ORDER_FREE, **IN_ORDER}[self.tail](stream, self).collect()


@st.composite
def recipes(draw) -> Recipe:
    ordered_source = draw(st.booleans())
    names = sorted(STATELESS) if not ordered_source else sorted(set(STATELESS) - {"shuffle"})
    stateless = tuple(draw(st.lists(st.sampled_from(names), max_size=3)))
    tails = sorted(ORDER_FREE) + (sorted(IN_ORDER) if ordered_source else [])
    return Recipe(ordered_source, tuple(draw(st.lists(st.integers(0, 300), max_size=60))),
                  draw(st.integers(1, 3)), stateless, draw(st.sampled_from(tails)),
                  draw(st.integers(1, 6)), draw(st.integers(1, 12)), draw(st.integers(1, 12)))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(recipe=recipes())
def test_random_pipelines_agree(recipe, both_engines):
    expected, got = both_engines(recipe.build, recipe.parallelism)
    assert sorted(map(repr, got)) == sorted(map(repr, expected))
