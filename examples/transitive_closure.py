"""Transitive closure of a generated directed graph (``iterate`` until nothing is new).

    segflow run examples/transitive_closure.py -p output=out/ --parallelism 4

The known paths start as the edges; each iteration extends every path by one edge (the
edges are a side input), keeps each (from, to) pair once, and marks the new ones. The
loop stops when an iteration found no new pair. Writes ``from<TAB>to`` lines.
"""
from segflow import until_none_flagged
from segflow.datagen.nexmark import mix


def edges_of(nodes, edges):
    return sorted({(a, b) for i in range(edges)
                   if (a := mix(i, 9) % nodes) != (b := (mix(i, 9) >> 20) % nodes)})


def keep_old(a, b):
    """Of two copies of a pair, the result is new only if both are."""
    return (a[0], a[1] and b[1])


def body(paths, edges):
    pairs = paths.map(lambda p: (p[0], p[1]))
    known, extend = pairs.split(2)
    longer = (extend.join(edges, lambda p: p[1], lambda e: e[0])
              .drop_key()
              .map(lambda pe: ((pe[0][0], pe[1][1]), True)))
    return (known.map(lambda p: (p, False)).concat(longer)
            .group_by_reduce(lambda r: r[0], keep_old)
            .drop_key()
            .map(lambda r: (r[0][0], r[0][1], r[1])))


def build(env, output, nodes="40", edges="60", iterations="100"):
    graph = edges_of(int(nodes), int(edges))
    edge_stream = env.from_iterable(graph)
    _, last = env.from_iterable([(a, b, True) for a, b in graph]).iterate(
        int(iterations), body=lambda s, _st: body(s, edge_stream), **until_none_flagged(lambda r: r[2]))
    last.write_text(output, lambda r: f"{r[0]}\t{r[1]}")
