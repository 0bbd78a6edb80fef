"""A job graph as segment backup sees it: its blocks as a :class:`segments.Topology`,
with the connectors the user chose (``--connectors``) or segflow's default.

``auto`` uses the connectors ``segflow plan --segment-backup`` chose for the job (the cost
model's choice, recorded beside its state) when the record was made for this pipeline's
layout. Otherwise it follows the rule: the sources, the sinks and every block fed by a
keyed exchange: such a block holds keyed state, which is the dearest part to recompute,
and the exchange is where a replay would otherwise cross the network twice. ``none``
keeps only what must be a connector (sources and sinks: plain asynchronous barrier
snapshots).
"""
from __future__ import annotations

from ..plan.graph import JobGraph, Strategy
from ..plan.signature import layout, layout_difference
from .segments import SegmentBackupError, Topology


def block_names(graph: JobGraph) -> dict[int, str]:
    return {b.id: f"block {b.id} ({b.label})" for b in graph.blocks}


def required_connectors(graph: JobGraph) -> set[int]:
    """Sources and sinks: a restore starts from their windows and commits."""
    fed = {e.dst for e in graph.edges}
    feeding = {e.src for e in graph.edges}
    return {b.id for b in graph.blocks if b.id not in fed or b.id not in feeding}


def _named(graph: JobGraph, name: str) -> int:
    text = name.strip()
    digits = text[1:] if text[:1] == "b" and text[1:].isdigit() else text
    if digits.isdigit() and int(digits) < len(graph.blocks):
        return int(digits)
    matches = [b.id for b in graph.blocks if any(op.name == text for op in b.operators)]
    if len(matches) == 1:
        return matches[0]
    known = "; ".join(f"{b.id}: {b.label}" for b in graph.blocks)
    why = "names several blocks" if matches else "is no block id or operator name of this job"
    raise SegmentBackupError(f"connector {name!r} {why}; give block ids as `segflow plan` shows them ({known})")


def choose_connectors(graph: JobGraph, spec: str) -> frozenset[int]:
    """``auto``, ``none`` or a comma-separated list of block ids / operator names (the
    sources and sinks are added: they are always connectors)."""
    chosen = required_connectors(graph)
    spec = (spec or "auto").strip()
    if spec == "auto":
        chosen |= {e.dst for e in graph.edges if e.strategy is Strategy.HASH}
    elif spec != "none":
        chosen |= {_named(graph, name) for name in spec.split(",") if name.strip()}
    return frozenset(chosen)


def auto_connectors(graph: JobGraph, recorded: dict | None) -> tuple[frozenset[int], str]:
    """``auto``'s connectors given the recorded choice (None: none recorded), and a
    sentence saying which chose them (for the log, the status and the web view)."""
    differs = layout_difference(recorded.get("layout", {}), layout(graph)) if recorded is not None else ""
    if recorded is not None and not differs:
        chosen = frozenset(int(b) for b in recorded.get("connectors", [])) | required_connectors(graph)
        return chosen, (f"connectors {sorted(chosen)}: the cost model's choice, recorded by segflow plan "
                        f"--segment-backup at {recorded.get('time', '?')}")
    why = (f"the cost model's recorded choice was made for another pipeline: {differs}" if differs else
           "sources, sinks, blocks after a keyed exchange; segflow plan --segment-backup --state ... records "
           "the cost model's choice instead")
    rule = choose_connectors(graph, "auto")
    return rule, f"connectors {sorted(rule)}: the auto rule ({why})"


def segment_topology(graph: JobGraph, spec: str) -> Topology:
    """The job as segment backup runs it, with the connectors ``spec`` chooses, checked:
    what the coordinator builds on, and what ``segflow run`` checks before it starts any
    process."""
    return job_topology(graph, choose_connectors(graph, spec))


def job_topology(graph: JobGraph, connectors: frozenset[int] | set[int]) -> Topology:
    """Checked: refuses loops and non-connector sources or sinks, naming the blocks."""
    return Topology.of([b.id for b in graph.blocks], sorted({(e.src, e.dst) for e in graph.edges}),
                       connectors, block_names(graph))
