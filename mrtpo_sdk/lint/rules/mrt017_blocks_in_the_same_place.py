"""MRT017 blocks-in-the-same-place."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ...verifier import Result
from ..model import Finding, Rule, TaskContext
from ..replay import TOP_FRACTION, max_q, top_overlap
from ._replay import Q_MIN, is_most, look, measured_with

#: The share of one block's top tokens that are the other's top tokens above which two blocks are in one place.
OVERLAP_MAX = 0.8


@dataclass(frozen=True)
class SamePlace:
    """What MRT017 measured on a pair of verifiers: on ``count`` of ``total`` completions (those both blocks move)
    at least ``lowest`` of their top tokens are shared; ``worst`` indexes the completion sharing the most."""

    count: int
    total: int
    lowest: float
    worst: int


def same_place(
    rows_a: Sequence[Sequence[float] | None], rows_b: Sequence[Sequence[float] | None], threshold: float = OVERLAP_MAX
) -> SamePlace | None:
    """MRT017's distance test on two verifiers' ``q`` rows over the same completions (``None``: not replayed):
    among the completions both blocks move (``max q >= Q_MIN``), the top tokens (:data:`TOP_FRACTION`) overlap by
    at least ``threshold`` on most of them; ``None`` when they do not. (The rule also needs the two rewards to
    differ on some completion.)

    Raises:
        ValueError: the two lists cover different numbers of completions.
    """
    if len(rows_a) != len(rows_b):
        raise ValueError(
            f"the two verifiers' rows must cover the same completions, got {len(rows_a)} and {len(rows_b)}"
        )
    both = [
        (i, top_overlap(a, b))
        for i, (a, b) in enumerate(zip(rows_a, rows_b))
        if a is not None and b is not None and max_q(a) >= Q_MIN and max_q(b) >= Q_MIN
    ]
    high = [(i, o) for i, o in both if o >= threshold]
    if not is_most(len(high), len(both)):
        return None
    worst = max(high, key=lambda i_o: i_o[1])[0]
    return SamePlace(len(high), len(both), min(o for _, o in high), worst)


def differing_rewards(pairs: Sequence[tuple[float | None, float | None]]) -> int:
    """How many ``(reward_a, reward_b)`` pairs (two verifiers on one completion) differ; ``None`` is skipped."""
    return sum(1 for a, b in pairs if a is not None and b is not None and abs(a - b) > 1e-9)


class BlocksInTheSamePlace(Rule):
    """## What it does
    With `lint --replay`: flags two verifiers whose blocks move the same tokens while their rewards differ. On
    each replayed completion (see MRT015) both blocks move, it takes each block's top tokens (the 10% of the
    response's tokens with the largest JS distance) and the share of one's top tokens that are the other's; the
    rule fires when that share is 80% or more on most of those completions (more than half) and the two rewards
    differ on at least one completion (a replayed one or a lint probe: the empty answer, the truncated
    reference, ...). It is reported at the later verifier and names the other. Without `--replay` it finds
    nothing.

    ## Why is this bad?
    MRTPO separates rewards by where their blocks move the policy: each reward's advantage goes to the tokens its
    own block informs about. Two blocks that move the same tokens put both rewards' credit there, so a completion
    that satisfies one and fails the other is pushed up and down on the same tokens; the rewards cannot be told
    apart. It is what a block copied from another verifier, or two blocks that both restate the whole answer,
    usually do.

    ## Example
    ```python
    @verifier(kind="format")
    def call_format(example, completion):
        return Result(float(parse(completion) is not None), f"The call is {render(example['call'])}")

    @verifier(kind="reference")
    def call_match(example, completion):
        return Result(float(parse(completion) == example["call"]), f"The call is {render(example['call'])}")
    ```

    ## Use instead
    ```python
    @verifier(kind="format")
    def call_format(example, completion):
        return Result(float(parse(completion) is not None), "The call is one JSON object with name and arguments.")

    @verifier(kind="reference")
    def call_match(example, completion):
        return Result(float(parse(completion) == example["call"]), f"The call is {render(example['call'])}")
    ```
    Make each block speak only about the part of the answer its reward checks; when two rewards really check the
    same tokens, consider one verifier.

    ## References
    - The MRTPO paper (Zhai et al., arXiv:2610.21439), "Rules for writing a block": one block per reward, about
      that reward only.
    - MRT001 (merged-blocks) checks the blocks' text for the same fault; the threshold's calibration is in
      docs/writing-blocks.md.
    """

    code = "MRT017"
    name = "blocks-in-the-same-place"
    summary = "two verifiers' blocks move the same tokens while their rewards differ (`--replay` only)"
    checks = "replay"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        data = ctx.replay
        if data is None:
            return
        vs = ctx.verifiers
        for k in range(len(vs)):
            for j in range(k):
                if vs[k].weight == 0 or vs[j].weight == 0:
                    continue
                got = same_place([c.q[j] for c in data.completions], [c.q[k] for c in data.completions])
                if got is None:
                    continue
                pairs = [(c.rewards[j], c.rewards[k]) for c in data.completions]
                for rows in ctx.outcomes:
                    for row in rows:
                        a, b = row[j], row[k]
                        if isinstance(a, Result) and isinstance(b, Result):
                            pairs.append((a.reward, b.reward))
                differ = differing_rewards(pairs)
                if not differ:
                    continue  # the same reward twice: its blocks may well agree
                worst = data.completions[got.worst]
                yield ctx.finding(
                    self.code,
                    k,
                    f"the block moves the same tokens as {vs[j].name}'s: {got.lowest:.0%} or more of their top "
                    f"{TOP_FRACTION:.0%} tokens are shared on {got.count}/{got.total} completions (threshold "
                    f"{OVERLAP_MAX:.0%}; {measured_with(ctx)}) while the two rewards differ on {differ} "
                    f"completions, so their credit cannot be told apart; {look(ctx, worst.example_id)}; fix: make "
                    f"each block speak only about the part of the answer its reward checks (or merge the two "
                    f"verifiers)",
                    key=f"same-place:{vs[j].name}",
                )
