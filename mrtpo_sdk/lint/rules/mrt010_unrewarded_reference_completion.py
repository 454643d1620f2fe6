"""MRT010 unrewarded-reference-completion."""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Finding, Rule, TaskContext


class UnrewardedReferenceCompletion(Rule):
    """## What it does
    Scores the task's reference completion (``Task(reference=...)``) with every verifier and flags a verifier
    that gives it less than full reward (1.0, or the highest reward that verifier gave on any probe when that is
    above 1).

    ## Why is this bad?
    The reference completion is the policy's target format and answer: the embedded default policy is
    warm-started on it, and the linter builds its probes from it. If a verifier does not give it full reward,
    the prompt, the rewards and the reference disagree: the format verifier expects another fence than the
    reference uses, the instruction-following reference misses one of the example's constraints, or the BFCL
    reference call fails the call checker. Training then pushes the policy away from its own target.

    ## Example
    ```python
    def reference(example):
        return example.query                            # the format verifier wants a ```sql fence

    def reference(example):                              # BFCL: the checker expects <tool_call> tags
        return json.dumps(example.ground_truth)
    ```

    ## Use instead
    ```python
    def reference(example):
        return f"```sql\\n{example.query}\\n```"

    def reference(example):
        return f"<tool_call>{json.dumps(example.ground_truth)}</tool_call>"
    ```

    For instruction following, write (or pick) a reference response that satisfies every constraint of the
    example.

    ## References
    - `docs/writing-blocks.md`, "The rules", rules 5 and 6: references in the policy's form; prompt,
      rewards and blocks consistent.
    - `mrtpo_sdk.task.Task`: ``reference`` is "a reference completion in the policy's output format".
    """

    code = "MRT010"
    name = "unrewarded-reference-completion"
    summary = "the task's reference completion does not earn full reward from a verifier"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        for k in range(len(ctx.verifiers)):
            full = ctx.full_reward(k)
            if full is None:
                continue
            for i in range(len(ctx.examples)):
                p = ctx.reference_probe(i)
                if p is None:
                    continue
                r = ctx.result(i, p, k)
                if r is not None and r.reward < full - 1e-9:
                    yield ctx.finding(
                        self.code,
                        k,
                        f"the task's reference completion earns {r.reward:g} from this verifier "
                        f"(full reward is {full:g}); the reference, the prompt and the verifier disagree",
                        example=i,
                        probe="reference",
                        key="unrewarded",
                    )
