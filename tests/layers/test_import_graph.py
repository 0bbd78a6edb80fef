"""The engine's packages form layers: no package imports one that imports it back, and the
lower layers never reach up. Inside a package, modules do not import each other in a circle
either, unless one import of the circle says why on its line (``# cycle: <why>``): a reader
then knows which file comes first and why the other one waits.

Read from the source (``ast``), so the test sees every import a module runs, including those
inside functions; imports under ``TYPE_CHECKING`` only name types and are left out."""
from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import pytest

from segflow.plan.cycles import find_cycle

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "services"
PACKAGE = "segflow"
GENERATED = {"segflow.v1"}
# Each source tree and its top package, for the module cycles (the layers are the engine's).
TREES = [(SERVICES, PACKAGE), (ROOT / "operator", "segflow_operator")]
# The comment that explains an import on a cycle; it needs a reason after the colon.
CYCLE_MARKER = re.compile(r"#\s*cycle:\s*\S")

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
    # each protocol's two sides: below the coordinator and the worker that look them up
    "segflow.protocols": {"segflow.errors", "segflow.redaction", "segflow.plan", "segflow.runtime",
                          "segflow.observability", "segflow.state", "segflow.checkpoint", "segflow.settings"},
}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(source: str, module: str, is_package: bool, known: set[str]) -> dict[str, bool]:
    """Each module of ``known`` that ``module`` imports, and whether every import of it is
    marked as closing a cycle. ``from pkg import mod`` imports ``pkg.mod``; ``from pkg import
    name`` imports ``pkg``."""
    lines = source.splitlines()
    marked: dict[str, bool] = {}

    def add(target: str, node: ast.stmt) -> None:
        if target != module and target in known:
            text = "\n".join(lines[node.lineno - 1:node.end_lineno])
            marked[target] = marked.get(target, True) and bool(CYCLE_MARKER.search(text))

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module.split(".")
                base = parts[: len(parts) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in known else target, node)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return marked


def _modules(tree: Path = SERVICES, package: str = PACKAGE) -> dict[str, dict[str, bool]]:
    sources: dict[str, tuple[str, bool]] = {}
    for path in sorted((tree / package).rglob("*.py")):
        parts = list(path.relative_to(tree).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        sources[".".join(parts[:-1] if is_package else parts)] = (path.read_text(), is_package)
    known = set(sources)
    return {module: _imports(source, module, is_package, known)
            for module, (source, is_package) in sources.items()}


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


def _reaches(graph: dict[str, dict[str, bool]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return False


def test_no_package_imports_itself_back():
    cycle = find_cycle({p: sorted(t) for p, t in sorted(_package_graph().items())})
    assert cycle is None, "package cycle: " + " -> ".join(cycle)


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_lower_layers_never_reach_up(package):
    reached = _package_graph().get(package, set()) - GENERATED
    assert reached <= LAYERS[package], f"{package} imports {sorted(reached - LAYERS[package])}"


@pytest.mark.parametrize("tree, package", TREES, ids=[package for _, package in TREES])
def test_no_module_imports_itself_back_unless_a_comment_says_why(tree, package):
    graph = _modules(tree, package)
    unmarked = {m: sorted(t for t, marked in targets.items() if not marked) for m, targets in sorted(graph.items())}
    cycle = find_cycle(unmarked)
    assert cycle is None, "module cycle: " + " -> ".join(cycle) + \
        ": break it, or say on one of its imports why it must be (# cycle: <why>)"


@pytest.mark.parametrize("tree, package", TREES, ids=[package for _, package in TREES])
def test_every_cycle_comment_is_on_a_cycle(tree, package):
    graph = _modules(tree, package)
    stale = [f"{m} -> {t}" for m, targets in graph.items() for t, marked in targets.items()
             if marked and not _reaches(graph, t, m)]
    assert not stale, f"'# cycle:' on imports that close no cycle: {stale}"


def test_an_import_is_marked_only_when_every_import_of_its_module_says_why():
    known = {"p.a", "p.b", "p.c", "p.d"}
    source = ("from .b import x  # cycle: b's factory returns an a\n"
              "from .c import y\n"
              "def f():\n"
              "    from .c import z  # cycle: why\n"
              "    from . import d  # cycle:\n")
    assert _imports(source, "p.a", False, known) == {"p.b": True, "p.c": False, "p.d": False}


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["x", "b"], "b": ["a"], "x": []}) == ["a", "b", "a"]
    assert find_cycle({"a": ["b"], "b": []}) is None
