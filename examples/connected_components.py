"""Connected components of a generated undirected graph, by label propagation (``iterate``).

    segflow run examples/connected_components.py -p output=out/ --parallelism 4

Every node starts labelled with its own id; in each iteration it takes the smallest label
among itself and its neighbours (the edges are a side input, replayed every iteration).
The loop stops when no label changed (``until_none_flagged``). Writes ``node<TAB>component``
lines, the component being the smallest node id in it.
"""
from segflow import until_none_flagged
from segflow.datagen.nexmark import mix

UNSET = float("inf")


def edges_of(nodes, edges):
    """Undirected edges, both directions; a few components by construction."""
    result = []
    for i in range(edges):
        h = mix(i, 3)
        a = h % nodes
        b = (a + 1 + (h >> 16) % 6) % nodes if (h >> 8) % 4 else (h >> 24) % nodes
        if a // 50 == b // 50:            # nodes in blocks of 50: one component (or more) per block
            result += [(a, b), (b, a)]
    return result


def smaller(a, b):
    return (a[0], (min(a[1][0], b[1][0]), min(a[1][1], b[1][1])))


def body(labels, state, edges):
    labelled = labels.map(lambda r: (r[0], r[1]))
    own, spread = labelled.split(2)
    offers = (spread.join(edges, lambda nl: nl[0], lambda e: e[0])
              .drop_key()
              .map(lambda pair: (pair[1][1], (pair[0][1], UNSET))))
    mine = own.map(lambda nl: (nl[0], (nl[1], nl[1])))
    return (mine.concat(offers)
            .group_by_reduce(lambda r: r[0], smaller)
            .drop_key()
            .map(lambda r: (r[0], r[1][0], r[1][0] < r[1][1])))


def build(env, output, nodes="400", edges="500", iterations="100"):
    n = int(nodes)
    edge_stream = env.from_iterable(edges_of(n, int(edges)))
    _, last = env.from_iterable([(i, i, True) for i in range(n)]).iterate(
        int(iterations), body=lambda s, st: body(s, st, edge_stream), **until_none_flagged(lambda r: r[2]))
    last.write_text(output, lambda r: f"{r[0]}\t{r[1]}")
