"""Finding a cycle in a directed graph, for checks that must name one (import layers,
topologies that segment backup refuses)."""
from __future__ import annotations

from typing import Hashable, Iterable, Mapping


def find_cycle(successors: Mapping[Hashable, Iterable[Hashable]]) -> list | None:
    """A cycle as ``[a, b, ..., a]``, or None; nodes are visited in sorted-by-insertion order."""
    state: dict = {}
    stack: list = []

    def visit(node: Hashable) -> list | None:
        state[node] = 1
        stack.append(node)
        for nxt in successors.get(node, ()):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in successors:
        if node not in state and (found := visit(node)):
            return found
    return None
