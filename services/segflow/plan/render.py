"""Human-readable views of an execution plan: text for terminals, DOT for Graphviz."""
from __future__ import annotations

from .placement import ExecutionPlan


def _placement(plan: ExecutionPlan, block_id: int) -> str:
    counts: dict[str, int] = {}
    for replica in plan.replica_ids(block_id):
        worker = plan.placement[replica]
        counts[worker] = counts.get(worker, 0) + 1
    return ", ".join(f"{w}×{n}" for w, n in counts.items())


def _edge_label(plan: ExecutionPlan, index: int) -> str:
    edge = plan.graph.edges[index]
    label = plan.resolved[index].value
    extras = []
    if edge.port:
        extras.append(f"port {edge.port}")
    if edge.feedback:
        extras.append("feedback")
    if edge.replay:
        extras.append("side input, replayed")
    return label + (f" ({', '.join(extras)})" if extras else "")


def render_text(plan: ExecutionPlan, roles: dict[int, str] | None = None) -> str:
    """``roles``: a word on each block's part (segment backup: its segment, or connector)."""
    graph = plan.graph
    workers = ", ".join(f"{w.name} ({w.slots} slots)" for w in plan.workers)
    lines = [f"job graph: {len(graph.blocks)} blocks, {len(graph.edges)} edges; workers: {workers}", ""]
    for block in graph.blocks:
        kind = "source block" if block.is_source else "block"
        tags = [roles[block.id]] if roles and block.id in roles else []
        if block.scope is not None:
            tags.append(f"iteration scope {block.scope}")
        if block.max_parallelism:
            tags.append(f"max parallelism {block.max_parallelism}")
        tags.append(f"batch {block.batch_mode}")
        lines.append(f"{kind} {block.id}: {plan.replicas[block.id]} replica(s) on {_placement(plan, block.id)}"
                     f"  [{'; '.join(tags)}]")
        for op in block.operators:
            lines.append(f"    {op.name}    ({op.location})")
        for index, edge in enumerate(graph.edges):
            if edge.src == block.id:
                lines.append(f"  --{_edge_label(plan, index)}--> block {edge.dst} (input {edge.dst_input})")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _record_escape(text: str) -> str:
    """A field of a record label: braces, bars and angle brackets are its syntax (``<f>``
    names a port), so operator names like ``map(<lambda>)`` need them escaped."""
    return "".join("\\" + c if c in "{}|<>" else c for c in _dot_escape(text))


def render_dot(plan: ExecutionPlan) -> str:
    graph = plan.graph
    lines = ["digraph segflow {", "  rankdir=LR;", '  node [shape=record, fontname="monospace"];']
    for block in graph.blocks:
        ops = "\\l".join(_record_escape(op.name) for op in block.operators) or "(pass)"
        head = f"block {block.id} × {plan.replicas[block.id]}"
        lines.append(f'  b{block.id} [label="{{{head}|{ops}\\l}}"];')
    for index, edge in enumerate(graph.edges):
        style = ", style=dashed" if edge.feedback else ""
        lines.append(f'  b{edge.src} -> b{edge.dst} [label="{_dot_escape(_edge_label(plan, index))}"{style}];')
    lines.append("}")
    return "\n".join(lines) + "\n"
