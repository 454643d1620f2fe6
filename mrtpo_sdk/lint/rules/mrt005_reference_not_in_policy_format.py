"""MRT005 reference-not-in-policy-format."""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Finding, Rule, TaskContext
from ..text import fence_tags, normalize, xml_tags
from ._common import blocks_of


class ReferenceNotInPolicyFormat(Rule):
    """## What it does
    For verifiers declared ``kind="reference"``, checks that the reference in the block is written in the
    policy's own output format. The linter knows that format from two sources, the task's reference completion
    and its format verifiers; for each sampled example, with the block taken from the reference completion:

    1. **Fences**: if the reference completion uses a tagged code fence (```` ```sql ````), the block must use
       the same fence, and no fence the completion does not use (```` ```sqlite ````, ```` ```python ````).
    2. **Tags**: if the completion has no fence but XML-like tags (``<tool_call>``), the block must use at least
       one of them.
    3. **Parses with the task's format**: the block, scored as if it were a completion, must earn full reward
       from every ``kind="format"`` verifier, unless it is a verbatim part of the reference completion (for
       example the tool call after a ``<think>`` section the block does not repeat).

    ## Why is this bad?
    The replay compares the policy's distributions over the tokens it actually produced. A reference written
    the way the policy writes (same fence, same tags, same argument types) lines up with the response's tokens,
    so the distance concentrates on the tokens that differ from the reference. A reference in another form
    (a bare query, a JSON object where the policy writes a Python call, ``"5"`` where the policy writes ``5``)
    mostly measures the difference in form.

    ## Example
    ```python
    @verifier(kind="reference")
    def result_match(example, completion):
        return Result(float(matched(example, completion)), example.query)        # bare SQL, no ```sql fence

    @verifier(kind="reference")                                                    # BFCL tool calls
    def call_match(example, completion):
        return Result(float(ok), json.dumps(example.ground_truth))               # not the <tool_call> format
    ```

    Instruction following: when the instruction asks for the whole answer wrapped in JSON, a reference block that
    describes the answer in prose instead of giving the JSON the policy writes.

    ## Use instead
    ```python
    @verifier(kind="reference")
    def result_match(example, completion):
        return Result(float(matched(example, completion)), f"```sql\\n{example.query}\\n```")

    @verifier(kind="reference")
    def call_match(example, completion):
        return Result(float(ok), f"<tool_call>{json.dumps(example.ground_truth)}</tool_call>")
    ```

    ## References
    - `docs/writing-blocks.md`, "The rules", rule 5: references in the form the policy is asked to
      produce: the same tags, code fences and argument types.
    - The MRTPO paper (Zhai et al., arXiv:2610.21439), "Writing a block".
    """

    code = "MRT005"
    name = "reference-not-in-policy-format"
    summary = "a reference block is not written in the policy's output format"
    kinds = "reference"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        formats = ctx.kinds("format")
        for k in ctx.kinds("reference"):
            for i, _, block in blocks_of(ctx, k, probe="reference"):
                ref = ctx.references[i] or ""
                fences, bfences = fence_tags(ref), fence_tags(block)
                if fences and not bfences & fences:
                    want = ", ".join(f"```{t}" for t in sorted(fences))
                    yield ctx.finding(
                        self.code,
                        k,
                        f"the reference block has no {want} fence, but the reference completion "
                        f"(the policy's format) uses it; write the reference exactly as the policy must",
                        example=i,
                        probe="reference",
                        key="fence-missing",
                    )
                    continue
                extra = bfences - fences
                if extra:
                    yield ctx.finding(
                        self.code,
                        k,
                        f"the reference block uses a ```{sorted(extra)[0]} fence that the policy's format does not use",
                        example=i,
                        probe="reference",
                        key="fence-extra",
                    )
                    continue
                tags = xml_tags(ref)
                if not fences and tags and not xml_tags(block) & tags:
                    want = ", ".join(f"<{t}>" for t in sorted(tags))
                    yield ctx.finding(
                        self.code,
                        k,
                        f"the reference block uses none of the tags of the policy's format ({want})",
                        example=i,
                        probe="reference",
                        key="tags-missing",
                    )
                    continue
                if normalize(block) and normalize(block) in normalize(ref):
                    continue
                for f in formats:
                    full = ctx.full_reward(f)
                    r = ctx.score(i, f, block)
                    if full is not None and (r is None or r.reward < full - 1e-9):
                        got = "n/a" if r is None else f"{r.reward:g}"
                        yield ctx.finding(
                            self.code,
                            k,
                            f"the reference block, read as a completion, earns {got} from the format "
                            f"verifier `{ctx.verifiers[f].name}` (full reward {full:g}); write it in the policy's "
                            f"output format",
                            example=i,
                            probe="reference",
                            key=f"format:{f}",
                        )
