"""The package's layers point one way: no import cycles between modules of ``mrtpo_sdk``, nothing under
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


#: Calls that load a file as a module or run it (``importlib``, the SQL tests' ``load_module`` helper, ``runpy``).
FILE_LOADERS = {"spec_from_file_location", "spec_from_loader", "SourceFileLoader", "load_module", "load_source",
                "exec_module", "run_path", "run_module", "import_module", "module_from_spec"}


def benchmark_loads(source: str, filename: str = "<test>") -> list[str]:
    """The places in ``source`` that import a module of ``benchmarks/`` or load a file under it by path: an
    ``import benchmarks...`` statement, or a loader call (:data:`FILE_LOADERS`) whose arguments, or the values
    assigned in the file to a name among them, mention ``benchmarks``."""
    tree = ast.parse(source, filename)
    assigned: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        assigned.setdefault(name.id, []).append(ast.unparse(node.value))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{filename}:{node.lineno}: import {a.name}" for a in node.names
                      if a.name.split(".")[0] == "benchmarks"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "benchmarks" and not node.level:
            found.append(f"{filename}:{node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called not in FILE_LOADERS:
                continue
            args = [*node.args, *(k.value for k in node.keywords)]
            text = [ast.unparse(a) for a in args]
            text += [v for a in args for n in ast.walk(a) if isinstance(n, ast.Name) for v in assigned.get(n.id, [])]
            if any("benchmarks" in t for t in text):
                found.append(f"{filename}:{node.lineno}: {ast.unparse(node)[:100]}")
    return found


def test_benchmark_load_finder_finds_every_way_to_load_a_benchmark():
    loads = [
        'spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")',
        'battery = load_module(ROOT / "benchmarks" / "hostile_sql.py", "hostile_sql_battery")',
        'path = ROOT / "benchmarks" / "bfcl_fuzz.py"\nspec = importlib.util.spec_from_file_location("f", path)',
        'runpy.run_path("benchmarks/bfcl_fuzz.py")',
        "from benchmarks.bfcl_adversarial import load_examples",
        "import benchmarks.hostile_sql",
    ]
    assert all(len(benchmark_loads(src)) == 1 for src in loads), [src for src in loads if not benchmark_loads(src)]
    fine = [
        "from .adversarial_search import load_examples",
        'spec = importlib.util.spec_from_file_location("t", ROOT / "tasks" / "sql.py")',
        '"""The timed run is ``python benchmarks/bfcl_fuzz.py``."""',
    ]
    assert not any(benchmark_loads(src) for src in fine)


def test_no_test_loads_a_benchmark_script():
    """``benchmarks/`` holds performance benchmarks only: what a test needs from a benchmark (a battery,
    a generator) lives in an importable module of ``tests/`` that the benchmark imports, never the other way."""
    tests = Path(__file__).resolve().parent
    found = [
        hit
        for path in sorted(tests.rglob("*.py"))
        for hit in benchmark_loads(path.read_text(encoding="utf-8"), str(path.relative_to(tests.parent)))
    ]
    assert found == [], "tests that load a benchmark script (move what they need into tests/):\n" + "\n".join(found)
