"""MRT003 instruction-or-meta-in-block."""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Finding, Rule, TaskContext
from ..static import BlockSite
from ..text import imperative_problem, label_or_heading, meta_word, outside_fences
from ._common import node_location, template_sentences


class InstructionOrMetaInBlock(Rule):
    """## What it does
    Reads the literal text a verifier writes into its block (string literals, f-string text, module constants,
    helper functions with one ``return``) and flags:

    * instructions addressed to the model: a sentence that opens with an imperative verb ("Write", "Use",
      "Make sure", "Do not"), or says "you"/"your"/"please"; a one-word verdict ("Correct.", "Invalid.") and an
      adjective before its noun ("Correct answer.") are statements, not orders ("Correct the join.");
    * headings and labels: ``## Feedback``, ``**Hint**``, ``Reference query:``, ``Error:``;
    * words about training, replay, rewards, scores, verifiers, penalties or rubrics.

    Fenced code in the block is data and is not read. Tasks with ``block_placement="in-prompt"`` are exempt:
    there the block is, by design, the prompt's own constraint sentence, and it never enters a replay context.

    ## Why is this bad?
    The replay appends the blocks to the rollout prompt and compares the policy's next-token distributions with
    and without each block. An instruction ("Write the query in a ```sql fence") changes what the model would
    *do*, so the distance measures a change of behavior rather than which tokens the information is about; a
    label or a word about rewards ("Feedback:", "this earns reward 0") is text the policy never sees while
    sampling, and its effect spreads over every token.

    ## Example
    ```python
    FORMAT_HINT = "Hint: wrap your query in a ```sql fence."          # label + instruction

    @verifier(kind="format")
    def sql_format(example, completion):
        return Result(float(extract_sql(completion).ok), FORMAT_HINT)

    @verifier(kind="reference")
    def call_match(example, completion):                               # BFCL tool calls
        return Result(float(ok), f"Reward 1 requires this call: {render_call(example.ground_truth)}")
    ```

    ## Use instead
    A plain statement of the information, like the rest of the prompt:

    ```python
    FORMAT_RULE = "The answer is one SQLite query in a single fenced block that opens with a line ```sql and closes with a line ```."

    @verifier(kind="format")
    def sql_format(example, completion):
        return Result(float(extract_sql(completion).ok), FORMAT_RULE)

    @verifier(kind="reference")
    def call_match(example, completion):
        return Result(float(ok), render_call(example.ground_truth))   # the call itself, in the policy's format
    ```

    For instruction following with appended blocks, state the constraint as a fact about the response
    ("The response is in all lowercase letters."), not as an order.

    ## References
    - `docs/writing-blocks.md`, "The rules", rule 3: a plain statement, like the rest of the prompt; no
      instructions to the model, no headings, no labels, no words about training, replay, rewards or scoring.
    - The MRTPO paper (Zhai et al., arXiv:2610.21439), "Writing a block".
    """

    code = "MRT003"
    name = "instruction-or-meta-in-block"
    kinds = 'all verifiers, in tasks that append blocks (block_placement="append")'
    summary = "a block's wording instructs the model, labels itself, or talks about rewards/training"
    checks = "static"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        if ctx.in_prompt:
            return
        for k, site in enumerate(ctx.sites):
            file = site.function[0].path if site.function else None
            for bs in site.blocks:
                for alt in bs.alternatives:
                    rendered = outside_fences(BlockSite.render(alt))
                    label = label_or_heading(rendered)
                    if label:
                        seg = next((s for s in alt if s.text and label.rstrip(":*# ") in s.text), None)
                        yield ctx.finding(
                            self.code,
                            k,
                            f"the block has a label or heading {label!r}; write the information as a plain statement",
                            at=self._at(ctx, k, seg, bs, file),
                            key=f"label:{label}",
                        )
                for sent, seg, _ in template_sentences(bs):
                    why = imperative_problem(sent)
                    if why:
                        yield ctx.finding(
                            self.code,
                            k,
                            f"the block gives an instruction to the model ({why}); state the information instead",
                            at=self._at(ctx, k, seg, bs, file),
                            key=f"imperative:{why}",
                        )
                    word = meta_word(sent)
                    if word:
                        yield ctx.finding(
                            self.code,
                            k,
                            f"the block talks about {word!r}; a block states the information, never "
                            f"rewards, scoring, verifiers, replay or training",
                            at=self._at(ctx, k, seg, bs, file),
                            key=f"meta:{word.lower()}",
                        )

    @staticmethod
    def _at(ctx, k, seg, bs, file):
        return node_location(ctx, k, seg.node if seg else None, seg.file if seg else None) or node_location(
            ctx, k, bs.node, file
        )
