"""What a snapshot's state is laid out by, so that a restore can tell a changed pipeline.

A replica's snapshot holds its operators' states in chain order and its inputs' states by
input index; a restore hands them back by position. A pipeline edited since the snapshot
(an operator added to a chain, a shuffle moved) would give one operator's state to
another, and a sink's pending output to a map: output lost, silently. So every checkpoint
records the pipeline's *layout* (per block, the kinds of its operators; the edges between
blocks) and a restore refuses one whose layout differs, naming the first difference.

Kinds leave out what operators are called with (functions, window sizes, paths): a
changed function body or window size reads the old state as the new code sees fit, as a
restored job would after any code change.
"""
from __future__ import annotations

import re

from .graph import JobGraph

_ARGUMENTS = re.compile(r"\([^()]*\)")


def operator_kind(name: str) -> str:
    """An operator's name as ``segflow plan`` shows it, without its arguments:
    ``event_time_window(100, 100).count`` -> ``event_time_window.count``."""
    while True:
        bare = _ARGUMENTS.sub("", name)
        if bare == name:
            return bare
        name = bare


def layout(graph: JobGraph) -> dict:
    """The pipeline's layout, as JSON-able data stored with each checkpoint."""
    return {"blocks": [[operator_kind(op.name) for op in block.operators] for block in graph.blocks],
            "edges": sorted([e.src, e.dst, e.dst_input, e.port, e.strategy.value] for e in graph.edges)}


def layout_difference(stored: dict, current: dict) -> str:
    """How the pipeline ``current`` differs from ``stored`` (``layout``'s output), as a
    sentence for the user; empty when a snapshot of one restores into the other."""
    before, now = stored.get("blocks", []), current["blocks"]
    if len(before) != len(now):
        return f"it had {len(before)} blocks, this pipeline has {len(now)}" + _rechained(stored, now)
    for block, (old, new) in enumerate(zip(before, now)):
        if old != new:
            return f"its block {block} chained {' -> '.join(old) or '(nothing)'}; this pipeline's block {block} " \
                   f"chains {' -> '.join(new) or '(nothing)'}"
    if stored.get("edges", []) != current["edges"]:
        return "its blocks were connected differently (shuffles, joins or splits moved)"
    return ""


def _rechained(stored: dict, now: list[list[str]]) -> str:
    """A hint when ``stored`` is ``now`` with each source's block split from the block
    after it: an earlier segflow's checkpoint (this one runs the operators after a source
    in the source's block)."""
    before = stored.get("blocks", [])
    fed = {edge[1] for edge in stored.get("edges", [])}
    i = 0
    for chain in now:
        if i < len(before) and before[i] == chain:
            i += 1
        elif i + 1 < len(before) and i not in fed and before[i] + before[i + 1] == chain:
            i += 2
        else:
            return ""
    if i != len(before):
        return ""
    return ("; the same operators with each source's block apart from the block after it: an earlier segflow "
            "took it (this one runs them in one block), and only such a segflow restores it")
