"""MRT007 inconsistent-reference."""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Finding, Rule, TaskContext
from ..text import normalize
from ._common import blocks_of, fmt


class InconsistentReference(Rule):
    """## What it does
    * For verifiers declared ``kind="reference"``: scores the reference in the block (taken on the reference
      completion) as if it were the completion, with the same verifier, and flags it when it earns less than
      full reward (1.0, or the highest reward the verifier gave on any probe when that is above 1).
    * For tasks with ``block_placement="in-prompt"``: flags a ``prompt_without(example, k)`` that returns the
      rollout prompt unchanged, a constraint block that is still in ``prompt_without(example, k)``, and a
      constraint block that is not in the rollout prompt at all.

    ## Why is this bad?
    The block of a reference verifier tells the replay what a full-reward response looks like. If the
    verifier itself does not accept that reference (a different gold query than the one it executes, a stale
    BFCL ground truth, an argument in another type), the replay points the credit at differences from an answer
    that would itself be penalized. For in-prompt constraints the replay context ``P_\\k`` is the prompt
    without constraint ``k``; if the constraint's sentence is not actually removed, ``P_all`` and ``P_\\k``
    are the same and reward ``k`` silently gets no token-level credit.

    ## Example
    ```python
    @verifier(kind="reference")
    def result_match(example, completion):
        ok = execute_and_compare(example, completion, gold=example.query)
        return Result(float(ok), f"```sql\\n{example.simplified_query}\\n```")   # not the query it checks against

    def prompt_without(example, verifier_name):                                # instruction following
        return example.prompt                                                   # nothing removed
    ```

    ## Use instead
    ```python
    @verifier(kind="reference")
    def result_match(example, completion):
        ok = execute_and_compare(example, completion, gold=example.query)
        return Result(float(ok), f"```sql\\n{example.query}\\n```")

    def prompt_without(example, verifier_name):
        return " ".join(c.text for c in example.constraints if c.verifier != verifier_name)
    ```

    ## References
    - `docs/writing-blocks.md`, "The rules", rule 6: prompt, rewards and blocks consistent.
    - `docs/algorithm.md` §3 (replay contexts): with in-prompt information, ``P_\\k`` is the prompt with constraint ``k`` removed.
    """

    code = "MRT007"
    name = "inconsistent-reference"
    summary = "a block's reference does not earn full reward, or an in-prompt constraint is not removed"
    kinds = "reference; constraint (in-prompt tasks)"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        for k in ctx.kinds("reference"):
            full = ctx.full_reward(k)
            if full is None:
                continue
            for i, _, block in blocks_of(ctx, k, probe="reference"):
                r = ctx.score(i, k, block)
                if r is not None and r.reward < full - 1e-9:
                    yield ctx.finding(
                        self.code,
                        k,
                        f"the reference in the block earns {r.reward:g} from its own verifier (full "
                        f"reward is {full:g}); the block must hold the answer the verifier accepts",
                        example=i,
                        probe="reference",
                        key="unrewarded",
                    )
        if not ctx.in_prompt:
            return
        for i, p0 in enumerate(ctx.prompts):
            for k, v in enumerate(ctx.verifiers):
                wo = ctx.without[i][k]
                ref_p = ctx.reference_probe(i)
                applies = any(out is not None for row in ctx.outcomes[i] for out in [row[k]])
                if wo is None or not applies:  # a verifier that returns None has no constraint to remove
                    continue
                if wo == p0:
                    yield ctx.finding(
                        self.code,
                        k,
                        f"prompt_without(example, {v.name!r}) returns the rollout prompt unchanged; "
                        f"it must remove this constraint",
                        example=i,
                        key="unchanged",
                    )
                    continue
                if v.kind != "constraint":
                    continue
                r = ctx.result(i, ref_p if ref_p is not None else 0, k)
                if r is None or not r.block:
                    continue
                nb = normalize(r.block)
                if nb in normalize(wo):
                    yield ctx.finding(
                        self.code,
                        k,
                        f"the constraint block {fmt(r.block)} is still in prompt_without(example, "
                        f"{v.name!r}); remove it there",
                        example=i,
                        key="not-removed",
                    )
                elif nb not in normalize(p0):
                    yield ctx.finding(
                        self.code,
                        k,
                        f"the constraint block {fmt(r.block)} is not in the rollout prompt; an "
                        f"in-prompt block is the constraint's sentence in the prompt",
                        example=i,
                        key="not-in-prompt",
                    )
