"""The passes that leave a job graph with fewer blocks, run once when the graph is
complete, before anything plans, runs or shows it (every process that builds the job
runs them, so block ids agree)."""
from __future__ import annotations

from .graph import JobGraph
from .passthrough import elide_pass_through_blocks
from .source_chain import chain_into_sources


def compact(graph: JobGraph) -> None:
    """Pass-through blocks out first: a source followed by an empty block then reaches the
    block after it, which may chain into the source.

    Runs once per graph: a second pass could chain one block further (the source's new
    successor), and a process that ran it twice, as ``env.execute`` after the job loader,
    would number blocks unlike the workers that ran it once."""
    if graph.compacted:
        return
    elide_pass_through_blocks(graph)
    chain_into_sources(graph)
    graph.compacted = True
