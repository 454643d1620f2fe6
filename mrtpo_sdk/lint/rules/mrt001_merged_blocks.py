"""MRT001 merged-blocks."""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Finding, Rule, TaskContext
from ..static import blocks_used
from ..text import list_items
from ._common import fmt, node_location

_MIN_SHARED = 12  # characters: shorter blocks ("yes", "0") are not taken as another verifier's information


class MergedBlocks(Rule):
    """## What it does
    Flags a block that carries more than one reward's information:

    * a block that contains (or equals) another verifier's block for the same example and completion;
    * a verifier whose code reads another verifier's ``.block``;
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
        for k, site in enumerate(ctx.sites):
            if site.function is None:
                continue
            others = {getattr(v.fn, "__name__", v.name) for j, v in enumerate(verifiers) if j != k}
            others |= {v.name for j, v in enumerate(verifiers) if j != k}
            fsrc, fn = site.function
            for name, node in blocks_used(fn, others):
                yield ctx.finding(
                    self.code,
                    k,
                    f"the block uses verifier `{name}`'s block; give each reward its own block",
                    at=node_location(ctx, k, node, fsrc.path),
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
