"""MRT009 verifier-error."""

from __future__ import annotations

import ast
import re
import traceback
from collections.abc import Iterator
from pathlib import Path

from ...errors import VerifierContractError, VerifierError
from ..model import Finding, Rule, TaskContext
from ._common import node_location


class VerifierErrorRule(Rule):
    """## What it does
    Flags a verifier that raises, or breaks the verifier contract (several rewards, a non-finite reward, a
    non-string block), on one of the probe completions: the reference completion, the empty string, the
    reference with its fences/tags stripped, its first half, another example's reference, or a probe the task
    file declares (``lint_probes(example)`` / ``PROBES``). The finding names the verifier, the example and the
    probe, and points at the line that raised, or at the statement that wrote into the example, when that line
    is in the task file (else at the verifier's ``def``); the linter goes on with the other verifiers and files.

    ## Why is this bad?
    Model output is untrusted: early in training the policy produces empty answers, unclosed fences and
    answers for the wrong question. A verifier that raises on them stops the training run (the trainer surfaces
    verifier errors instead of scoring them 0), and a verifier that returns ``None`` for "wrong" hides a
    genuine zero reward from the group statistics.

    ## Example
    ```python
    @verifier(kind="feedback")
    def executes(example, completion):
        query = completion.split("```sql")[1].split("```")[0]     # IndexError on an answer without a fence
        run = execute_sql(example.db_path, query)
        return Result(float(run.ok), run.error)

    @verifier(kind="reference")                                   # BFCL tool calls
    def call_match(example, completion):
        call = json.loads(completion)                             # JSONDecodeError on free text
        return Result(float(call == example.ground_truth), render_call(example.ground_truth))
    ```

    Instruction following: a language constraint calling ``langdetect.detect(completion)``, which raises on an
    empty or digits-only response.

    ## Use instead
    Parse defensively and score a malformed answer as a genuine 0:

    ```python
    @verifier(kind="feedback")
    def executes(example, completion):
        answer = extract_sql(completion)            # never raises
        if not answer.ok:
            return Result(0.0, "")
        run = execute_sql(example.db_path, answer.query)
        return Result(float(run.ok), run.error)
    ```

    ## References
    - `mrtpo_sdk.verifier`: the verifier contract (one finite reward, one ``str`` block, or ``None`` when the
      reward does not apply).
    - The MRTPO paper (Zhai et al., arXiv:2610.21439): each verifier returns a reward and a block for every response.
    """

    code = "MRT009"
    name = "verifier-error"
    summary = "a verifier raises or breaks its contract on a probe completion"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        names = ctx.task.verifier_names
        for i, rows in enumerate(ctx.outcomes):
            for p, row in enumerate(rows):
                for k, out in enumerate(row):
                    if isinstance(out, VerifierError):
                        yield self._finding(ctx, k, out, i, ctx.probes[i][p].label)
        for exc in ctx.extra_errors:
            if exc.verifier in names:
                i = ctx.ids.index(exc.example_id) if exc.example_id in ctx.ids else None
                yield self._finding(ctx, names.index(exc.verifier), exc, i, getattr(exc, "probe", None))

    def _finding(self, ctx: TaskContext, k: int, exc: VerifierError, i: int | None, probe: str | None) -> Finding:
        cause = exc.__cause__
        if isinstance(exc, VerifierContractError) or cause is None:
            msg = str(exc)
            prefix = f"task {exc.task!r}, verifier {exc.verifier!r}, example {exc.example_id!r}: "
            msg = msg[len(prefix) :] if msg.startswith(prefix) else msg
            return ctx.finding(
                self.code,
                k,
                f"on the {probe} probe the verifier {msg}",
                example=i,
                probe=probe,
                at=_mutation_line(ctx, k, getattr(exc, "change", "")),
                key=f"contract:{msg[:40]}",
            )
        text = " ".join(str(cause).split())[:160]
        return ctx.finding(
            self.code,
            k,
            f"the verifier raises {type(cause).__name__}{': ' + text if text else ''} on the {probe} "
            f"probe; model output "
            f"is untrusted, so parse defensively and score a malformed answer as a genuine 0",
            example=i,
            probe=probe,
            at=_raising_line(ctx, cause),
            key=f"raises:{type(cause).__name__}",
        )


def _line_start(ctx: TaskContext, line: int) -> tuple[int, int]:
    """``(line, col)`` of the first non-blank character of ``line`` in the task file."""
    lines = ctx.src.text.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return line, len(text) - len(text.lstrip()) + 1


def _raising_line(ctx: TaskContext, exc: BaseException) -> tuple[int, int] | None:
    """Where ``exc`` was raised: the innermost traceback frame in the task file (``None``: not in it)."""
    path = ctx.path.resolve()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.lineno and Path(f.filename).resolve() == path]
    return _line_start(ctx, frames[-1].lineno) if frames else None


_MUTATING_METHODS = frozenset(
    "append extend insert remove pop popitem clear update setdefault sort reverse add discard "
    "__setitem__ __delitem__ __setattr__".split()
)
_CHANGED_PART = re.compile(r"^(?:len\()?example(\[[^\]]*\]|\.\w+)?")


def _first_part(node: ast.expr, param: str) -> str | None:
    """How ``node`` reaches into ``param``: ``"['seen']"`` / ``".seen"`` for its first subscript or attribute,
    ``""`` for ``param`` itself, ``None`` when ``node`` does not start from ``param``."""
    part = None
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        if isinstance(node, ast.Attribute):
            part = f".{node.attr}"
        else:
            key = node.slice
            part = f"[{key.value!r}]" if isinstance(key, ast.Constant) else "[?]"
        node = node.value
    if isinstance(node, ast.Name) and node.id == param:
        return part or ""
    return None


def _mutation_line(ctx: TaskContext, k: int, change: str) -> tuple[int, int] | None:
    """The statement of verifier ``k`` that writes into its example where ``change`` (``"example['seen'] was
    missing, now True"``) says it changed: an assignment, ``del`` or mutating method call on that part of the
    example parameter. ``None`` when the verifier's source shows no such statement in the task file."""
    site = ctx.sites[k]
    m = _CHANGED_PART.match(change or "")
    if site.function is None or m is None:
        return None
    file, fn = site.function
    args = fn.args.posonlyargs + fn.args.args
    if not args:
        return None
    param, wanted = args[0].arg, m.group(1) or ""
    writes: list[tuple[ast.AST, str]] = []  # (statement or call, the part of the example it reaches into)
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATING_METHODS:
            targets = [node.func.value]
        elif isinstance(node, (ast.Assign, ast.Delete)):
            targets = [t for t in node.targets if isinstance(t, (ast.Subscript, ast.Attribute))]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target] if isinstance(node.target, (ast.Subscript, ast.Attribute)) else []
        else:
            continue
        for target in targets:
            part = _first_part(target, param)
            if part is not None:
                writes.append((node, part))
    matching = [node for node, part in writes if part == wanted or (wanted and part == "")]
    if not matching and len(writes) == 1:
        matching = [writes[0][0]]
    if not matching:
        return None
    first = min(matching, key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
    at = node_location(ctx, k, first, file.path)
    return _line_start(ctx, at[0]) if at else None
