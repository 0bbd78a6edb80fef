"""The plan as text and as Graphviz DOT (``segflow plan --format dot``): every block, its
replicas and placement, every edge with its resolved strategy, ports, feedback and
replayed side inputs; record labels escaped so any operator name renders."""
import re

import segflow
from segflow.cli.main import main
from segflow.plan.passthrough import elide_pass_through_blocks
from segflow.plan.placement import Worker, plan
from segflow.plan.render import render_dot, render_text

JOB = '''
def build(env, table="5"):
    side = env.from_iterable([(i, i) for i in range(int(table))])
    state, last = env.from_parallel(lambda i, n: []).iterate(
        2, 0, lambda s, st: s.join(side, lambda r: r, lambda t: t[0]).drop_key(), lambda d, x: d, lambda s, d: s)
    state.collect()
    last.max_parallelism(2).write_text('out|"{dir}"')
'''


def job_plan(tmp_path, workers):
    path = tmp_path / "job.py"
    path.write_text(JOB, encoding="utf-8")
    env = segflow.StreamEnvironment(parallelism=3, planning_only=True)
    namespace = {}
    exec(compile(JOB, str(path), "exec"), namespace)
    namespace["build"](env)
    elide_pass_through_blocks(env.graph)          # as segflow plan shows it
    return plan(env.graph, workers), str(path)


def test_text_shows_blocks_replicas_placement_and_edges(tmp_path):
    text = render_text(job_plan(tmp_path, [Worker("w2", 2), Worker("w1", 1)])[0])
    blocks = text.split("\n\n")
    assert blocks[0] == "job graph: 9 blocks, 10 edges; workers: w1 (1 slots), w2 (2 slots)"
    assert blocks[1].splitlines()[0] == \
        "source block 0: 1 replica(s) on w1×1  [max parallelism 1; batch adaptive(1024, 0.05s)]"
    start = next(b for b in blocks if "iterate.start" in b)
    assert start.splitlines()[0].startswith("block 3: 3 replica(s) on w1×1, w2×2  [iteration scope 1;")
    assert "  --hash--> block 4 (input 0)" in start
    assert "  --round-robin (port 1)--> block 8 (input 0)" in start   # through a pass-through block before
    leader = next(b for b in blocks if "iterate.leader" in b)
    assert "  --broadcast (port 1, feedback)--> block 3 (input 1)" in leader
    assert "  --round-robin--> block 6 (input 0)" in leader          # 1 replica -> 3: dealt out
    assert "--hash (side input, replayed)--> block 4 (input 1)" in text
    assert "--forward (feedback)--> block 3 (input 2)" in text
    assert re.search(r"block 8: 2 replica\(s\) on w1×1, w2×1  \[max parallelism 2;", text)
    assert re.search(r"    from_parallel    \(.*job\.py:4\)", text)


def record_fields(label):
    """The fields of a record label, split at its unescaped syntax characters."""
    assert not re.search(r'(?<!\\)[<>]', label), f"unescaped port syntax in {label!r}"
    return [f for f in re.split(r'(?<!\\)[{}|]', label) if f]


def test_dot_is_a_digraph_of_records_with_escaped_labels(tmp_path):
    dot = render_dot(job_plan(tmp_path, [Worker("w", 3)])[0])
    lines = dot.splitlines()
    assert lines[:3] == ["digraph segflow {", "  rankdir=LR;", '  node [shape=record, fontname="monospace"];']
    assert lines[-1] == "}"
    nodes = [re.fullmatch(r'  b(\d+) \[label="(.*)"\];', line) for line in lines if re.match(r"  b\d+ \[", line)]
    assert [int(m.group(1)) for m in nodes] == list(range(9))
    fields = [record_fields(m.group(2)) for m in nodes]
    assert fields[1] == ["block 1 × 1", r"join.key_right(build.\<lambda\>.\<lambda\>)\l"]
    assert fields[8] == ["block 8 × 2", r'write_text(out\|\"\{dir\}\")\l']
    assert fields[6] == ["block 6 × 3", r"(pass)\l"]
    edges = [line for line in lines if "->" in line]
    assert len(edges) == 10
    assert '  b5 -> b3 [label="broadcast (port 1, feedback)", style=dashed];' in edges
    assert '  b4 -> b3 [label="forward (feedback)", style=dashed];' in edges
    assert sum("dashed" in e for e in edges) == 2


def test_segflow_plan_format_dot(tmp_path, capsys):
    execution, path = job_plan(tmp_path, [Worker("local", 3)])
    assert main(["plan", path, "--format", "dot", "--parallelism", "3"]) == 0
    assert capsys.readouterr().out == render_dot(execution)
    assert main(["plan", path, "--parallelism", "3", "-p", "table=2"]) == 0
    assert capsys.readouterr().out == render_text(execution)
