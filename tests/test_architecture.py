"""The package's layers point one way (issue 14): no import cycles between modules of ``mrtpo_sdk``, nothing under
``trainer/`` but its command line (``trainer/cli.py``) imports the authoring tools or a command line, and
``mrtpo_sdk/cli.py`` only dispatches to the subsystems' own ``cli`` modules.

The import graph is read from the syntax tree (every ``import`` statement, also those inside functions; not those
under ``if TYPE_CHECKING:``). Importing a submodule is an edge to that submodule only, not to its parent packages.
"""

from __future__ import annotations

import ast
from pathlib import Path

import mrtpo_sdk

ROOT = Path(mrtpo_sdk.__file__).parent



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
    found = [sorted(c) for c in cycles(import_graph())]
    assert found == [], f"import cycles between modules of mrtpo_sdk: {found}"


def _is_cli(module: str) -> bool:
    return module == "mrtpo_sdk.cli" or module.endswith(".cli")


def test_trainer_does_not_import_authoring_or_cli():
    graph = import_graph()
    bad = {
        m: sorted(t for t in targets if t.startswith("mrtpo_sdk.authoring") or _is_cli(t))
        for m, targets in graph.items()
        if m.startswith("mrtpo_sdk.trainer") and m != "mrtpo_sdk.trainer.cli"  # the train subcommand: CLI layer
    }
    assert {m: t for m, t in bad.items() if t} == {}


#: What ``mrtpo_sdk/cli.py`` may define: the dispatcher, its one-line error, ``--debug`` and the console script.
DISPATCHER_DEFINITIONS = {"main", "_error", "_debug_requested", "entrypoint"}
#: The modules of ``mrtpo_sdk`` it may import besides the subsystems' ``cli`` modules (the version for
#: ``--version``, the error class it prints, "did you mean", and the presets it re-exports).
DISPATCHER_IMPORTS = {"mrtpo_sdk", "mrtpo_sdk.errors", "mrtpo_sdk._argparse", "mrtpo_sdk.policy.presets"}


def test_cli_only_dispatches():
    tree = ast.parse((ROOT / "cli.py").read_text(encoding="utf-8"))
    defined = {
        node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    assert defined <= DISPATCHER_DEFINITIONS, f"mrtpo_sdk/cli.py defines {sorted(defined - DISPATCHER_DEFINITIONS)}"
    imported = import_graph()["mrtpo_sdk.cli"]
    others = sorted(t for t in imported if t not in DISPATCHER_IMPORTS and not _is_cli(t))
    assert others == [], f"mrtpo_sdk/cli.py imports {others}; it only dispatches to the subsystems' cli modules"
    subcommands = {t for t in imported if _is_cli(t)}
    assert {"mrtpo_sdk.trainer.cli", "mrtpo_sdk.lint.cli", "mrtpo_sdk.authoring.cli"} <= subcommands


def test_instruction_registry_is_a_leaf():
    graph = import_graph()
    assert {t for t in graph["mrtpo_sdk.instructions._registry"] if t.startswith("mrtpo_sdk.instructions")} == set()
