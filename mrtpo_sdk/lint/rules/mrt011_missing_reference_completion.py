"""MRT011 missing-reference-completion."""

from __future__ import annotations

from collections.abc import Iterator

from ..model import Finding, Rule, TaskContext


class MissingReferenceCompletion(Rule):
    """## What it does
    Flags a task that declares no ``reference=fn(example) -> completion``.

    ## Why is this bad?
    Without a reference completion the linter cannot build its probes (the reference and its corruptions), so
    MRT002, MRT004, MRT005, MRT007 and MRT010 check nothing; the embedded default policy cannot be
    warm-started either. Every task in the paper has one: the gold SQL query in its ```` ```sql ```` fence, a
    response that satisfies every instruction constraint, the ground-truth tool call in the policy's call
    format.

    ## Example
    ```python
    task = Task(name="bfcl", examples=examples, prompt=prompt, verifiers=[call_format, call_match])
    ```

    ## Use instead
    ```python
    def reference(example):
        return f"<tool_call>{json.dumps(example.ground_truth)}</tool_call>"

    task = Task(name="bfcl", examples=examples, prompt=prompt, verifiers=[call_format, call_match],
                reference=reference)
    ```

    ## References
    - `mrtpo_sdk.task.Task`: ``reference``, "used to warm-start the embedded default policy and by lint".
    - `docs/writing-blocks.md`, "The rules", rule 5.
    """

    code = "MRT011"
    name = "missing-reference-completion"
    summary = "the task declares no reference completion"
    kinds = "the task"
    checks = "static"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        if ctx.task.reference is None:
            yield ctx.finding(
                self.code,
                None,
                f"task {ctx.task.name!r} declares no reference=fn(example) -> completion; most dynamic checks need one",
                key="missing",
            )
