"""Choosing segment backup's connectors in a real job graph, and the refusals that name
what to change (pure: graphs are built, not run)."""
import subprocess
import sys

import pytest

import segflow
from segflow.checkpoint.connectors import choose_connectors, job_topology
from segflow.checkpoint.segments import SegmentBackupError, segments
from support.processes import ROOT


def graph_of(build):
    env = segflow.StreamEnvironment(planning_only=True)
    build(env)
    return env.graph


def counts(env):
    (env.from_iterable(range(10)).map(lambda x: x + 1)
        .group_by(lambda x: x % 3).reduce(lambda a, b: a + b)
        .unkey().shuffle().map(str).collect())


def test_auto_takes_sources_sinks_and_blocks_behind_a_keyed_exchange():
    graph = graph_of(counts)
    keyed = [e.dst for e in graph.edges if e.strategy.value == "hash"]
    assert choose_connectors(graph, "auto") == {0, len(graph.blocks) - 1, *keyed}
    assert choose_connectors(graph, "none") == {0, len(graph.blocks) - 1}
    assert choose_connectors(graph, "b1") == {0, 1, len(graph.blocks) - 1}
    topology = job_topology(graph, choose_connectors(graph, "auto"))
    assert all(s.upstream and s.downstream for s in segments(topology))


def test_connectors_are_named_by_block_id_or_by_a_unique_operator_name():
    graph = graph_of(counts)
    reduce_block = next(b.id for b in graph.blocks if any(op.name.startswith("reduce") for op in b.operators))
    name = next(op.name for op in graph.blocks[reduce_block].operators if op.name.startswith("reduce"))
    assert reduce_block in choose_connectors(graph, name)
    with pytest.raises(SegmentBackupError, match=r"connector 'nine' is no block id .* \(0: "):
        choose_connectors(graph, "nine")
    with pytest.raises(SegmentBackupError, match="connector '99' is no block id"):
        choose_connectors(graph, "1,99")


LOOP = ("def build(env):\n"
        "    out, _ = env.from_iterable(range(5)).iterate(3, 0, lambda s, st: s.map(lambda x: x + 1),"
        " lambda a, x: a, lambda s, a: s)\n"
        "    out.collect()\n")
LINE = "def build(env):\n    env.from_iterable(range(5)).map(lambda x: x + 1).collect()\n"


@pytest.mark.parametrize("source, extra, reasons", [
    (LOOP, (), ["segment backup needs an acyclic job, but these blocks form a loop: block",
                "run iterations with the aligned protocol"]),
    (LINE, ("--connectors", "7"), ["connector '7' is no block id or operator name of this job",
                                   "(0: from_iterable"]),
], ids=["loop", "unknown-connector"])
def test_a_job_segment_backup_cannot_serve_is_refused_before_any_process_starts(tmp_path, source, extra, reasons):
    """Said as the reason, not as a coordinator that did not start (which is how the
    coordinator's own check would reach the user, a second later)."""
    job = tmp_path / "job.py"
    job.write_text(source)
    result = subprocess.run([sys.executable, "-m", "segflow.cli.main", "run", str(job), "--parallelism", "2",
                             "--checkpoint-protocol", "segment", "--state", f"file://{tmp_path}/s", "--quiet", *extra],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    for reason in reasons:
        assert reason in result.stderr, result.stderr
    assert "coordinator" not in result.stderr, result.stderr
