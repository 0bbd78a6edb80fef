"""Triangle enumeration in a generated undirected graph.

    segflow run examples/enum_triangles.py -p output=out/ --parallelism 4

Edges are oriented from the smaller to the larger id; per node, every pair of its
neighbours (v < w) is a candidate, and a join with the edges keeps the candidates closed
by an edge (v, w). Writes one ``u<TAB>v<TAB>w`` line per triangle (u < v < w).
"""
from segflow.datagen.nexmark import mix


def edges_of(nodes, edges):
    result = set()
    for i in range(edges):
        a, b = mix(i, 13) % nodes, (mix(i, 13) >> 24) % nodes
        if a != b:
            result.add((min(a, b), max(a, b)))
    return sorted(result)


def candidates(node, neighbours):
    ordered = sorted(neighbours)
    return [((v, w), node) for i, v in enumerate(ordered) for w in ordered[i + 1:]]


def build(env, output, nodes="120", edges="900"):
    graph = edges_of(int(nodes), int(edges))
    by_first, closing = env.from_iterable(graph).split(2)
    wedges = (by_first.group_by(lambda e: e[0])
              .fold([], lambda acc, e: acc + [e[1]])
              .unkey()
              .flat_map(lambda kv: candidates(*kv)))
    (wedges.join(closing, lambda c: c[0], lambda e: e)
        .drop_key()
        .map(lambda pair: (pair[0][1], pair[0][0][0], pair[0][0][1]))
        .write_text(output, lambda t: f"{t[0]}\t{t[1]}\t{t[2]}"))
