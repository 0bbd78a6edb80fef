"""Every process that builds the same job must get the same plan and route each key to the
same replica: block ids, edges, placement and the rendered plan come from the code alone,
and key hashing does not depend on the process (Python's hash() of str and None does)."""
import json
import os
import subprocess
import sys

import segflow
from segflow import CountWindow, EventTimeWindow
from segflow.plan.placement import Worker, plan
from segflow.plan.render import render_dot, render_text
from segflow.runtime.hashing import partition_by_key, partition_timestamped, stable_hash


def a_job(env):
    words = env.from_parallel(lambda i, n: []).flat_map(str.split)
    a, b, c = words.split(3)
    a.group_by_count().unkey().collect()
    b.add_timestamps(len, lambda w, ts: ts).group_by(len).window(EventTimeWindow.sliding(4, 2)).count().collect()
    joined = c.map(lambda w: (w, 1)).join_with(env.from_iterable([("x", 2)]).shuffle(), lambda lft: lft[0],
                                               lambda r: r[0]).ship_broadcast_right().local_sort_merge().left()
    state, _ = joined.drop_key().iterate(3, 0, lambda s, st: s.window_all(CountWindow.tumbling(2)).count(),
                                         lambda d, x: d + x, lambda s, d: s + d, delta_init=0)
    state.collect()


def described(parallelism, workers):
    env = segflow.StreamEnvironment(parallelism=parallelism)
    a_job(env)
    execution = plan(env.graph, workers)
    g = env.graph
    return ([(b.id, b.label, b.max_parallelism, b.scope, b.keyed, b.timestamped, str(b.batch_mode)) for b in g.blocks],
            [vars(e) for e in g.edges], execution.replicas, sorted((str(r), w) for r, w in execution.placement.items()),
            render_text(execution), render_dot(execution))


def test_the_same_code_gives_the_same_plan():
    workers = [Worker("w-2", 3), Worker("w-1", 2)]
    assert described(5, workers) == described(5, list(reversed(workers)))


KEYS_CODE = """keys = ["apple", "été", "", ("a", 1), (None, 2.5), None, 7, -3, 2 ** 40, 1.5, float("inf"), b"raw",
        True, frozenset({"x", "y", "z"}), ("nested", ("tuple", None))]"""

PROBE = KEYS_CODE + """
import json
from segflow.runtime.hashing import partition_by_key, stable_hash
parts = partition_by_key([(k, i) for i, k in enumerate(keys)], 4)
print(json.dumps([[stable_hash(k) for k in keys], [[i for _, i in p] for p in parts]]))
"""


def hashes_in_a_new_process(seed):
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env,
                         check=True, timeout=60)
    return json.loads(out.stdout)


def test_keys_hash_alike_in_every_process():
    """Two processes with different string-hash seeds (and different addresses for None)
    partition every kind of key the same way as this one."""
    scope = {}
    exec(KEYS_CODE, scope)
    keys = scope["keys"]
    parts = partition_by_key([(k, i) for i, k in enumerate(keys)], 4)
    here = [[stable_hash(k) for k in keys], [[i for _, i in p] for p in parts]]
    assert hashes_in_a_new_process(1) == here
    assert hashes_in_a_new_process(2) == here


def test_equal_keys_go_to_the_same_replica():
    """1 == 1.0 == True and -1 == -1.0: equal keys are one group, so they must meet (Python's
    own hash gives -1.0 the hash -2, and reduces large numbers modulo 2**61 - 1)."""
    for equal in ([1, 1.0, True], [-1, -1.0], [0, 0.0, False], [2 ** 62, float(2 ** 62)], [-2 ** 70, -2.0 ** 70]):
        assert len({stable_hash(k) for k in equal}) == 1, equal
    stamped = partition_timestamped([(1, "a"), (1.0, "b"), (True, "c")], [1, 2, 3], 3)
    assert sorted(len(items) for items, _ in stamped) == [0, 0, 3]
