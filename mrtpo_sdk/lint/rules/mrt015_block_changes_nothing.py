"""MRT015 block-changes-nothing."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..model import Finding, Rule, TaskContext
from ..replay import max_q
from ._replay import Q_MIN, flagged_verifiers, is_most, look, measured_with


@dataclass(frozen=True)
class Unread:
    """What MRT015 measured on one verifier: ``count`` of ``total`` replayed completions have a largest ``q`` below
    the threshold, the largest of those being ``highest``; ``worst`` indexes the completion with the smallest."""

    count: int
    total: int
    highest: float
    worst: int


def unread_block(rows: Sequence[Sequence[float] | None], threshold: float = Q_MIN) -> Unread | None:
    """MRT015's test on one verifier's ``q`` rows (one per completion, ``None`` where it was not replayed): the
    block moves no token (``max q < threshold``) on most of the replayed completions; ``None`` when it does not
    hold (or nothing was replayed)."""
    measured = [(i, max_q(q)) for i, q in enumerate(rows) if q is not None]
    low = [(i, m) for i, m in measured if m < threshold]
    if not is_most(len(low), len(measured)):
        return None
    worst = min(low, key=lambda im: im[1])[0]
    return Unread(len(low), len(measured), max(m for _, m in low), worst)


class BlockChangesNothing(Rule):
    """## What it does
    With `lint --replay`: flags a verifier whose block moves no token of the response. The reference completion
    (and `--samples` completions sampled from the policy) of a few examples is replayed under `P_all` and under
    `P_\\k` (all blocks but this one), as `mrtpo-sdk explain` does; the rule fires when the largest JS distance
    `q_{k,t}` on the response stays below 0.25 on most of the completions measured (more than half). The finding
    says what was measured (`max q ≤ 0.17 on 8/8 completions`) and gives the `explain` command line of the worst
    example. Without `--replay` it finds nothing.

    ## Why is this bad?
    MRTPO places a reward's credit on the tokens whose distribution changes when its block is removed (spec §3-§5).
    A block the policy does not read changes no distribution: every token gets the same weight, and the reward is
    trained as in GRPO/GDPO while its replay still costs a forward pass. It is what a generic block ("The answer is
    in the expected format.") or a block about something the response never shows usually does.

    ## Example
    ```python
    @verifier(kind="format")
    def sql_format(example, completion):
        ok = extract_sql(completion).ok
        return Result(float(ok), "Good answers follow the usual conventions.")
    ```

    ## Use instead
    ```python
    @verifier(kind="format")
    def sql_format(example, completion):
        ok = extract_sql(completion).ok
        return Result(float(ok), "The answer is one SQL query in a ```sql fence.")
    ```
    Name the concrete thing the reward checks, in words that appear in (or predict) the response: the expected
    value, the exact markup, the phrase. If nothing concrete can be said, return an empty block: the reward is then
    trained with uniform credit, without a replay.

    ## References
    - The MRTPO paper (Zhai et al., arXiv:2610.21439), "Rules for writing a block": a block informs about the
      tokens its reward concerns.
    - `mrtpo-sdk explain` (docs/cli.md): the credit page of one completion; the threshold's calibration is in
      docs/writing-blocks.md.
    """

    code = "MRT015"
    name = "block-changes-nothing"
    summary = "removing the block moves no token of the response (`--replay` only)"
    checks = "replay"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        for k, got, worst in flagged_verifiers(ctx, unread_block):
            yield ctx.finding(
                self.code,
                k,
                f"removing the block moves no token: max q ≤ {got.highest:.2f} on {got.count}/{got.total} "
                f"completions (threshold {Q_MIN}; {measured_with(ctx)}), so the reward's credit stays uniform; "
                f"{look(ctx, worst.example_id)}; fix: name the concrete thing the reward checks (the expected "
                f"value, the exact markup or phrase), or return an empty block",
                example=None,
                key="changes-nothing",
            )
