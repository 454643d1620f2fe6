"""MRT002 generic-block."""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Finding, Rule, TaskContext
from ..static import BlockSite
from ..text import names_concrete_markup, outside_fences, sentences, vague_requirement
from ._common import blocks_of, fmt, node_location, template_sentences


class GenericBlock(Rule):
    """## What it does
    Flags a block that carries no information specific to the example:

    * a non-empty block that is the same on every sampled example (reference probe). A ``kind="format"`` block
      may be the same everywhere, but then it must name the concrete markup it checks (a tagged code fence such
      as ```` ```sql ````, a tag such as ``<tool_call>``, or a backquoted token);
    * a vague requirement written in the block's literal text ("the query must execute", "follow the format",
      "the answer is wrong");
    * a block built only from string literals (for ``kind="reference"`` and verifiers without a kind).

    Constraint verifiers are exempt from the "same on every example" part (one constraint's sentence is its
    information), and feedback verifiers' fixed texts are MRT004.

    ## Why is this bad?
    The replay measures how much block ``k`` changes the policy's next-token distribution on each token of the
    response. A generic statement changes nothing the prompt did not already say, so the Jensen–Shannon
    distance is near zero everywhere and reward ``k`` falls back to a uniform (GDPO) advantage; a vague format
    block cannot point at the fence or tag tokens it is about.

    ## Example
    ```python
    @verifier(kind="feedback")
    def executes(example, completion):
        run = execute_sql(example.db_path, extract_sql(completion).query)
        return Result(float(run.ok), "" if run.ok else "The query must execute.")

    @verifier(kind="format")
    def tool_format(example, completion):
        return Result(float(parse_tool_call(completion).ok), "Follow the required output format.")

    @verifier(kind="reference")
    def call_match(example, completion):
        return Result(float(matches(completion, example.ground_truth)), "The call must match the reference.")
    ```

    ## Use instead
    Build the block from the example's label or the verifier's own output, and name the concrete format:

    ```python
    @verifier(kind="feedback")
    def executes(example, completion):
        run = execute_sql(example.db_path, extract_sql(completion).query)
        return Result(float(run.ok), run.error)          # e.g. "no such column: studnet.name"

    @verifier(kind="format")
    def tool_format(example, completion):
        ok = parse_tool_call(completion).ok
        return Result(float(ok), 'The answer is one <tool_call>{"name": ..., "arguments": {...}}</tool_call>.')

    @verifier(kind="reference")
    def call_match(example, completion):
        return Result(float(matches(completion, example.ground_truth)), render_call(example.ground_truth))
    ```

    ## References
    - `docs/writing-blocks.md`, "The rules", rule 2: the information itself, specific to this example,
      built by code from the example's label or the verifier's own output.
    - The MRTPO paper (Zhai et al., arXiv:2610.21439), "Writing a block": "a generic requirement ('the query must execute') carries no
      information."
    """

    code = "MRT002"
    name = "generic-block"
    kinds = 'all verifiers, in tasks that append blocks (block_placement="append")'
    summary = "a block carries no example-specific information"
    checks = "static + dynamic"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        if ctx.in_prompt:
            return
        n = len(ctx.examples)
        for k, v in enumerate(ctx.verifiers):
            site = ctx.sites[k]
            static_hit = False
            for bs in site.blocks:
                for sent, seg, _ in template_sentences(bs):
                    phrase = vague_requirement(sent)
                    if phrase:
                        static_hit = True
                        yield ctx.finding(
                            self.code,
                            k,
                            f"vague requirement {phrase!r} in the block; state the information "
                            f"itself (the error, the reference, the concrete format)",
                            at=node_location(ctx, k, seg.node if seg else None, seg.file if seg else None)
                            or node_location(ctx, k, bs.node, site.function[0].path if site.function else None),
                            key=f"vague:{phrase}",
                        )
                if v.kind in ("reference", None) and bs.literal_only():
                    static_hit = True
                    text = next(BlockSite.render(a) for a in bs.alternatives if BlockSite.render(a))
                    yield ctx.finding(
                        self.code,
                        k,
                        f"the block is built only from string literals ({fmt(text)}); build it from "
                        f"the example's label or the verifier's output",
                        at=node_location(ctx, k, bs.node, site.function[0].path if site.function else None),
                        key="literal",
                    )
            if not site.blocks:  # no source to read: judge the blocks themselves
                for i, p, block in blocks_of(ctx, k):
                    for sent in sentences(outside_fences(block)):
                        phrase = vague_requirement(sent)
                        if phrase:
                            static_hit = True
                            yield ctx.finding(
                                self.code,
                                k,
                                f"vague requirement {phrase!r} in the block; state the information itself",
                                example=i,
                                probe=ctx.probes[i][p].label,
                                key=f"vague:{phrase}",
                            )
            if v.kind in ("constraint", "feedback") or static_hit:
                continue
            ref_blocks = {i: b for i, _, b in blocks_of(ctx, k, probe="reference")}
            if v.kind == "format":
                bad = [i for i, b in ref_blocks.items() if not names_concrete_markup(b)]
                if bad:
                    yield ctx.finding(
                        self.code,
                        k,
                        f"the format block {fmt(ref_blocks[bad[0]])} names no concrete tag or code "
                        f"fence; state the exact markup it checks (e.g. ```sql ... ```, <tool_call>...</tool_call>)",
                        example=bad[0],
                        probe="reference",
                        key="format-vague",
                    )
                continue
            distinct_refs = {ctx.references[i] for i in ref_blocks}
            if n >= 2 and len(ref_blocks) == n and len(set(ref_blocks.values())) == 1 and len(distinct_refs) > 1:
                block = next(iter(ref_blocks.values()))
                yield ctx.finding(
                    self.code,
                    k,
                    f"the block is the same on all {n} sampled examples ({fmt(block)}); build it "
                    f"from each example's label or the verifier's output",
                    probe="reference",
                    key="identical",
                )
