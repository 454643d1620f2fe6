"""MRT009 verifier-error."""

from __future__ import annotations

from collections.abc import Iterator

from ...errors import VerifierContractError, VerifierError
from ..model import Finding, Rule, TaskContext


class VerifierErrorRule(Rule):
    """## What it does
    Flags a verifier that raises, or breaks the verifier contract (several rewards, a non-finite reward, a
    non-string block), on one of the probe completions: the reference completion, the empty string, the
    reference with its fences/tags stripped, its first half, another example's reference, or a probe the task
    file declares (``lint_probes(example)`` / ``PROBES``). The finding names the verifier, the example and the
    probe; the linter goes on with the other verifiers and files.

    ## Why is this bad?
    Model output is untrusted: early in training the policy produces empty answers, unclosed fences and
    answers for the wrong question. A verifier that raises on them stops the training run (the trainer surfaces
    verifier errors instead of scoring them 0), and a verifier that returns ``None`` for "wrong" hides a
    genuine zero reward from the group statistics.

    ## Example
    ```python
    @verifier(kind="feedback")
    def executes(example, completion):
        query = completion.split("```sql")[1].split("```")[0]     # IndexError on an answer without a fence
        run = execute_sql(example.db_path, query)
        return Result(float(run.ok), run.error)

    @verifier(kind="reference")                                   # BFCL tool calls
    def call_match(example, completion):
        call = json.loads(completion)                             # JSONDecodeError on free text
        return Result(float(call == example.ground_truth), render_call(example.ground_truth))
    ```

    Instruction following: a language constraint calling ``langdetect.detect(completion)``, which raises on an
    empty or digits-only response.

    ## Use instead
    Parse defensively and score a malformed answer as a genuine 0:

    ```python
    @verifier(kind="feedback")
    def executes(example, completion):
        answer = extract_sql(completion)            # never raises
        if not answer.ok:
            return Result(0.0, "")
        run = execute_sql(example.db_path, answer.query)
        return Result(float(run.ok), run.error)
    ```

    ## References
    - `mrtpo_sdk.verifier`: the verifier contract (one finite reward, one ``str`` block, or ``None`` when the
      reward does not apply).
    - The MRTPO paper (Zhai et al., arXiv:2610.21439): each verifier returns a reward and a block for every response.
    """

    code = "MRT009"
    name = "verifier-error"
    summary = "a verifier raises or breaks its contract on a probe completion"

    def check(self, ctx: TaskContext) -> Iterator[Finding]:
        names = ctx.task.verifier_names
        for i, rows in enumerate(ctx.outcomes):
            for p, row in enumerate(rows):
                for k, out in enumerate(row):
                    if isinstance(out, VerifierError):
                        yield self._finding(ctx, k, out, i, ctx.probes[i][p].label)
        for exc in ctx.extra_errors:
            if exc.verifier in names:
                i = ctx.ids.index(exc.example_id) if exc.example_id in ctx.ids else None
                yield self._finding(ctx, names.index(exc.verifier), exc, i, getattr(exc, "probe", None))

    def _finding(self, ctx: TaskContext, k: int, exc: VerifierError, i: int | None, probe: str | None) -> Finding:
        cause = exc.__cause__
        if isinstance(exc, VerifierContractError) or cause is None:
            msg = str(exc)
            prefix = f"task {exc.task!r}, verifier {exc.verifier!r}, example {exc.example_id!r}: "
            msg = msg[len(prefix) :] if msg.startswith(prefix) else msg
            return ctx.finding(
                self.code,
                k,
                f"on the {probe} probe the verifier {msg}",
                example=i,
                probe=probe,
                key=f"contract:{msg[:40]}",
            )
        text = " ".join(str(cause).split())[:160]
        return ctx.finding(
            self.code,
            k,
            f"the verifier raises {type(cause).__name__}{': ' + text if text else ''} on the {probe} "
            f"probe; model output "
            f"is untrusted, so parse defensively and score a malformed answer as a genuine 0",
            example=i,
            probe=probe,
            key=f"raises:{type(cause).__name__}",
        )
