"""MRT014 constant-reward."""

from __future__ import annotations

from collections.abc import Iterator

from ...authoring.verifier_checks import constant_reward_message, probe_description
from ...verifier import Result
from ..model import Finding, Rule, TaskContext


class ConstantReward(Rule):
    """## What it does
    Flags a verifier that gives the same reward to every probe completion of an example: the reference
    completion, the empty string, the reference with its fences/tags stripped, its first half, another example's
    reference and the probes the task file declares (``lint_probes(example)`` / ``PROBES``). It is a warning:
    the verifier may be right and the probes too few to show it (declare a probe that it scores differently), but
    usually it reads only the example, or its condition is always true. A verifier with ``weight=0`` (logged, not
    rewarded) is exempt. ``mrtpo-sdk check`` prints the same warning.

    ## Why is this bad?
    MRTPO, GDPO and GRPO learn from the differences between the rewards of one prompt's completions (each
    reward is normalised within its group). A reward that does not change with the completion gives every
    completion the same advantage, 0: it never teaches anything, and the run spends replay time on it.

    ## Example
    ```python
    @verifier(kind="format")
    def sql_format(example, completion):
        ok = "```sql" in example.query                        # reads the example, not the completion
        return Result(float(ok), "The answer is one SQL query in a ```sql fence.")

    @verifier(kind="constraint")                             # instruction following
    def no_commas(example, completion):
        return Result(1.0, "Do not use any commas.")           # always full reward
    ```

    ## Use instead
    ```python
    @verifier(kind="format")
    def sql_format(example, completion):
        ok = extract_sql(completion).ok
        return Result(float(ok), "The answer is one SQL query in a ```sql fence.")

    @verifier(kind="constraint")
    def no_commas(example, completion):
        return Result(float("," not in completion), "Do not use any commas.")
    ```

    ## References
    - The MRTPO paper (Zhai et al., arXiv:2610.21439): each reward's advantage is computed within its group of
      completions (as in GDPO), so only a reward that varies between completions carries a learning signal.
    - `mrtpo_sdk.authoring.verifier_checks`: the check that ``lint``, ``check`` and ``train`` share.
    """

    code = "MRT014"
    name = "constant-reward"
    summary = "a verifier gives the same reward to every probe completion (a warning)"
    severity = "warning"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        labels = probe_description([p.label for row in ctx.probes for p in row])
        for k, v in enumerate(ctx.verifiers):
            if v.weight == 0:
                continue
            rewards = [
                [o.reward for row in rows for o in [row[k]] if isinstance(o, Result)] for rows in ctx.outcomes
            ]
            msg = constant_reward_message(rewards, labels)
            if msg:
                yield ctx.finding(self.code, k, f"the verifier {msg}", key="constant")
