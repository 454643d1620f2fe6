"""MRT016 block-moves-everything-alike."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..model import Finding, Rule, TaskContext
from ..replay import max_q, share_for_mass
from ._replay import Q_MIN, flagged_verifiers, is_most, look, measured_with

#: The share of tokens holding 80% of the distance above which a block spreads its credit (uniform credit: 0.8).
SHARE_MAX = 0.55


@dataclass(frozen=True)
class Spread:
    """What MRT016 measured on one verifier: on ``count`` of ``total`` completions (those where the block moves a
    token) 80% of the distance lies on ``lowest`` or more of the tokens; ``worst`` indexes the most spread one."""

    count: int
    total: int
    lowest: float
    worst: int


def spread_block(rows: Sequence[Sequence[float] | None], threshold: float = SHARE_MAX) -> Spread | None:
    """MRT016's test on one verifier's ``q`` rows (``None`` where it was not replayed): among the completions the
    block moves (``max q >= Q_MIN``; the others are MRT015's), 80% of the distance lies on more than ``threshold``
    of the tokens on most of them; ``None`` when it does not hold."""
    shares = [(i, share_for_mass(q)) for i, q in enumerate(rows) if q is not None and max_q(q) >= Q_MIN]
    wide = [(i, s) for i, s in shares if s is not None and s > threshold]
    if not is_most(len(wide), len(shares)):
        return None
    worst = max(wide, key=lambda i_s: i_s[1])[0]
    return Spread(len(wide), len(shares), min(s for _, s in wide), worst)


class BlockMovesEverythingAlike(Rule):
    """## What it does
    With `lint --replay`: flags a verifier whose block moves every token of the response alike. On the replayed
    completions (see MRT015) where the block moves something, it takes the smallest share of the response's
    tokens that holds 80% of the block's JS distance (`explain`'s concentration); the rule fires when that share
    is above 55% on most of them (more than half). Uniform credit gives 80%. The finding gives the measured share
    and the `explain` command line of the worst example. Without `--replay` it finds nothing.

    ## Why is this bad?
    A block helps MRTPO only when it informs about the few tokens its reward concerns: the paper measures 80% of a
    reward's distance on 13-29% of the tokens. A block that restates the task, describes the whole answer, or
    holds several rewards' facts at once shifts every token a little: the credit is spread as in GRPO/GDPO, and the
    replay is paid for nothing.

    ## Example
    ```python
    @verifier(kind="reference")
    def result_match(example, completion):
        ok = same_rows(run(completion), run(example["query"]))
        return Result(float(ok), f"Write a SQL query answering: {example['question']}")
    ```

    ## Use instead
    ```python
    @verifier(kind="reference")
    def result_match(example, completion):
        ok = same_rows(run(completion), run(example["query"]))
        return Result(float(ok), f"The reference query is {example['query']}")
    ```
    Say only what this reward checks, about the part of the answer it concerns (the value, the clause, the
    phrase); split a block that serves several rewards into one block per reward.

    ## References
    - The MRTPO paper (Zhai et al., arXiv:2610.21439), "where the credit goes": 80% of the distance on 26-29% of
      the tokens (SQL), 13-15% (tool calling).
    - `benchmarks/credit_concentration.py` measures the same share on sampled completions; the threshold's
      calibration is in docs/writing-blocks.md.
    """

    code = "MRT016"
    name = "block-moves-everything-alike"
    summary = "80% of the block's distance lies on most of the response's tokens (`--replay` only)"
    checks = "replay"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        for k, got, worst in flagged_verifiers(ctx, spread_block):
            yield ctx.finding(
                self.code,
                k,
                f"the block moves every token alike: 80% of its distance lies on {got.lowest:.0%} or more of the "
                f"tokens on {got.count}/{got.total} completions (threshold {SHARE_MAX:.0%}, uniform credit 80%; "
                f"{measured_with(ctx)}); {look(ctx, worst.example_id)}; fix: say only what this reward checks, "
                f"about the part of the answer it concerns, not the task or the whole answer",
                key="moves-everything",
            )
