"""The engine's packages form layers: no package imports one that imports it back, and the
lower layers never reach up (modules inside one package may import each other lazily). Read from the source (``ast``), so the test sees every import
a module runs, including those inside functions; imports under ``TYPE_CHECKING`` only
name types and are left out."""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

from segflow.plan.cycles import find_cycle

SERVICES = Path(__file__).resolve().parents[2] / "services"
PACKAGE = "segflow"
GENERATED = {"segflow.v1"}

# Each package may import only packages named here (besides itself); a new package or a new
# dependency must be placed here on purpose.
LAYERS = {
    "segflow.errors": set(),
    "segflow.redaction": set(),
    "segflow.extras": {"segflow.errors"},
    "segflow.plan": {"segflow.errors"},
    "segflow.state": {"segflow.errors", "segflow.redaction", "segflow.extras"},
    "segflow.observability": {"segflow.errors", "segflow.redaction"},
    "segflow.runtime": {"segflow.errors", "segflow.redaction", "segflow.extras", "segflow.plan",
                        "segflow.observability", "segflow.state"},
    "segflow.datagen": {"segflow.errors", "segflow.runtime"},   # Nexmark's watermark strategy
    "segflow.checkpoint": {"segflow.errors", "segflow.plan", "segflow.runtime", "segflow.state"},
    "segflow.settings": {"segflow.errors", "segflow.checkpoint"},
    "segflow.disaster": {"segflow.errors", "segflow.extras", "segflow.state", "segflow.observability"},
    "segflow.security": {"segflow.errors", "segflow.observability"},
}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" for a in node.names]
            found.update(n for n in [target, *names] if n.startswith(PACKAGE))
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith(PACKAGE))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _modules() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted((SERVICES / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SERVICES).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        graph[module] = _imports(ast.parse(path.read_text()), module, is_package)
    known = set(graph)
    return {m: {t for t in targets if t in known and t != m} for m, targets in graph.items()}


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _package_graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for module, targets in _modules().items():
        if module == PACKAGE:            # the facade re-exports the public API: it is the top
            continue
        for target in targets:
            a, b = _package(module), _package(target)
            if a != b and b != PACKAGE:
                edges[a].add(b)
    return edges


def test_no_package_imports_itself_back():
    cycle = find_cycle({p: sorted(t) for p, t in sorted(_package_graph().items())})
    assert cycle is None, "package cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_lower_layers_never_reach_up(package):
    reached = _package_graph().get(package, set()) - GENERATED
    assert reached <= LAYERS[package], f"{package} imports {sorted(reached - LAYERS[package])}"


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["x", "b"], "b": ["a"], "x": []}) == ["a", "b", "a"]
    assert find_cycle({"a": ["b"], "b": []}) is None
