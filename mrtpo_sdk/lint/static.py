"""The syntax-tree side of the linter: source files, suppression comments, verifier sites and block templates.

A *block template* is what the code of a verifier says its block will be, read from the syntax tree: the literal
text of the block expression, with :data:`~mrtpo_sdk.lint.text.PLACEHOLDER` where a part is computed (an f-string
field, a call, a parameter). ``f"{FORMAT_RULE} This response has {answer.error}."`` becomes
``"The answer is one SQLite query ... This response has \\x00."`` (module constants are resolved, and so are calls
of functions defined in the same file with a single ``return``).
"""

from __future__ import annotations

import ast
import io
import itertools
import re
import tokenize
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .text import PLACEHOLDER

__all__ = [
    "SourceFile",
    "Segment",
    "BlockSite",
    "VerifierSite",
    "source_file",
    "verifier_function",
    "block_sites",
    "blocks_used",
]

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?", re.I)
_FILE_NOQA = re.compile(r"#\s*mrtpo-sdk\s*:\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?", re.I)
_MAX_ALTERNATIVES = 16
_MAX_DEPTH = 4


@dataclass
class SourceFile:
    """One parsed Python file.

    Attributes:
        path: the file.
        text: its source.
        tree: its syntax tree (``None`` when it does not parse).
        noqa: line (1-based) -> codes suppressed on that line (empty set = every code, a bare ``# noqa``);
            read from the comments on first use.
        file_noqa: codes suppressed in the whole file (``# mrtpo-sdk: noqa: MRT003``); empty set = every code;
            ``None`` when the file has no such comment.
    """

    path: Path
    text: str
    tree: ast.Module | None
    _noqa: dict[int, set[str]] | None = None
    _file_noqa: set[str] | None = None
    constants: dict[str, ast.expr] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)

    @property
    def noqa(self) -> dict[int, set[str]]:
        if self._noqa is None:
            self._noqa = {}
            _read_comments(self)
        return self._noqa

    @property
    def file_noqa(self) -> set[str] | None:
        self.noqa  # noqa: B018 - reads the comments once
        return self._file_noqa

    def suppressed(self, code: str, lines: set[int]) -> bool:
        """True when ``code`` is suppressed in the file or by a ``# noqa`` on one of ``lines``."""
        return self.suppressed_by(code, lines) is not None

    def suppressed_by(self, code: str, lines: set[int]) -> int | None:
        """What suppresses ``code`` on ``lines``: ``0`` for the file-level comment, the line of the ``# noqa``
        comment, or ``None`` when nothing does."""
        if self.file_noqa is not None and (not self.file_noqa or code in self.file_noqa):
            return 0
        for line in sorted(lines):
            codes = self.noqa.get(line)
            if codes is not None and (not codes or code in codes):
                return line
        return None


def _read_comments(src: "SourceFile") -> None:
    text = src.text
    assert src._noqa is not None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type != tokenize.COMMENT:
                continue
            m = _FILE_NOQA.match(tok.string)
            if m:
                codes = _codes(m.group("codes"))
                if src._file_noqa is None:
                    src._file_noqa = codes
                elif src._file_noqa and codes:
                    src._file_noqa |= codes
                else:
                    src._file_noqa = set()
                continue
            m = _NOQA.search(tok.string)
            if m:
                line = tok.start[0]
                codes = _codes(m.group("codes"))
                prev = src._noqa.get(line)
                src._noqa[line] = set() if (prev is not None and not prev) or not codes else (prev or set()) | codes
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass


def _codes(group: str | None) -> set[str]:
    return {c.strip().upper() for c in group.split(",")} if group else set()


@lru_cache(maxsize=256)
def _parse(path_str: str, mtime: float) -> SourceFile:
    path = Path(path_str)
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        tree: ast.Module | None = ast.parse(text, filename=path_str)
    except SyntaxError:
        tree = None
    src = SourceFile(path=path, text=text, tree=tree)
    if tree is not None:
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                src.constants[node.targets[0].id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                src.constants[node.target.id] = node.value
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                src.functions[node.name] = node
    return src


def source_file(path: str | Path) -> SourceFile | None:
    """The parsed file at ``path`` (cached by modification time), or ``None`` when it cannot be read."""
    p = Path(path)
    try:
        return _parse(str(p.resolve()), p.stat().st_mtime)
    except OSError:
        return None


def verifier_function(fn: Any) -> tuple[SourceFile, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """The source file and ``def`` node of a verifier's wrapped function, or ``None`` (lambda, builtin, no source)."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_name == "<lambda>":
        return None
    src = source_file(code.co_filename)
    if src is None or src.tree is None:
        return None
    for node in ast.walk(src.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name:
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            if first == code.co_firstlineno or node.lineno == code.co_firstlineno:
                return src, node
    return None


@dataclass(frozen=True)
class Segment:
    """A piece of a block template: literal ``text`` (with the node it comes from), or a computed part."""

    text: str | None  # None = computed (placeholder)
    node: ast.AST | None = None
    file: Path | None = None


@dataclass
class BlockSite:
    """One place where a verifier builds its block: a ``Result(...)`` call or a returned ``(reward, block)`` pair.

    Attributes:
        node: the call / return node.
        alternatives: the possible templates of the block (one per ``if``-expression branch), each a segment list;
            an empty list of segments is the empty block ``""``.
    """

    node: ast.AST
    alternatives: list[list[Segment]]

    @staticmethod
    def render(segments: list[Segment]) -> str:
        return "".join(s.text if s.text is not None else PLACEHOLDER for s in segments)

    def literal_only(self) -> bool:
        """True when every non-empty alternative is fully literal (no computed part) and one is non-empty."""
        nonempty = [a for a in self.alternatives if self.render(a)]
        return bool(nonempty) and all(all(s.text is not None for s in a) for a in nonempty)


@dataclass
class VerifierSite:
    """Where findings about verifier ``k`` are reported, and what its code says.

    Attributes:
        path, line, col: the report location in the task file (the ``def`` name when the verifier is defined
            there, else its entry in ``Task(verifiers=[...])``, else the ``Task(...)`` call); 1-based.
        header_lines: lines whose ``# noqa`` covers the verifier's findings (decorators and the ``def`` line).
        function: the verifier's ``def`` node and its file, when the source is available.
        blocks: the verifier's :class:`BlockSite` s (empty when the source is unavailable).
    """

    path: Path
    line: int
    col: int
    header_lines: set[int]
    function: tuple[SourceFile, ast.FunctionDef | ast.AsyncFunctionDef] | None = None
    blocks: list[BlockSite] = field(default_factory=list)

    @property
    def in_task_file(self) -> bool:
        return self.function is not None and self.function[0].path.resolve() == self.path.resolve()


def _result_call_block(node: ast.Call) -> ast.expr | None | bool:
    """The block argument of a ``Result(...)`` call; ``None`` when omitted (""), ``False`` when not a Result call."""
    func = node.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name != "Result":
        return False
    if len(node.args) >= 2:
        return node.args[1]
    for kw in node.keywords:
        if kw.arg == "block":
            return kw.value
    return None


class _Resolver:
    def __init__(self, src: SourceFile, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.src = src
        self.fn = fn
        self.locals: dict[str, list[ast.expr]] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.locals.setdefault(t.id, []).append(node.value)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
                self.locals.setdefault(node.target.id, []).append(node.value)  # type: ignore[arg-type]
        self.params = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}

    def seg(self, text: str | None, node: ast.AST | None) -> Segment:
        return Segment(text, node, self.src.path)

    def resolve(self, expr: ast.expr | None, depth: int = 0) -> list[list[Segment]]:
        if expr is None:
            return [[]]
        if depth > _MAX_DEPTH:
            return [[self.seg(None, expr)]]
        if isinstance(expr, ast.Constant):
            return (
                [[self.seg(expr.value, expr)]]
                if isinstance(expr.value, str) and expr.value
                else ([[]] if expr.value == "" else [[self.seg(None, expr)]])
            )
        if isinstance(expr, ast.JoinedStr):
            parts: list[list[list[Segment]]] = []
            for v in expr.values:
                if isinstance(v, ast.Constant):
                    parts.append([[self.seg(str(v.value), expr)]])
                elif isinstance(v, ast.FormattedValue) and v.format_spec is None and v.conversion == -1:
                    parts.append(self.resolve(v.value, depth + 1))
                else:
                    parts.append([[self.seg(None, v)]])
            return _product(parts)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return _product([self.resolve(expr.left, depth + 1), self.resolve(expr.right, depth + 1)])
        if isinstance(expr, ast.BoolOp):  # `errors and f"..."`: either operand may be the value
            alts = []
            for v in expr.values:
                alts.extend(self.resolve(v, depth + 1))
            return alts[:_MAX_ALTERNATIVES]
        if isinstance(expr, ast.IfExp):
            return (self.resolve(expr.body, depth + 1) + self.resolve(expr.orelse, depth + 1))[:_MAX_ALTERNATIVES]
        if isinstance(expr, ast.Name):
            if expr.id in self.params:
                return [[self.seg(None, expr)]]
            if expr.id in self.locals:
                values = self.locals[expr.id]
                if len(values) == 1:
                    return self.resolve(values[0], depth + 1)
                alts: list[list[Segment]] = []
                for v in values[:4]:
                    alts.extend(self.resolve(v, depth + 1))
                return alts[:_MAX_ALTERNATIVES]
            if expr.id in self.src.constants:
                return _Resolver(self.src, self.fn).resolve(self.src.constants[expr.id], depth + 1)
            return [[self.seg(None, expr)]]
        if isinstance(expr, ast.Call):
            func = expr.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "format"
                and isinstance(func.value, ast.Constant)
                and isinstance(func.value.value, str)
            ):
                text = re.sub(r"\{[^{}]*\}", PLACEHOLDER, func.value.value)
                segs = [self.seg(p, func.value) if p else None for p in re.split(f"({PLACEHOLDER})", text)]
                return [[s if s is not None and s.text != PLACEHOLDER else self.seg(None, expr) for s in segs if s]]
            if isinstance(func, ast.Name) and func.id in self.src.functions and func.id != self.fn.name:
                callee = self.src.functions[func.id]
                returns = [n.value for n in ast.walk(callee) if isinstance(n, ast.Return) and n.value is not None]
                if returns:
                    sub = _Resolver(self.src, callee)
                    alts = []
                    for r in returns[:4]:
                        alts.extend(sub.resolve(r, depth + 1))
                    return alts[:_MAX_ALTERNATIVES]
        return [[self.seg(None, expr)]]


def _product(parts: list[list[list[Segment]]]) -> list[list[Segment]]:
    out = []
    for combo in itertools.islice(itertools.product(*parts), _MAX_ALTERNATIVES):
        out.append([s for p in combo for s in p])
    return out or [[]]


def block_sites(src: SourceFile, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[BlockSite]:
    """The places where ``fn`` (defined in ``src``) builds its block, with their templates."""
    res = _Resolver(src, fn)
    sites: list[BlockSite] = []
    for node in ast.walk(fn):
        expr: Any = False
        if isinstance(node, ast.Call):
            expr = _result_call_block(node)
        elif isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 2:
            expr = node.value.elts[1]
        if expr is False:
            continue
        site = BlockSite(node=node, alternatives=res.resolve(expr))
        sites.append(site)
    return sorted(sites, key=lambda s: (s.node.lineno, s.node.col_offset))  # type: ignore[attr-defined]


def blocks_used(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    verifier_names: set[str],
    groups: dict[str, set[str]] | None = None,
) -> list[tuple[str, ast.AST]]:
    """Uses of another verifier's block inside ``fn``; returns ``(verifier name, .block node)`` pairs (a node that
    may be the block of several verifiers gives one pair per verifier).

    Found: ``other(example, completion).block`` and ``other.score(...).block``; ``r.block`` where
    ``r = other(...)``; loops and comprehensions over verifiers (``for check in (a, b): check(...).block``,
    ``" ".join(r.block for r in results)`` with ``results = [check(...) for check in (a, b)]``, ``results[0].block``).
    ``groups`` maps names of module-level collections of verifiers (``CHECKS = [a, b]``) to the names they hold.
    """
    groups = groups or {}
    loop_vars: dict[str, set[str]] = {}  # a name bound to one of these verifiers
    results: dict[str, set[str]] = {}  # a name bound to the result of one of these verifiers
    result_lists: dict[str, set[str]] = {}  # a name bound to a collection of their results

    def verifiers_of(expr: ast.AST | None) -> set[str]:
        if isinstance(expr, ast.Name):
            if expr.id in verifier_names:
                return {expr.id}
            return loop_vars.get(expr.id) or groups.get(expr.id) or set()
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
            return set().union(*(verifiers_of(e) for e in expr.elts)) if expr.elts else set()
        if isinstance(expr, ast.Starred):
            return verifiers_of(expr.value)
        return set()

    def result_of(expr: ast.AST | None) -> set[str]:
        """Verifiers whose result ``expr`` may be."""
        if isinstance(expr, ast.Call):
            func = expr.func
            if isinstance(func, ast.Attribute) and func.attr == "score":
                return verifiers_of(func.value)
            return verifiers_of(func)
        if isinstance(expr, ast.Name):
            return results.get(expr.id, set())
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name):
            return result_lists.get(expr.value.id, set())
        return set()

    def results_in(expr: ast.AST | None) -> set[str]:
        """Verifiers whose results the collection ``expr`` may hold."""
        if isinstance(expr, ast.Name):
            return result_lists.get(expr.id, set())
        if isinstance(expr, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return result_of(expr.elt)
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
            return set().union(*(result_of(e) for e in expr.elts)) if expr.elts else set()
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in {"list", "tuple"}:
            return results_in(expr.args[0]) if expr.args else set()
        return set()

    def bind(target: ast.AST, names: set[str], table: dict[str, set[str]]) -> bool:
        if names and isinstance(target, ast.Name) and not names <= table.get(target.id, set()):
            table[target.id] = table.get(target.id, set()) | names
            return True
        return False

    nodes = list(ast.walk(fn))
    for _ in range(_MAX_DEPTH):  # a few passes: a binding may depend on one made later in the walk
        changed = False
        for node in nodes:
            loops: list[tuple[ast.AST, ast.AST]] = []
            if isinstance(node, (ast.For, ast.AsyncFor)):
                loops.append((node.target, node.iter))
            elif isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp)):
                loops.extend((g.target, g.iter) for g in node.generators)
            for target, it in loops:
                changed |= bind(target, verifiers_of(it), loop_vars)
                changed |= bind(target, results_in(it), results)
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    changed |= bind(t, result_of(node.value), results)
                    changed |= bind(t, results_in(node.value), result_lists)
        if not changed:
            break
    found = []
    for node in nodes:
        if isinstance(node, ast.Attribute) and node.attr == "block":
            for name in sorted(result_of(node.value)):
                found.append((name, node))
    return found
