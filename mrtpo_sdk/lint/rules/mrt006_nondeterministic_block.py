"""MRT006 nondeterministic-block."""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Finding, Rule, TaskContext
from ...verifier import Result
from ._common import fmt


class NondeterministicBlock(Rule):
    """## What it does
    Runs every verifier twice on every (example, probe completion) pair (the second pass in reverse order) and
    flags a verifier whose reward or block differs between the two calls. It also flags a rollout prompt
    ``P_0`` that differs between two calls for the same example.

    ## Why is this bad?
    The reward and the block of a response must be a function of the example and the response. The replay
    builds ``P_all`` and ``P_\\k`` from the blocks computed when the group was scored; a block that depends on
    time, randomness, a counter or a cache's state gives the replay a context that is not the one the reward
    was computed with, and makes runs irreproducible. A prompt that changes between calls breaks spec rule 6:
    the replay must use the rollout prompt exactly as sampled.

    ## Example
    ```python
    @verifier(kind="feedback")
    def executes(example, completion):
        run = execute_sql(example.db_path, extract_sql(completion).query)
        return Result(float(run.ok), f"{run.error} (took {run.seconds:.3f} s)")  # timing changes per call

    def prompt(example):                                                         # instruction following
        random.shuffle(example.constraints)                                      # order changes per call
        return " ".join(c.text for c in example.constraints)
    ```

    ## Use instead
    ```python
    @verifier(kind="feedback")
    def executes(example, completion):
        run = execute_sql(example.db_path, extract_sql(completion).query)
        return Result(float(run.ok), run.error)

    def prompt(example):
        return " ".join(c.text for c in example.constraints)                     # fixed order from the data
    ```

    For BFCL, sort argument names when rendering a reference call instead of relying on set iteration order.

    ## References
    - `docs/writing-blocks.md`, "The rules", rule 6: prompt, rewards and blocks consistent; the replay
      uses the rollout prompt and the response exactly as sampled.
    - `docs/algorithm.md` §3 (replay contexts): ``P_all`` and ``P_\\k`` are built from the blocks of the scored response.
    """

    code = "MRT006"
    name = "nondeterministic-block"
    summary = "a second call gives a different block, reward or prompt"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        for i, (a, b) in enumerate(zip(ctx.prompts, ctx.prompts2)):
            if a != b:
                yield ctx.finding(
                    self.code,
                    None,
                    "the rollout prompt P_0 differs between two calls for the same example; "
                    "build it deterministically from the example",
                    example=i,
                    key="prompt",
                )
        for i, rows in enumerate(ctx.outcomes):
            for p, row in enumerate(rows):
                for k, first in enumerate(row):
                    second = ctx.repeats[i][p][k]
                    label = ctx.probes[i][p].label
                    if isinstance(first, Result) and isinstance(second, Result):
                        if first.block != second.block:
                            yield ctx.finding(
                                self.code,
                                k,
                                f"a second call gives a different block ({_differ(first.block, second.block)}); "
                                f"the block must depend only on the example and the completion",
                                example=i,
                                probe=label,
                                key="block",
                            )
                        elif first.reward != second.reward:
                            yield ctx.finding(
                                self.code,
                                k,
                                f"a second call gives a different reward ({first.reward:g} then "
                                f"{second.reward:g}); the reward must depend only on the example and the completion",
                                example=i,
                                probe=label,
                                key="reward",
                            )
                    elif (first is None) != (second is None) or isinstance(first, Result) != isinstance(second, Result):
                        yield ctx.finding(
                            self.code,
                            k,
                            "a second call gives a different outcome (a result, None, or an error); "
                            "the verifier must depend only on the example and the completion",
                            example=i,
                            probe=label,
                            key="outcome",
                        )


def _differ(a: str, b: str) -> str:
    """Where two blocks differ: ``'…(check 1)' then '…(check 41)'``."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    start = max(0, n - 10)
    lead = "…" if start else ""
    return f"{fmt(lead + a[start:], 40)} then {fmt(lead + b[start:], 40)}"
