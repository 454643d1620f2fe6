"""MRT004 invented-feedback."""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Finding, Rule, TaskContext
from ..static import BlockSite
from ._common import fmt, node_location


class InventedFeedback(Rule):
    """## What it does
    For verifiers declared ``kind="feedback"``, flags:

    * a non-empty block on a completion the verifier gives full reward, i.e. when it found nothing to report
      (the reference completion is the first such probe);
    * a block written as a fixed string literal in the verifier's code instead of coming from the verifier's
      own output (the SQLite error, the parser's message, the failed check's details).

    "Full reward" is 1.0 (or the highest reward the verifier gave on any probe, when that is above 1).

    ## Why is this bad?
    A feedback block is only information when it is this response's own feedback. A block invented for a
    response that has no problem tells the replay there is something wrong where there is not, so reward
    ``k``'s credit is pulled towards tokens that have nothing to do with it. A fixed sentence ("The query has
    a syntax error.") is the same for every failure and does not point at the failing tokens the way the real
    error message ("near "FORM": syntax error") does.

    ## Example
    ```python
    @verifier(kind="feedback")
    def executes(example, completion):
        run = execute_sql(example.db_path, extract_sql(completion).query)
        if run.ok:
            return Result(1.0, "The query runs without errors.")       # invented: nothing was found
        return Result(0.0, "The query has a syntax error somewhere.")   # not the verifier's output
    ```

    BFCL tool calls: a checker that reports "argument types look fine" when the call is correct. Instruction
    following: a feedback verifier for a lowercase constraint that says "The response is all lowercase." when it
    is, instead of listing the uppercase words it found (and nothing when there are none).

    ## Use instead
    ```python
    @verifier(kind="feedback")
    def executes(example, completion):
        answer = extract_sql(completion)
        if not answer.ok:
            return Result(0.0, "")                  # nothing ran, so there is no SQLite error to show
        run = execute_sql(example.db_path, answer.query)
        return Result(float(run.ok), run.error)     # "" when the query ran
    ```

    ## References
    - `docs/writing-blocks.md`, "The rules", rule 4: only this response's own feedback; if there is
      none, the block is empty; never invent one.
    - `mrtpo_sdk.verifier.VERIFIER_KINDS`: a feedback block is the verifier's own output, ``""`` if none.
    """

    code = "MRT004"
    name = "invented-feedback"
    summary = "a feedback block is non-empty when nothing was found, or not the verifier's own output"
    kinds = "feedback"
    checks = "static + dynamic"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        for k in ctx.kinds("feedback"):
            site = ctx.sites[k]
            file = site.function[0].path if site.function else None
            literals: set[str] = set()
            for bs in site.blocks:
                for alt in bs.alternatives:
                    text = BlockSite.render(alt)
                    if text and all(s.text is not None for s in alt):
                        literals.add(text)
                        yield ctx.finding(
                            self.code,
                            k,
                            f"the feedback block is a fixed text ({fmt(text)}), not the verifier's "
                            f'own output; return the verifier\'s message, or "" when there is none',
                            at=node_location(ctx, k, bs.node, file),
                            key=f"literal:{text}",
                        )
            full = ctx.full_reward(k)
            if full is None:
                continue
            for i, rows in enumerate(ctx.outcomes):
                for p, _ in enumerate(rows):
                    r = ctx.result(i, p, k)
                    # a fixed text is already reported on its own line above
                    if r is not None and r.block and r.reward >= full - 1e-9 and r.block not in literals:
                        label = ctx.probes[i][p].label
                        yield ctx.finding(
                            self.code,
                            k,
                            f"the feedback block is non-empty ({fmt(r.block)}) on a completion that "
                            f'earns full reward {full:g}; when the verifier finds nothing the block must be ""',
                            example=i,
                            probe=label,
                            key="nonempty-on-full",
                        )
