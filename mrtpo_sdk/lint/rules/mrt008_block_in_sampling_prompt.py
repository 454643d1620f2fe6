"""MRT008 block-in-sampling-prompt."""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Finding, Rule, TaskContext
from ..text import normalize, sentences
from ._common import blocks_of, fmt

_MIN_WORDS = 8  # a shorter sentence ("no such table: t") may repeat the prompt by chance


class BlockInSamplingPrompt(Rule):
    """## What it does
    For tasks that append blocks to the prompt (``block_placement="append"``, the default), flags a block whose
    information is already in the rollout prompt ``P_0``: the whole block (at least four words or 24 characters,
    so that a short value such as ``5`` is not matched by chance), or one of its sentences of at least eight words,
    appears in ``P_0`` (whitespace-insensitive). Tasks with ``block_placement="in-prompt"`` are
    exempt: there the information is meant to be in the prompt.

    ## Why is this bad?
    Sampling uses ``P_0`` alone; the blocks only enter the replay. If ``P_0`` already carries block ``k``'s
    information (the prompt template includes the reference, the format block repeats the prompt's own format
    sentence), removing block ``k`` from ``P_all`` changes nothing the model does not still read, the distance
    for reward ``k`` is near zero, and, when it is the reference, the policy samples with the answer in sight.

    ## Example
    ```python
    FORMAT_RULE = "Answer with one SQLite query in a ```sql code block."

    def prompt(example):
        return f"{example.schema}\\n\\nQuestion: {example.question}\\n\\n{FORMAT_RULE}"

    @verifier(kind="format")
    def sql_format(example, completion):
        return Result(float(extract_sql(completion).ok), FORMAT_RULE)   # already in P_0
    ```

    BFCL: a prompt that lists the expected call as an "example", while the reference verifier's block is that
    same call. Instruction following with appended blocks: a constraint block that repeats the constraint's
    sentence from the prompt (use ``block_placement="in-prompt"`` and ``prompt_without`` instead: there, leaving
    the sentence out of the prompt is the replay).

    ## Use instead
    Keep ``P_0`` to what the policy should see while sampling, and let the block carry what only the replay
    should see:

    ```python
    def prompt(example):
        return f"{example.schema}\\n\\nQuestion: {example.question}\\n\\nAnswer with one query in a ```sql code block."

    FORMAT_RULE = "The answer is one SQLite query in a single fenced block that opens with a line ```sql and closes with a line ```."
    ```

    ## References
    - The MRTPO paper (Zhai et al., arXiv:2610.21439): sampling always uses ``P_0`` alone; blocks are used only
      in the replay.
    - `docs/algorithm.md` §3 (replay contexts); `docs/writing-blocks.md`, "The rules", rule 6.
    """

    code = "MRT008"
    name = "block-in-sampling-prompt"
    kinds = 'all verifiers, in tasks that append blocks (block_placement="append")'
    summary = "a replay block's information is already in the rollout prompt P_0"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        if ctx.in_prompt:
            return
        for k in range(len(ctx.verifiers)):
            for i, p, block in blocks_of(ctx, k):
                prompt = normalize(ctx.prompts[i])
                nb = normalize(block)
                label = ctx.probes[i][p].label
                if (len(nb.split()) >= 4 or len(nb) >= 24) and nb in prompt:  # not a short value met by chance
                    yield ctx.finding(
                        self.code,
                        k,
                        f"the block {fmt(block)} is already in the rollout prompt P_0; sampling must "
                        f"not see the replay's information",
                        example=i,
                        probe=label,
                        key="in-prompt",
                    )
                    continue
                for sent in sentences(block):
                    ns = normalize(sent)
                    if len(ns.split()) >= _MIN_WORDS and ns in prompt:
                        yield ctx.finding(
                            self.code,
                            k,
                            f"the block's sentence {fmt(sent)} is already in the rollout prompt P_0; "
                            f"sampling must not see the replay's information",
                            example=i,
                            probe=label,
                            key="in-prompt",
                        )
                        break
