"""k-means clustering of generated 2-D points (Lloyd's algorithm) with ``replay``.

    segflow run examples/kmeans.py -p output=out/ --parallelism 4

The points are replayed in every iteration; each replica sums the points nearest to each
centroid (its delta), the leader adds the deltas, and the loop condition turns the sums
into the new centroids, stopping when they no longer move (or after ``iterations``).
Writes one ``index<TAB>x<TAB>y`` line per centroid (6 decimals). The first ``k`` points
are the initial centroids.
"""
from segflow.datagen.nexmark import mix

CENTERS = ((0.0, 0.0), (10.0, 10.0), (-10.0, 8.0), (6.0, -9.0), (-7.0, -7.0))


def point(i):
    h = mix(i, 11)
    cx, cy = CENTERS[h % len(CENTERS)]
    return (cx + ((h >> 8) % 2000) / 500 - 2.0, cy + ((h >> 20) % 2000) / 500 - 2.0)


def nearest(centroids, p):
    return min(range(len(centroids)), key=lambda c: (centroids[c][0] - p[0]) ** 2 + (centroids[c][1] - p[1]) ** 2)


def add_point(sums, assigned):
    index, x, y = assigned
    sx, sy, n = sums.get(index, (0.0, 0.0, 0))
    sums[index] = (sx + x, sy + y, n + 1)
    return sums


def add_sums(state, delta):
    merged = dict(state["sums"])
    for index, (x, y, n) in delta.items():
        sx, sy, m = merged.get(index, (0.0, 0.0, 0))
        merged[index] = (sx + x, sy + y, m + n)
    return {"centroids": state["centroids"], "sums": merged}


def move_centroids(state):
    """Once per iteration: the sums become the new centroids; go on while they move."""
    old = state["centroids"]
    new = [(s[0] / s[2], s[1] / s[2]) if (s := state["sums"].get(i)) else c for i, c in enumerate(old)]
    state["centroids"], state["sums"] = new, {}
    return new != old


def lines_of(state):
    return [f"{i}\t{x:.6f}\t{y:.6f}" for i, (x, y) in enumerate(state["centroids"])]


def build(env, output, points="5000", k="5", iterations="20"):
    count, k = int(points), int(k)
    initial = {"centroids": [point(i) for i in range(k)], "sums": {}}
    state = env.generate(point, count=count).replay(
        int(iterations), initial,
        lambda s, st: s.map(lambda p: (nearest(st.get()["centroids"], p), p[0], p[1])),
        local_fold=add_point, global_fold=add_sums, loop_condition=move_centroids, delta_init={})
    state.flat_map(lines_of).write_text(output)
