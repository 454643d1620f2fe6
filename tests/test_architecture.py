"""The package's layers point one way (issue 14): no import cycles between modules of ``mrtpo_sdk``, and nothing
under ``trainer/`` imports the authoring tools or the command line.

The import graph is read from the syntax tree (every ``import`` statement, also those inside functions; not those
under ``if TYPE_CHECKING:``). Importing a submodule is an edge to that submodule only, not to its parent packages.
"""

from __future__ import annotations

import ast
from pathlib import Path

import mrtpo_sdk

ROOT = Path(mrtpo_sdk.__file__).parent

# Cycles that are known and wait for their fix: the compare matrix runs `mrtpo-sdk train` through
# mrtpo_sdk.cli.train_command (looked up at call time so that tests can replace it) until the train command moves
# to trainer/cli.py (issue 14, item 2).
KNOWN_CYCLES = [{"mrtpo_sdk.cli", "mrtpo_sdk.compare.cli", "mrtpo_sdk.compare.matrix"}]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ``mrtpo_sdk`` it imports (anywhere in the file)."""
    files = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        base = name if path.name == "__init__.py" else name.rpartition(".")[0]
        skip = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for stmt in node.body
            for n in ast.walk(stmt)
        }
        edges: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    pkg = base.split(".")
                    pkg = pkg[: len(pkg) - (node.level - 1)]
                    mod = ".".join(pkg + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                subs = [f"{mod}.{a.name}" for a in node.names]
                targets = subs if all(t in files for t in subs) else [mod, *subs]  # `from pkg import submodule`
            else:
                continue
            edges.update(t for t in targets if t in files and t != name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(comp)
    return out


def test_cycle_finder_sees_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [{"a", "b", "c"}]


def test_no_import_cycles():
    found = cycles(import_graph())
    new = [sorted(c) for c in found if c not in KNOWN_CYCLES]
    assert new == [], f"import cycles between modules of mrtpo_sdk: {new}"


def test_trainer_does_not_import_authoring_or_cli():
    graph = import_graph()
    bad = {
        m: sorted(t for t in targets if t.startswith("mrtpo_sdk.authoring") or t == "mrtpo_sdk.cli")
        for m, targets in graph.items()
        if m.startswith("mrtpo_sdk.trainer")
    }
    assert {m: t for m, t in bad.items() if t} == {}


def test_instruction_registry_is_a_leaf():
    graph = import_graph()
    assert {t for t in graph["mrtpo_sdk.instructions._registry"] if t.startswith("mrtpo_sdk.instructions")} == set()
