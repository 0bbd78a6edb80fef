"""Plain-Python reference results of the examples, computed without segflow from the
same inputs (each example's input generator), as the lines its job writes."""
from __future__ import annotations

import collections

from segflow.datagen.nexmark import Auction, Bid, Person, event


def words(path):
    with open(path, encoding="utf-8") as f:
        return [w for line in f for w in line.lower().split()]


def wordcount_assoc(params):
    return [f"{w}\t{n}" for w, n in collections.Counter(words(params["input"])).items()]


def windowed_wordcount(params):
    lines = []
    for word, n in collections.Counter(words(params["input"])).items():
        fired = list(range(10, n + 1, 5))          # a window closes at 10, 15, 20, ... occurrences
        lines += [f"{word}\t10"] * len(fired)
        if not fired:
            lines.append(f"{word}\t{n}")
        elif fired[-1] < n:
            lines.append(f"{word}\t{5 + n - fired[-1]}")
    return lines


def _sliding(events, size, step):
    """(window start, records) of the non-empty sliding windows over (time, record)."""
    windows = collections.defaultdict(list)
    for ts, record in events:
        start = (ts - size) // step * step + step
        while start <= ts:
            windows[start].append(record)
            start += step
    return sorted(windows.items())


def rolling_top_words(params):
    from examples.rolling_top_words import word_event
    events = [(t, w) for w, t in map(word_event, range(int(params.get("events", 20000))))]
    top = int(params.get("top", 3))
    lines = []
    for _, ws in _sliding(events, int(params.get("size", 2000)), int(params.get("step", 500))):
        best = sorted(collections.Counter(ws).items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        lines.append(" ".join(f"{w}:{n}" for w, n in best))
    return lines


def kmeans(params):
    from examples.kmeans import point
    points = [point(i) for i in range(int(params.get("points", 5000)))]
    centroids = points[:int(params.get("k", 5))]
    for _ in range(int(params.get("iterations", 20))):
        groups = collections.defaultdict(list)
        for x, y in points:
            groups[min(range(len(centroids)),
                       key=lambda c: (centroids[c][0] - x) ** 2 + (centroids[c][1] - y) ** 2)].append((x, y))
        moved = [(sum(p[0] for p in groups[i]) / len(groups[i]), sum(p[1] for p in groups[i]) / len(groups[i]))
                 if groups[i] else c for i, c in enumerate(centroids)]
        if moved == centroids:
            break
        centroids = moved
    return [f"{i}\t{x:.6f}\t{y:.6f}" for i, (x, y) in enumerate(centroids)]


def connected_components(params):
    from examples.connected_components import edges_of
    n = int(params.get("nodes", 400))
    parent = list(range(n))

    def root(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a
    for a, b in edges_of(n, int(params.get("edges", 500))):
        ra, rb = root(a), root(b)
        parent[max(ra, rb)] = min(ra, rb)
    return [f"{i}\t{root(i)}" for i in range(n)]


def pagerank(params):
    from examples.pagerank import DAMPING, adjacency
    n = int(params.get("nodes", 300))
    links = adjacency(n)
    ranks = [1.0 / n] * n
    for _ in range(int(params.get("iterations", 15))):
        incoming = [0.0] * n
        for a, targets in links.items():
            for t in targets:
                incoming[t] += ranks[a] / len(targets)
        ranks = [(1 - DAMPING) / n + DAMPING * s for s in incoming]
    return [f"{i}\t{r:.12f}" for i, r in enumerate(ranks)]


def transitive_closure(params):
    from examples.transitive_closure import edges_of
    edges = edges_of(int(params.get("nodes", 40)), int(params.get("edges", 60)))
    successors = collections.defaultdict(set)
    for a, b in edges:
        successors[a].add(b)
    lines = []
    for a in {a for a, _ in edges}:
        seen, todo = set(), list(successors[a])
        while todo:
            b = todo.pop()
            if b not in seen:
                seen.add(b)
                todo += successors[b]
        lines += [f"{a}\t{b}" for b in seen]
    return lines


def enum_triangles(params):
    from examples.enum_triangles import edges_of
    edges = set(edges_of(int(params.get("nodes", 120)), int(params.get("edges", 900))))
    nodes = sorted({x for e in edges for x in e})
    return [f"{u}\t{v}\t{w}" for u in nodes for v in nodes if (u, v) in edges
            for w in nodes if v < w and (u, w) in edges and (v, w) in edges]


def _events(params):
    return [event(i) for i in range(int(params.get("events", 50000)))]


def nexmark_q1(params):
    return [f"{e.auction}\t{e.bidder}\t{e.price * 908 // 1000}\t{e.date_time}"
            for e in _events(params) if isinstance(e, Bid)]


def nexmark_q3(params):
    evs = _events(params)
    people = {e.id: e for e in evs if isinstance(e, Person) and e.state in ("OR", "ID", "CA")}
    return [f"{people[a.seller].name}\t{people[a.seller].city}\t{people[a.seller].state}\t{a.id}"
            for a in evs if isinstance(a, Auction) and a.category == 1 and a.seller in people]


def nexmark_q5(params):
    bids = [(e.date_time, e.auction) for e in _events(params) if isinstance(e, Bid)]
    lines = []
    for _, auctions in _sliding(bids, int(params.get("size", 10000)), int(params.get("step", 2000))):
        auction, n = min(collections.Counter(auctions).items(), key=lambda kv: (-kv[1], kv[0]))
        lines.append(f"{auction}\t{n}")
    return lines


def _sql(query):
    """An oracle of the DuckDB queries (tests/nexmark/oracle.py)."""
    def oracle(params):
        from nexmark.oracle import nexmark_lines
        return nexmark_lines(query, int(params.get("events", 50000)))
    oracle.__name__ = f"nexmark_{query}"
    return oracle


nexmark_q0, nexmark_q2, nexmark_q4, nexmark_q6, nexmark_q7 = (_sql(q) for q in ("q0", "q2", "q4", "q6", "q7"))


def nexmark_q8(params):
    size = int(params.get("size", 5000))
    evs = _events(params)
    people = {(e.id, e.date_time // size): e for e in evs if isinstance(e, Person)}
    return [f"{a.date_time // size * size}\t{p.id}\t{p.name}\t{a.id}" for a in evs if isinstance(a, Auction)
            if (p := people.get((a.seller, a.date_time // size)))]


def sensor_averages(params):
    readings = int(params.get("readings", 80000))
    windows = collections.defaultdict(list)
    for i in range(readings):
        windows[(i % 16, i - i % 1000)].append(i * 7919 % 1000)
    return [f"sensor-{sensor:02d}\t{start}\t{len(values)}\t{sum(values)}\t{sum(values) / len(values):.2f}"
            for (sensor, start), values in windows.items()]


ORACLES = {name: fn for name, fn in globals().items()
           if callable(fn) and not name.startswith("_") and fn.__module__ == __name__ and name != "words"}
