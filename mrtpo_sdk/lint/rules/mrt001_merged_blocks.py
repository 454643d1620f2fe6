"""MRT001 merged-blocks."""

from __future__ import annotations

import ast
import copy
import re
import types
from collections.abc import Iterator
from typing import Any

from ..model import Finding, Rule, TaskContext
from ..static import blocks_used
from ...verifier import Verifier
from ..text import PLACEHOLDER, list_items, normalize, outside_fences, sentences
from ._common import fmt, node_location

_MIN_SHARED = 12  # characters: shorter blocks ("yes", "0") are not taken as another verifier's information


class MergedBlocks(Rule):
    """## What it does
    Flags a block that carries more than one reward's information:

    * a block that contains (or equals) another verifier's block for the same example and completion;
    * a block that also states another verifier's information in its own words: a prose sentence of the other
      block inside this one (any case, inside a longer sentence too), or a sentence or clause of this block
      whose content words (3 or more) all come from the other block, next to text of its own
      ("The unit 'km' is not apples. The number 180 is not 8." from the unit check, when the number check's
      block is "The answer's number is 180, not 8."); fenced code and structured-data lines (JSON, tags) are
      not compared, since blocks in the policy's format share them by design;
    * a verifier whose code reads another verifier's ``.block`` (also through loops and comprehensions over
      verifiers, ``" ".join(r.block for r in results)``);
    * a verifier that joins the blocks of verifiers that are **not in the Task** (helpers decorated with
      ``@verifier`` and called from its code): statically when its code reads the blocks of two or more
      verifiers, and dynamically when its block holds two such blocks, or one of them next to text of its own
      (passing one such block through unchanged is fine);
    * a block that lists several items (several constraints or rubric items in one block);
    * with ``block_placement="in-prompt"``, a ``prompt_without(example, k)`` that also removes another
      constraint's text.

    ## Why is this bad?
    MRTPO measures, token by token, how much the policy's next-token distribution moves when block ``k`` is
    left out of the replay context (the Jensen–Shannon distance between ``P_all`` and ``P_\\k``). If block ``k``
    also holds reward ``j``'s information, removing it moves the tokens relevant to ``j`` too, so reward ``k``'s
    advantage lands on ``j``'s tokens, and removing block ``j`` alone moves almost nothing because the
    information is still there in block ``k``. The two rewards' credit is smeared together.

    ## Example
    Text-to-SQL: the execution verifier repeats the format rule and the reference query.

    ```python
    @verifier(kind="feedback")
    def executes(example, completion):
        run = execute_sql(example.db_path, extract_sql(completion).query)
        return Result(float(run.ok), sql_format(example, completion).block + " " + run.error)
    ```

    A quantity answer (``<answer>8 apples</answer>``): the unit check also states the number check's finding,
    and a third verifier joins two checks the Task does not list.

    ```python
    @verifier(kind="feedback")
    def unit_ok(example, completion):
        number, unit = parse(completion)
        return Result(float(unit == example["unit"]),
                      f"The unit {unit!r} is not {example['unit']}. The number {number:g} is not {example['number']}.")

    @verifier(kind="feedback")
    def answer_ok(example, completion):   # Task(verifiers=[answer_ok]): number_ok and unit_ok are not listed
        results = [check(example, completion) for check in (number_ok, unit_ok)]
        return Result(min(r.reward for r in results), " ".join(r.block for r in results if r.block))
    ```

    Instruction following: one block for all constraints of the instruction.

    ```python
    @verifier(kind="constraint")
    def constraints(example, completion):
        ok = all(check(c, completion) for c in example.constraints)
        return Result(float(ok), "\\n".join(f"- {c.text}" for c in example.constraints))
    ```

    ## Use instead
    One verifier per reward, each with its own block:

    ```python
    @verifier(kind="feedback")
    def executes(example, completion):
        answer = extract_sql(completion)
        if not answer.ok:
            return Result(0.0, "")
        run = execute_sql(example.db_path, answer.query)
        return Result(float(run.ok), run.error)
    ```

    For the quantity answer, ``Task(verifiers=[number_ok, unit_ok])``, the unit check's block saying only
    "The unit 'km' is not apples." (and ``""`` when the unit is right).

    For instruction following, one constraint verifier per constraint, and ``prompt_without`` removing exactly
    that constraint's sentence. For BFCL tool calls, the format block (the ``<tool_call>`` tags) and the
    reference call block (function name and arguments) stay two blocks.

    ## References
    - `docs/writing-blocks.md`, "The rules", rule 1: one reward, one block.
    - The MRTPO paper, Zhai et al., "Each Reward to Its Relevant Tokens: Reward-Specific Token-Level Credit
      Assignment for Multi-Reward RL" (arXiv:2610.21439), "Writing a block": "Never merge several constraints,
      rubric items or verifiers into one."
    """

    code = "MRT001"
    name = "merged-blocks"
    summary = "a block carries more than one reward's information"
    checks = "static + dynamic"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        verifiers = ctx.verifiers
        outside = {k: _outside_verifiers(ctx, k) for k in range(len(verifiers))}
        for k, site in enumerate(ctx.sites):
            if site.function is None:
                continue
            others = {getattr(v.fn, "__name__", v.name) for j, v in enumerate(verifiers) if j != k}
            others |= {v.name for j, v in enumerate(verifiers) if j != k}
            names = others | set(outside[k])
            fsrc, fn = site.function
            uses = blocks_used(fn, names, _groups(ctx, k, names))
            joined = {name for name, _ in uses}
            at_node: dict[int, tuple[ast.AST, list[str]]] = {}
            reported: set[int] = set()
            for name, node in uses:
                at_node.setdefault(id(node), (node, []))[1].append(name)
            for node, used in at_node.values():
                at = node_location(ctx, k, node, fsrc.path)
                for name in used:
                    if name in others:
                        yield ctx.finding(
                            self.code, k, f"the block uses verifier `{name}`'s block; give each reward its own block", at=at
                        )
                away = [name for name in used if name not in others]
                line = getattr(node, "lineno", 0)
                if away and len(joined) >= 2 and line not in reported:  # one outside block alone: a pass-through
                    reported.add(line)
                    outside_all = set(away) == joined
                    yield ctx.finding(
                        self.code,
                        k,
                        f"the block joins the blocks of verifiers {_names(sorted(joined))}, "
                        + ("which are not in the Task" if outside_all else
                           f"and {_names(away)} {'is' if len(away) == 1 else 'are'} not in the Task")
                        + ": one reward carries several checks' information; list each check in "
                        "Task(verifiers=[...]) with its own block",
                        at=at,
                        key="outside-static",
                    )
        if ctx.in_prompt:
            yield from self._in_prompt(ctx)
            return
        for i, rows in enumerate(ctx.outcomes):
            for p, _ in enumerate(rows):
                blocks = [ctx.result(i, p, k) for k in range(len(verifiers))]
                texts = [b.block.strip() if b is not None else "" for b in blocks]
                for k, bk in enumerate(texts):
                    if not bk:
                        continue
                    for j, bj in enumerate(texts):
                        if j == k or len(bj) < _MIN_SHARED:
                            continue
                        if bj == bk and j < k:
                            yield ctx.finding(
                                self.code,
                                k,
                                f"the block is the same as verifier `{verifiers[j].name}`'s block "
                                f"({fmt(bk)}); each reward needs its own information",
                                example=i,
                                probe=ctx.probes[i][p].label,
                                key=f"same:{j}",
                            )
                        elif bj != bk and bj in bk:
                            yield ctx.finding(
                                self.code,
                                k,
                                f"the block contains verifier `{verifiers[j].name}`'s block "
                                f"({fmt(bj)}); keep only this reward's information",
                                example=i,
                                probe=ctx.probes[i][p].label,
                                key=f"contains:{j}",
                            )
                        elif bj != bk:
                            shared = _shared_sentence(bk, bj)
                            if shared is not None:
                                yield ctx.finding(
                                    self.code,
                                    k,
                                    f"the block also states verifier `{verifiers[j].name}`'s information: "
                                    f"{fmt(shared)} says what its block says ({fmt(bj)}); keep only this "
                                    f"reward's information",
                                    example=i,
                                    probe=ctx.probes[i][p].label,
                                    key=f"sentence:{j}",
                                )
                    yield from self._outside(ctx, k, outside[k], i, p, bk)
                    n = list_items(bk)
                    if n >= 2:
                        yield ctx.finding(
                            self.code,
                            k,
                            f"the block lists {n} items; one reward's block states one piece of "
                            f"information (split it into one verifier per item)",
                            example=i,
                            probe=ctx.probes[i][p].label,
                            key="list",
                        )

    def _outside(
        self, ctx: TaskContext, k: int, outside: dict[str, Verifier], i: int, p: int, bk: str
    ) -> Iterator[Finding]:
        """Verifier ``k``'s block holding the blocks of verifiers its code calls that are not in the Task."""
        if not outside:
            return
        found = []
        for name, v in outside.items():
            bo = _score_outside(ctx, name, v, i, p)
            if len(bo) < _MIN_SHARED:
                continue
            if _contains(bk, bo) or _shared_sentence(bk, bo, require_own=False) is not None:
                found.append((name, bo))
        if len(found) >= 2:
            yield ctx.finding(
                self.code,
                k,
                f"the block joins the blocks of verifiers {_names([n for n, _ in found])}, which are not in the "
                f"Task ({fmt(bk)}): one reward carries several checks' information; list each check in "
                f"Task(verifiers=[...]) with its own block",
                example=i,
                probe=ctx.probes[i][p].label,
                key="outside",
            )
        elif found and normalize(found[0][1]) != normalize(bk) and _shared_sentence(bk, found[0][1]) is not None:
            name, bo = found[0]
            yield ctx.finding(
                self.code,
                k,
                f"the block adds its own text to verifier `{name}`'s block ({fmt(bo)}; `{name}` is not in the "
                f"Task): one reward carries two checks' information; list `{name}` in Task(verifiers=[...]) "
                f"and keep only this reward's information",
                example=i,
                probe=ctx.probes[i][p].label,
                key="outside",
            )

    def _in_prompt(self, ctx: TaskContext) -> Iterator[Finding]:
        names = [v.name for v in ctx.verifiers]
        for i, p0 in enumerate(ctx.prompts):
            applies = [any(row[k] is not None for row in ctx.outcomes[i]) for k in range(len(names))]
            removed = [_removed(p0, wo) if wo is not None and applies[k] else "" for k, wo in enumerate(ctx.without[i])]
            for k, rk in enumerate(removed):
                if not rk.strip():
                    continue
                for j, rj in enumerate(removed):
                    if j == k or not rj.strip():
                        continue
                    if (rj == rk and j < k) or (rj != rk and rj.strip() in rk):
                        yield ctx.finding(
                            self.code,
                            k,
                            f"prompt_without(example, {names[k]!r}) also removes the text that "
                            f"prompt_without(example, {names[j]!r}) removes ({fmt(rj)}); remove only this "
                            f"constraint",
                            example=i,
                            key=f"without:{j}",
                        )


def _removed(before: str, after: str) -> str:
    """The span of ``before`` that is missing from ``after`` (common prefix and suffix left out)."""
    n = min(len(before), len(after))
    a = 0
    while a < n and before[a] == after[a]:
        a += 1
    b = 0
    while b < n - a and before[len(before) - 1 - b] == after[len(after) - 1 - b]:
        b += 1
    return before[a : len(before) - b]


# ---------------------------------------------------------------------------------------------- helpers
_END = re.compile(r"[\s.!?;:,]+$")
_MIN_WORDS = 3


def _key(text: str) -> str:
    """``text`` for comparing wording: whitespace collapsed, lower-cased, trailing punctuation left out."""
    return _END.sub("", normalize(text).lower())


def _find_word(haystack: str, needle: str) -> list[int]:
    """Start offsets of ``needle`` in ``haystack`` that begin and end at word boundaries."""
    out, at = [], haystack.find(needle)
    while at >= 0 and needle:
        end = at + len(needle)
        before = haystack[at - 1] if at else " "
        after = haystack[end] if end < len(haystack) else " "
        if not (before.isalnum() and needle[0].isalnum()) and not (after.isalnum() and needle[-1].isalnum()):
            out.append(at)
        at = haystack.find(needle, at + 1)
    return out


def _contains(bk: str, bj: str) -> bool:
    return bool(_key(bj)) and bool(_find_word(normalize(bk).lower(), _key(bj)))


_DATA = re.compile(r"[{}\[\]<>]")  # JSON, calls, tags: structured data in the policy's format, not prose
_CLAUSE = re.compile(r"\s*[;,:]\s+|\s+(?:and|but|while|whereas)\s+", re.I)
_WORD = re.compile(r"\w+(?:['.]\w+)*")  # an identifier (criminal_record.get_status) is one word
_STOP = frozenset(
    """
    a an and are as at be been but by did do does for from had has have if in is it its not no nor of on or so
    than that the their then there these this those to was were with s
    """.split()
)


def _prose(text: str) -> list[str]:
    """The prose sentences of a block: fenced code and lines of structured data (JSON, tags) left out."""
    return [s for s in sentences(outside_fences(text)) if PLACEHOLDER not in s and not _DATA.search(s)]


def _words(text: str) -> set[str]:
    """The content words of ``text``, lower-cased (numbers included, function words left out)."""
    return {w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in _STOP}


def _shared_sentence(bk: str, bj: str, *, require_own: bool = True) -> str | None:
    """What block ``bk`` states of block ``bj``'s information, or ``None``: a prose sentence of ``bj`` that ``bk``
    contains (case-insensitive, at word boundaries), or a sentence or clause of ``bk`` whose content words (at
    least 3) all come from ``bj`` ("The number 180 is not 8." against "The answer's number is 180, not 8.").
    Fenced code and structured-data lines (JSON, tags) are not compared: blocks in the policy's format share
    them by design. With ``require_own``, ``bk`` must also state something ``bj`` does not (a block made only of
    ``bj``'s information is reported as the same or contained block, or not at all)."""
    hay = normalize(bk).lower()
    exact = []
    for sent in _prose(bj):
        key = _key(sent)
        if len(key) >= _MIN_SHARED and len(_words(sent)) >= _MIN_WORDS and _find_word(hay, key):
            exact.append((sent, key))
    vocabulary = _words(bj)
    shared = [sent for sent, _ in exact]
    own = False
    for sent in _prose(bk):
        rest = _key(sent)
        for _, key in exact:
            rest = rest.replace(key, " ")
        for clause in _CLAUSE.split(rest):
            words = _words(clause)
            if not words:
                continue
            if len(words) >= _MIN_WORDS and words <= vocabulary:
                shared.append(sent)
            elif not words <= vocabulary:
                own = True
    if not shared or (require_own and not own):
        return None
    return shared[0]


def _names(names: list[str]) -> str:
    quoted = [f"`{n}`" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _code_names(code: types.CodeType) -> set[str]:
    """Global names a function's code (nested comprehensions and functions included) refers to."""
    out = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out |= _code_names(const)
    return out


def _referenced(ctx: TaskContext, k: int) -> dict[str, Any]:
    """The module-level objects verifier ``k``'s function refers to by name."""
    fn = ctx.verifiers[k].fn
    code, glob = getattr(fn, "__code__", None), getattr(fn, "__globals__", None)
    if code is None or not isinstance(glob, dict):
        return {}
    return {name: glob[name] for name in _code_names(code) if name in glob}


def _outside_verifiers(ctx: TaskContext, k: int) -> dict[str, Verifier]:
    """Verifiers that verifier ``k``'s code refers to (by name, or in a module-level list or tuple of verifiers)
    and that are not in the Task, by the name the code uses (or their own name inside a collection)."""
    task = ctx.verifiers
    out: dict[str, Verifier] = {}
    for name, obj in sorted(_referenced(ctx, k).items()):
        members = [(name, obj)] if isinstance(obj, Verifier) else []
        if isinstance(obj, (list, tuple)) and obj and all(isinstance(v, Verifier) for v in obj):
            members = [(getattr(v.fn, "__name__", v.name), v) for v in obj]
        for n, v in members:
            if not any(v is t for t in task):
                out.setdefault(n, v)
    return out


def _groups(ctx: TaskContext, k: int, names: set[str]) -> dict[str, set[str]]:
    """Module-level lists/tuples of verifiers that verifier ``k`` refers to: name -> the verifier names they hold."""
    out = {}
    for name, obj in _referenced(ctx, k).items():
        if isinstance(obj, (list, tuple)) and obj and all(isinstance(v, Verifier) for v in obj):
            held = {getattr(v.fn, "__name__", v.name) for v in obj} | {v.name for v in obj}
            if held & names:
                out[name] = held & names
    return out


def _score_outside(ctx: TaskContext, name: str, v: Verifier, i: int, p: int) -> str:
    """The block of a verifier outside the Task on probe ``p`` of example ``i`` ("" when it gives none or
    raises: its errors are not this task's findings); run on a copy of the example."""
    key = ("mrt001-outside", name, id(v), i, p)
    if key not in ctx._cache:
        try:
            example = copy.deepcopy(ctx.examples[i])
        except Exception:  # noqa: BLE001 - an example that cannot be copied is used as is
            example = ctx.examples[i]
        try:
            r = v.score(example, ctx.probes[i][p].text, task=ctx.task.name, example_id=ctx.ids[i])
        except Exception:  # noqa: BLE001 - a check outside the Task is not linted itself
            r = None
        ctx._cache[key] = r.block.strip() if r is not None else ""
    return ctx._cache[key]
