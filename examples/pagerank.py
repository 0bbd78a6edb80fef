"""PageRank of a generated directed graph, a fixed number of iterations (``iterate``).

    segflow run examples/pagerank.py -p output=out/ --parallelism 4

rank' = (1 - d) / N + d * (sum of rank / out-degree over in-links), d = 0.85. Every node
has at least one out-link, so no rank leaks. The adjacency lists are a side input,
replayed every iteration. Writes ``node<TAB>rank`` lines (12 decimals).
"""
from segflow.datagen.nexmark import mix

DAMPING = 0.85


def adjacency(nodes):
    links = {}
    for a in range(nodes):
        h = mix(a, 5)
        out = {(a + 1) % nodes} | {(h >> (8 * j)) % nodes for j in range(1 + h % 4)}
        links[a] = sorted(out - {a}) or [(a + 1) % nodes]
    return links


def spread(pair):
    (_, rank), (_, targets) = pair
    return [(t, rank / len(targets)) for t in targets]


def build(env, output, nodes="300", iterations="15"):
    n = int(nodes)
    links = env.from_iterable(sorted(adjacency(n).items()))

    def body(ranks, _state):
        own, out = ranks.split(2)
        contributions = out.join(links, lambda r: r[0], lambda nl: nl[0]).drop_key().flat_map(spread)
        return (own.map(lambda r: (r[0], 0.0)).concat(contributions)
                .group_by_sum(lambda c: c[0], lambda c: c[1])
                .map(lambda node, total: (1 - DAMPING) / n + DAMPING * total)
                .unkey())
    _, last = env.from_iterable([(i, 1.0 / n) for i in range(n)]).iterate(
        int(iterations), 0, body, local_fold=lambda d, r: d + 1, global_fold=lambda s, d: s + d, delta_init=0)
    last.write_text(output, lambda r: f"{r[0]}\t{r[1]:.12f}")
